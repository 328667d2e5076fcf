#include "table/block.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "src/base/dbformat.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"

namespace shale {

Block::Block(BlockContents contents, BlockValueFormat values)
    : data_(contents.data.data()),
      values_(values),
      size_(contents.data.size()),
      contents_(std::move(contents)) {
  // Moving contents moved the owner of the bytes, not the bytes: data_ still points at them.
  if (size_ < sizeof(uint32_t)) {
    malformed_ = true;
    return;
  }
  num_restarts_ = DecodeFixed32(data_ + size_ - sizeof(uint32_t));
  const size_t max_restarts = (size_ - sizeof(uint32_t)) / sizeof(uint32_t);
  if (num_restarts_ == 0 || num_restarts_ > max_restarts) {
    malformed_ = true;
    return;
  }
  restart_offset_ = static_cast<uint32_t>(size_ - (1 + num_restarts_) * sizeof(uint32_t));
}

void Block::InitIterator(const Comparator* cmp, BlockIter* iter) const {
  if (malformed_) {
    iter->InitCorrupt("restart array does not fit in the block");
  } else {
    iter->Init(cmp, data_, restart_offset_, num_restarts_, values_,
               prefix_index_.built() ? &prefix_index_ : nullptr);
  }
}

void Block::BuildRestartPrefixIndex(bool user_keys) {
  if (malformed_ || prefix_index_.built()) return;
  BlockIter iter;
  iter.Init(nullptr, data_, restart_offset_, num_restarts_, values_);
  // The user key of a restart key, or false when it is too short to hold an internal key's tag.
  const auto user_key_of = [user_keys](const Slice& key, Slice* user) {
    if (user_keys) {
      *user = key;
      return true;
    }
    if (key.size() < 8) return false;
    *user = ExtractUserKey(key);
    return true;
  };
  Slice first, last, first_user, last_user;
  if (!iter.RestartKey(0, &first) || !iter.RestartKey(num_restarts_ - 1, &last) ||
      !user_key_of(first, &first_user) || !user_key_of(last, &last_user)) {
    return;
  }
  prefix_index_.Start(first_user, last_user, num_restarts_, /*internal_keys=*/!user_keys);
  Slice previous;
  for (uint32_t i = 0; i < num_restarts_; i++) {
    Slice key, user;
    if (!iter.RestartKey(i, &key) || !user_key_of(key, &user)) {
      prefix_index_.Clear();
      return;
    }
    // Restart keys out of order (a damaged block whose checksum still matched): no index;
    // seeks search the keys themselves. A key above the last is caught before Add, which needs
    // every key between the first and the last.
    int c = -1;
    if (i > 0) {
      c = user_keys ? previous.compare(user) : ExtractUserKey(previous).compare(user);
      if (c == 0 && !user_keys && ExtractTag(previous) < ExtractTag(key)) c = 1;
    }
    if (c > 0 || last_user.compare(user) < 0) {
      prefix_index_.Clear();
      return;
    }
    previous = key;
    prefix_index_.Add(user, iter.RestartPoint(i));
  }
}

void Block::PrefetchSeek(const Slice& target) const {
  if (malformed_) return;
  if (prefix_index_.built() && prefix_index_.has_offsets()) {
    uint32_t lo, hi;
    prefix_index_.Bounds(target, &lo, &hi);
    __builtin_prefetch(data_ + prefix_index_.Offset(lo > 0 ? lo - 1 : 0));
  } else {
    __builtin_prefetch(data_ + restart_offset_);
  }
}

std::unique_ptr<BlockIter> Block::NewIterator(const Comparator* cmp) const {
  auto iter = std::make_unique<BlockIter>();
  InitIterator(cmp, iter.get());
  return iter;
}

void BlockIter::Init(const Comparator* cmp, const char* data, uint32_t restarts,
                     uint32_t num_restarts, BlockValueFormat values,
                     const RestartPrefixIndex* prefix_index) {
  cmp_ = cmp;
  values_ = values;
  prefix_index_ = prefix_index;
  SHALE_ASSERT(prefix_index == nullptr || prefix_index->size() == num_restarts);
  restart_copies_ =
      prefix_index != nullptr && prefix_index->has_offsets() ? prefix_index->offsets() : nullptr;
  data_ = data;
  restarts_ = restarts;
  num_restarts_ = num_restarts;
  current_ = restarts_;
  next_ = restarts_;
  restart_index_ = num_restarts_;
  key_ = Slice();
  value_ = Slice();
  status_ = Status::OK();
}

void BlockIter::InitCorrupt(const char* what) {
  Init(nullptr, nullptr, 0, 0, BlockValueFormat::kSized);
  status_ = Status::Corruption(fmt::format("malformed block: {}", what));
}

void BlockIter::Corrupt(const char* what) {
  status_ =
      Status::Corruption(fmt::format("malformed block: {} (entry at offset {})", what, next_));
  current_ = restarts_;
  next_ = restarts_;
  restart_index_ = num_restarts_;
  key_ = Slice();
  value_ = Slice();
}

uint32_t BlockIter::RestartPoint(uint32_t index) const {
  // A small block's index holds copies of its restart array: no load from the block's end.
  if (restart_copies_ != nullptr) return restart_copies_[index];
  return DecodeFixed32(data_ + restarts_ + index * sizeof(uint32_t));
}

namespace {

// Decodes an entry header; nullptr when it is malformed or does not fit before limit.
inline const char* DecodeSizedEntry(const char* p, const char* limit, uint32_t* shared,
                                    uint32_t* unshared, uint32_t* value_length) {
  if (limit - p < 3) return nullptr;
  *shared = static_cast<uint8_t>(p[0]);
  *unshared = static_cast<uint8_t>(p[1]);
  *value_length = static_cast<uint8_t>(p[2]);
  if ((*shared | *unshared | *value_length) < 128) {
    p += 3;  // the common case: each length fits in one byte
  } else {
    if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, unshared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, value_length)) == nullptr) return nullptr;
  }
  if (static_cast<uint64_t>(*unshared) + *value_length > static_cast<uint64_t>(limit - p)) {
    return nullptr;
  }
  return p;
}

