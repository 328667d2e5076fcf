#include "memtable/memtable.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "shale/pinnable_slice.h"
#include "src/base/get_context.h"
#include "src/monitoring/perf_context_imp.h"
#include "src/util/bytewise.h"
#include "src/util/coding.h"
#include "src/util/hash.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

// The internal key of an entry (or of a memtable lookup key): varint32 length, then bytes.
// Entries were written by Add, so the varint is trusted.
inline Slice DecodeLengthPrefixed(const char* p) {
  uint32_t len;
  const char* q = GetVarint32Ptr(p, p + kMaxVarint32Length, &len);
  return Slice(q, len);
}

// The value of an entry, from its value_length (see the entry format in memtable.h).
inline Slice DecodeValue(const char* p) {
  uint32_t len;
  const char* q = GetVarint32Ptr(p, p + kMaxVarint32Length, &len);
  if (len <= MemTable::kMaxInlineValue) return Slice(q, len);
  const char* out_of_line;
  std::memcpy(&out_of_line, q, sizeof(out_of_line));
  return Slice(out_of_line, len);
}

}  // namespace

int MemTable::KeyComparator::operator()(const char* a, const char* b) const {
  Slice ka = DecodeLengthPrefixed(a);
  Slice kb = DecodeLengthPrefixed(b);
  if (bytewise) {
    Slice ua(ka.data(), ka.size() - 8);
    Slice ub(kb.data(), kb.size() - 8);
    int r = CompareBytewise(ua, ub);
    if (r != 0) return r;
    uint64_t ta = DecodeFixed64(ka.data() + ka.size() - 8);
    uint64_t tb = DecodeFixed64(kb.data() + kb.size() - 8);
    return ta > tb ? -1 : (ta < tb ? +1 : 0);
  }
  return comparator->Compare(ka, kb);
}

size_t MemTable::ArenaBlockSizeFor(size_t write_buffer_size) {
  if (write_buffer_size >= (128 << 20)) return Arena::kHugePageSize;
  return std::clamp<size_t>(write_buffer_size / 8, 4 << 10, 1 << 20) & ~size_t{15};
}

std::shared_ptr<ArenaBlockPool> MemTable::NewBlockPool(size_t arena_block_size, size_t max_bytes) {
  return std::make_shared<ArenaBlockPool>(Arena::BlockSizeFor(arena_block_size),
                                          arena_block_size >= Arena::kHugePageSize, max_bytes);
}

MemTable::MemTable(const InternalKeyComparator& comparator, size_t arena_block_size,
                   size_t bloom_bytes, std::shared_ptr<const SliceTransform> prefix_extractor,
                   std::shared_ptr<ArenaBlockPool> block_pool)
    : comparator_(comparator),
      bytewise_(comparator.user_comparator()->IsBytewise()),
      arena_(arena_block_size, block_pool),
      value_arena_(arena_block_size, std::move(block_pool)),
      table_(KeyComparator{&comparator_, comparator.user_comparator()->IsBytewise()}, &arena_),
      prefix_extractor_(bloom_bytes > 0 ? std::move(prefix_extractor) : nullptr) {
  if (bloom_bytes > 0) {
    const size_t size = MemTableBloom::RoundedSize(bloom_bytes);
    char* mem = arena_.AllocateAligned(size + MemTableBloom::kLineBytes);
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(mem) + MemTableBloom::kLineBytes - 1) &
                              ~uintptr_t{MemTableBloom::kLineBytes - 1};
    bloom_ = std::make_unique<MemTableBloom>(reinterpret_cast<char*>(aligned), size);
  }
}