// The byte past the varint64 at p, or nullptr when it runs to limit or past ten bytes.
inline const char* SkipVarint64(const char* p, const char* limit) {
  const char* const end = std::min(limit, p + kMaxVarint64Length);
  for (; p < end; p++) {
    if ((static_cast<unsigned char>(*p) & 0x80) == 0) return p + 1;
  }
  return nullptr;
}

// As DecodeSizedEntry, for an entry whose value is a BlockHandle: its length is where the
// handle's two varints end.
inline const char* DecodeHandleEntry(const char* p, const char* limit, uint32_t* shared,
                                     uint32_t* unshared, uint32_t* value_length) {
  if (limit - p < 2) return nullptr;
  *shared = static_cast<uint8_t>(p[0]);
  *unshared = static_cast<uint8_t>(p[1]);
  if ((*shared | *unshared) < 128) {
    p += 2;
  } else {
    if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, unshared)) == nullptr) return nullptr;
  }
  if (*unshared > static_cast<uint64_t>(limit - p)) return nullptr;
  const char* const value = p + *unshared;
  const char* end = SkipVarint64(value, limit);
  if (end == nullptr || (end = SkipVarint64(end, limit)) == nullptr) return nullptr;
  *value_length = static_cast<uint32_t>(end - value);
  return p;
}

inline const char* DecodeEntry(BlockValueFormat values, const char* p, const char* limit,
                               uint32_t* shared, uint32_t* unshared, uint32_t* value_length) {
  return values == BlockValueFormat::kSized
             ? DecodeSizedEntry(p, limit, shared, unshared, value_length)
             : DecodeHandleEntry(p, limit, shared, unshared, value_length);
}

}  // namespace

bool BlockIter::RestartKey(uint32_t index, Slice* key) {
  const uint32_t offset = RestartPoint(index);
  if (offset >= restarts_) {
    Corrupt("restart point past the entries");
    return false;
  }
  uint32_t shared, unshared, value_length;
  const char* p =
      DecodeEntry(values_, data_ + offset, data_ + restarts_, &shared, &unshared, &value_length);
  if (p == nullptr || shared != 0) {
    Corrupt(p == nullptr ? "bad entry at a restart point" : "restart entry shares a prefix");
    return false;
  }
  *key = Slice(p, unshared);
  return true;
}

void BlockIter::SeekToRestartPoint(uint32_t index) {
  key_ = Slice();
  key_buf_.clear();
  restart_index_ = index;
  next_ = RestartPoint(index);
  if (next_ > restarts_) Corrupt("restart point past the entries");
}

bool BlockIter::ParseNextKey() {
  current_ = next_;
  if (current_ >= restarts_) {
    current_ = restarts_;
    restart_index_ = num_restarts_;
    return false;
  }
  uint32_t shared, unshared, value_length;
  const char* p =
      DecodeEntry(values_, data_ + current_, data_ + restarts_, &shared, &unshared, &value_length);
  if (p == nullptr) {
    Corrupt("entry runs past the end of the block");
    return false;
  }
  if (shared > key_.size()) {
    Corrupt("shared prefix longer than the previous key");
    return false;
  }
  if (shared == 0) {
    key_ = Slice(p, unshared);  // stored whole: no copy
  } else {
    if (key_.data() != key_buf_.data()) {
      key_buf_.assign(key_.data(), shared);
    } else {
      key_buf_.resize(shared);
    }
    key_buf_.append(p, unshared);
    key_ = Slice(key_buf_);
  }
  value_ = Slice(p + unshared, value_length);
  next_ = static_cast<uint32_t>(p + unshared + value_length - data_);
  return true;
}

void BlockIter::SeekToFirst() {
  if (!status_.ok() || data_ == nullptr) return;
  SeekToRestartPoint(0);
  if (status_.ok()) ParseNextKey();
}

void BlockIter::SeekToLast() {
  if (!status_.ok() || data_ == nullptr) return;
  SeekToRestartPoint(num_restarts_ - 1);
  while (status_.ok() && ParseNextKey() && next_ < restarts_) {
  }
}