void MemTable::Add(SequenceNumber seq, ValueType type, const Slice& key, const Slice& value) {
  const uint32_t internal_key_size = static_cast<uint32_t>(key.size() + 8);
  const bool inline_value = value.size() <= kMaxInlineValue;
  const char* out_of_line = nullptr;
  if (!inline_value) {
    char* bytes = value_arena_.Allocate(value.size());
    std::memcpy(bytes, value.data(), value.size());
    out_of_line = bytes;  // published with the entry by Insert
  }
  const size_t value_ref_size = inline_value ? value.size() : sizeof(out_of_line);
  const size_t encoded_len = VarintLength(internal_key_size) + internal_key_size +
                             VarintLength(value.size()) + value_ref_size;
  if (bloom_ != nullptr) {  // before the entry can be seen
    bloom_->Add(Hash64(key));
    if (prefix_extractor_ != nullptr && prefix_extractor_->InDomain(key)) {
      bloom_->Add(Hash64(prefix_extractor_->Transform(key)));
    }
  }
  char* buf = table_.AllocateKey(encoded_len);
  char* p = EncodeVarint32(buf, internal_key_size);
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  EncodeFixed64(p, PackSequenceAndType(seq, type));
  p += 8;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  if (inline_value) {
    if (!value.empty()) std::memcpy(p, value.data(), value.size());
  } else {
    std::memcpy(p, &out_of_line, sizeof(out_of_line));
  }
  SHALE_ASSERT(p + value_ref_size == buf + encoded_len);
  table_.Insert(buf);
  num_entries_.fetch_add(1, std::memory_order_relaxed);
  if (IsDeletion(type)) num_deletes_.fetch_add(1, std::memory_order_relaxed);
}

void MemTable::PinInto(Cleanable* target) {
  Ref();
  target->RegisterCleanup([](void* arg, void*) { static_cast<MemTable*>(arg)->Unref(); }, this,
                          nullptr);
}