void BlockIter::Seek(const Slice& target) {
  if (!status_.ok() || data_ == nullptr) return;
  // The last restart point whose key is < target; the answer is at or after it.
  if (prefix_index_ != nullptr) {
    uint32_t restart;
    if (SearchPrefixIndex(target, &restart)) SeekFromRestart(restart, target);
    return;
  }
  // One target: the plain search, without FindRestarts' bookkeeping for many.
  uint32_t left = 0;
  uint32_t right = num_restarts_ - 1;
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    Slice mid_key;
    if (!RestartKey(mid, &mid_key)) return;
    if (cmp_->Compare(mid_key, target) < 0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  SeekFromRestart(left, target);
}

bool BlockIter::FindRestarts(const Slice* targets, size_t n, uint32_t* restarts) {
  if (!status_.ok() || data_ == nullptr) return false;
  if constexpr (kInvariantChecks) {
    for (size_t k = 1; k < n; k++) SHALE_ASSERT(cmp_->Compare(targets[k - 1], targets[k]) <= 0);
  }
  // For each target, the last restart point whose key is < target (a seek's answer is at or
  // after it).
  if (prefix_index_ != nullptr) {
    // The index's array is small and contiguous: each search stays within it and the CPU's
    // caches, with nothing to overlap.
    for (size_t k = 0; k < n; k++) {
      if (!SearchPrefixIndex(targets[k], &restarts[k])) return false;
    }
    return true;
  }
  // Without it, a chunk of targets at a time. That restart point ascends with the target, so
  // the chunk's anchors (every kAnchorEvery-th target and the last) are searched over the
  // whole block first, and every other target only between the answers of the anchors around
  // it: targets that share a data block (a dense batch) then cost next to nothing.
  constexpr size_t kAnchorEvery = 8;
  uint32_t left[kSearchChunk], right[kSearchChunk];
  size_t anchors[kSearchChunk / kAnchorEvery + 1];
  size_t others[kSearchChunk];
  for (size_t base = 0; base < n; base += kSearchChunk) {
    const size_t m = std::min(kSearchChunk, n - base);
    size_t num_anchors = 0;
    for (size_t k = 0; k < m; k += kAnchorEvery) anchors[num_anchors++] = k;
    if (anchors[num_anchors - 1] != m - 1) anchors[num_anchors++] = m - 1;
    for (size_t a = 0; a < num_anchors; a++) {
      left[anchors[a]] = 0;
      right[anchors[a]] = num_restarts_ - 1;
    }
    if (!SearchRestarts(targets + base, anchors, num_anchors, left, right)) return false;
    size_t num_others = 0;
    for (size_t a = 0; a + 1 < num_anchors; a++) {
      for (size_t k = anchors[a] + 1; k < anchors[a + 1]; k++) {
        left[k] = left[anchors[a]];
        right[k] = left[anchors[a + 1]];
        others[num_others++] = k;
      }
    }
    if (!SearchRestarts(targets + base, others, num_others, left, right)) return false;
    for (size_t k = 0; k < m; k++) restarts[base + k] = left[k];
  }
  return true;
}

bool BlockIter::SearchRestarts(const Slice* targets, const size_t* which, size_t count,
                               uint32_t* left, uint32_t* right) {
  // Binary searches run side by side: each round first asks for the restart offsets every
  // search probes next, then for the entries they point at, and only then compares. One
  // search's probe waits on two dependent memory loads; here the loads of all overlap.
  uint32_t mid[kSearchChunk];
  for (bool searching = true; searching;) {
    searching = false;
    for (size_t i = 0; i < count; i++) {
      const size_t k = which[i];
      if (left[k] >= right[k]) continue;
      mid[k] = left[k] + (right[k] - left[k] + 1) / 2;
      __builtin_prefetch(data_ + restarts_ + mid[k] * sizeof(uint32_t));
    }
    for (size_t i = 0; i < count; i++) {
      const size_t k = which[i];
      if (left[k] >= right[k]) continue;
      const uint32_t offset = RestartPoint(mid[k]);
      if (offset < restarts_) __builtin_prefetch(data_ + offset);
    }
    for (size_t i = 0; i < count; i++) {
      const size_t k = which[i];
      if (left[k] >= right[k]) continue;
      Slice mid_key;
      if (!RestartKey(mid[k], &mid_key)) return false;
      if (cmp_->Compare(mid_key, targets[k]) < 0) {
        left[k] = mid[k];
      } else {
        right[k] = mid[k] - 1;
      }
      searching |= left[k] < right[k];
    }
  }
  return true;
}

bool BlockIter::SearchPrefixIndex(const Slice& target, uint32_t* restart) {
  uint32_t lo, hi;
  prefix_index_->Bounds(target, &lo, &hi);
  // Keys [0, lo) are below target; of the ties [lo, hi), find the first not below it.
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    Slice mid_key;
    if (!RestartKey(mid, &mid_key)) return false;
    if (cmp_->Compare(mid_key, target) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *restart = lo > 0 ? lo - 1 : 0;
  return true;
}

void BlockIter::SeekFromRestart(uint32_t restart, const Slice& target) {
  if (!status_.ok() || data_ == nullptr) return;
  if (restart >= num_restarts_) {
    Corrupt("seek from a restart point past the last");
    return;
  }
  SeekToRestartPoint(restart);
  if (!status_.ok()) return;
  PrefetchRestartInterval(restart);
  while (ParseNextKey()) {
    if (cmp_->Compare(key_, target) >= 0) return;
  }
}

void BlockIter::PrefetchRestartInterval(uint32_t index) const {
  // The linear scan decodes one entry after another, each address known only once the entry
  // before it is decoded; asking for the interval's cache lines up front lets their loads
  // overlap instead of queueing behind each other.
  constexpr uint32_t kMaxBytes = 32 * kCacheLineBytes;
  const uint32_t begin = next_;
  const uint32_t end = index + 1 < num_restarts_ ? RestartPoint(index + 1) : restarts_;
  if (end <= begin) return;
  PrefetchLines(data_ + begin, std::min(end - begin, kMaxBytes));
}

void BlockIter::SeekForPrev(const Slice& target) {
  if (!status_.ok() || data_ == nullptr) return;
  Seek(target);
  if (!Valid()) {
    if (status_.ok()) SeekToLast();
    return;
  }
  while (Valid() && cmp_->Compare(key_, target) > 0) Prev();
}

void BlockIter::Next() {
  if (!Valid()) return;
  ParseNextKey();
}

void BlockIter::Prev() {
  if (!Valid()) return;
  const uint32_t original = current_;
  // The last restart point before the current entry (binary search: restart offsets ascend).
  uint32_t left = 0;
  uint32_t right = num_restarts_;  // first restart at or after original
  while (left < right) {
    const uint32_t mid = left + (right - left) / 2;
    if (RestartPoint(mid) < original) {
      left = mid + 1;
    } else {
      right = mid;
    }
  }
  if (left == 0) {
    // Before the first entry.
    current_ = restarts_;
    restart_index_ = num_restarts_;
    return;
  }
  SeekToRestartPoint(left - 1);
  if (!status_.ok()) return;
  // Scan to the entry just before original.
  while (ParseNextKey() && next_ < original) {
  }
}

}  // namespace shale