void MemTable::AddRangeDeletion(SequenceNumber seq, const Slice& begin, const Slice& end) {
  if (comparator_.user_comparator()->Compare(begin, end) >= 0) return;  // covers nothing
  {
    MutexLock l(&range_del_mu_);
    range_deletions_.push_back({begin.ToString(), end.ToString(), seq});
    range_del_list_.store(nullptr);
  }
  range_deletion_bytes_.fetch_add(begin.size() + end.size() + sizeof(RangeTombstone),
                                  std::memory_order_relaxed);
  num_entries_.fetch_add(1, std::memory_order_relaxed);
  num_range_deletions_.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<const FragmentedRangeTombstoneList> MemTable::RangeTombstones() const {
  if (num_range_deletions() == 0) return nullptr;
  if (auto list = range_del_list_.load(); list != nullptr) return list;
  MutexLock l(&range_del_mu_);
  auto list = range_del_list_.load();
  if (list == nullptr) {
    // AddRangeDeletion leaves empty ranges out: the list has a fragment.
    list = std::make_shared<const FragmentedRangeTombstoneList>(comparator_.user_comparator(),
                                                                range_deletions_);
    range_del_list_.store(list);
  }
  return list;
}

bool MemTable::MayContain(const Slice& user_key) const {
  return bloom_ == nullptr || bloom_->MayContain(Hash64(user_key));
}

bool MemTable::MayContainPrefix(const Slice& prefix) const {
  if (prefix_extractor_ == nullptr) return true;
  if (bloom_->MayContain(Hash64(prefix))) {
    PerfCount(&PerfContext::bloom_memtable_hit_count);
    return true;
  }
  PerfCount(&PerfContext::bloom_memtable_miss_count);
  return false;
}

bool MemTable::Get(const LookupKey& key, GetContext* ctx) {
  if (num_range_deletions() > 0) {
    if (const auto list = RangeTombstones(); list != nullptr) {
      ctx->UpdateCoveringSeq(list->MaxCoveringSeq(key.user_key(), key.sequence()));
    }
  }
  const bool seen = GetEntries(key, ctx);
  ctx->EndIfCovered();
  return seen;
}

bool MemTable::GetEntries(const LookupKey& key, GetContext* ctx) {
  PerfCount(&PerfContext::get_from_memtable_count);
  // An empty memtable (as after a reopen) answers without touching its bloom filter. An entry
  // a reader's sequence covers was counted before that sequence was published.
  if (num_entries() == 0) return false;
  if (bloom_ != nullptr) {
    if (!bloom_->MayContain(Hash64(key.user_key()))) {
      PerfCount(&PerfContext::bloom_memtable_miss_count);
      return false;
    }
    PerfCount(&PerfContext::bloom_memtable_hit_count);
  }
  Table::Iterator iter(&table_);
  iter.Seek(key.memtable_key().data());
  const Comparator* ucmp = comparator_.user_comparator();
  const Slice user_key = key.user_key();
  const Pinner pinner{
      [](void* arg, Cleanable* target) { static_cast<MemTable*>(arg)->PinInto(target); }, this,
      this};
  bool seen = false;
  for (; iter.Valid(); iter.Next()) {
    iter.PrefetchNext();  // a key's versions are walked in a chain of likely cache misses
    const char* entry = iter.key();
    uint32_t key_len;
    const char* key_ptr = GetVarint32Ptr(entry, entry + kMaxVarint32Length, &key_len);
    Slice internal_key(key_ptr, key_len);
    const Slice entry_user_key = ExtractUserKey(internal_key);
    if (bytewise_ ? !BytesEqual(entry_user_key, user_key)
                  : !ucmp->Equal(entry_user_key, user_key)) {
      break;
    }
    ParsedInternalKey parsed;
    bool ok = ParseInternalKey(internal_key, &parsed);
    SHALE_ASSERT(ok);  // written by Add
    (void)ok;
    Slice value = DecodeValue(key_ptr + key_len);
    seen = true;
    if (!ctx->SaveValue(parsed, value, pinner)) break;
  }
  return seen;
}

// Iterates the skiplist, presenting entries as (internal key, value).
// Thread safety: one thread; the memtable must outlive it.
class MemTableIterator : public InternalIterator {
 public:
  MemTableIterator(const MemTable* mem, MemTable::Table* table) : mem_(mem), iter_(table) {}

  bool Valid() const override { return iter_.Valid(); }
  void SeekToFirst() override { iter_.SeekToFirst(); }
  void SeekToLast() override { iter_.SeekToLast(); }
  void Seek(const Slice& target) override { iter_.Seek(EncodeTarget(target)); }
  void SeekForPrev(const Slice& target) override { iter_.SeekForPrev(EncodeTarget(target)); }
  bool SeekInPrefix(const Slice& target, const PrefixSeek& prefix) override {
    if (!mem_->MayContainPrefix(prefix.prefix)) return false;
    Seek(target);
    return true;
  }
  void Next() override { iter_.Next(); }
  void Prev() override { iter_.Prev(); }
  Slice key() const override { return DecodeLengthPrefixed(iter_.key()); }
  Slice value() const override {
    Slice k = key();
    return DecodeValue(k.data() + k.size());
  }
  Status status() const override { return Status::OK(); }

 private:
  const char* EncodeTarget(const Slice& target) {
    scratch_.clear();
    PutVarint32(&scratch_, static_cast<uint32_t>(target.size()));
    scratch_.append(target.data(), target.size());
    return scratch_.data();
  }

  const MemTable* const mem_;
  MemTable::Table::Iterator iter_;
  std::string scratch_;
};

std::unique_ptr<InternalIterator> MemTable::NewIterator() {
  return std::make_unique<MemTableIterator>(this, &table_);
}

void MemTable::CountRange(const Slice& start, const Slice& limit, uint64_t* count,
                          uint64_t* bytes) {
  *count = 0;
  *bytes = 0;
  const Comparator* ucmp = comparator_.user_comparator();
  std::string seek;
  AppendInternalKey(&seek, start, kMaxSequenceNumber, kValueTypeForSeek);
  MemTableIterator it(this, &table_);
  for (it.Seek(seek); it.Valid(); it.Next()) {
    const Slice key = it.key();
    if (ucmp->Compare(ExtractUserKey(key), limit) >= 0) break;
    (*count)++;
    *bytes += key.size() + it.value().size();
  }
}

}  // namespace shale
