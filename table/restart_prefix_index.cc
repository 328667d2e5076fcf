#include "table/restart_prefix_index.h"

#include <algorithm>
#include <cstring>

#include "src/base/dbformat.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"

namespace shale {

void RestartPrefixIndex::Start(const Slice& first, const Slice& last, uint32_t n,
                               bool internal_keys) {
  SHALE_ASSERT(n >= 1 && n_ == 0 && heap_ == nullptr);
  // Sorted keys: what the first and the last share, every key between them shares.
  size_t common = 0;
  const size_t max_common = std::min(first.size(), last.size());
  while (common < max_common && first[common] == last[common]) common++;
  common_.assign(first.data(), common);
  n_ = n;
  added_ = 0;
  internal_keys_ = internal_keys ? 1 : 0;
  if (n > kInlineRestarts) heap_ = std::make_unique_for_overwrite<uint64_t[]>(n);
}

void RestartPrefixIndex::Add(const Slice& user_key, uint32_t offset) {
  SHALE_ASSERT(added_ < n_);
  SHALE_ASSERT(user_key.starts_with(Slice(common_)));
  uint64_t* const numbers = this->numbers();
  numbers[added_] = NumberAt(user_key, common_.size());
  SHALE_ASSERT(added_ == 0 || numbers[added_ - 1] <= numbers[added_]);
  if (has_offsets()) offsets_[added_] = offset;
  added_++;
}

void RestartPrefixIndex::Clear() {
  n_ = 0;
  added_ = 0;
  heap_.reset();
  common_.clear();
  common_.shrink_to_fit();
}

uint64_t RestartPrefixIndex::NumberAt(const Slice& key, size_t offset) {
  const size_t available = key.size() > offset ? key.size() - offset : 0;
  if (available >= 8) return __builtin_bswap64(DecodeFixed64(key.data() + offset));
  char bytes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (available > 0) std::memcpy(bytes, key.data() + offset, available);
  return __builtin_bswap64(DecodeFixed64(bytes));
}

void RestartPrefixIndex::Bounds(const Slice& target, uint32_t* lo, uint32_t* hi) const {
  SHALE_ASSERT(built());
  const uint32_t n = n_;
  if (internal_keys_ && target.size() < 8) {  // shorter than an internal key's tag
    *lo = 0;
    *hi = n;
    return;
  }
  const Slice user = internal_keys_ ? ExtractUserKey(target) : target;
  if (!user.starts_with(Slice(common_))) {
    // Below the common prefix (or a proper prefix of it): below every key; else above all.
    *lo = *hi = user.compare(Slice(common_)) < 0 ? 0 : n;
    return;
  }
  const uint64_t t = NumberAt(user, common_.size());
  const uint32_t first = LowerBound(t);
  *lo = first;
  // Ties are rare (keys alike in all 8 bytes after the common prefix): one comparison tells
  // whether there are any.
  const uint64_t* const numbers = this->numbers();
  if (first == n || numbers[first] != t) {
    *hi = first;
  } else {
    *hi = static_cast<uint32_t>(std::upper_bound(numbers + first, numbers + n, t) - numbers);
  }
}

uint32_t RestartPrefixIndex::LowerBound(uint64_t t) const {
  // Branch-free: the halving does not depend on the comparisons, which only choose the base
  // (arithmetically), so a search never mispredicts a branch on the data.
  // While the range spans more than a few cache lines, both places the next step may probe
  // are prefetched, so that its load overlaps this step's instead of following it (an index
  // block's numbers run to tens of KiB, and a lookup's lower steps miss the L1 cache).
  const uint64_t* const begin = numbers();
  size_t len = n_;
  const uint64_t* base = begin;
  while (len > 16) {
    const size_t half = len / 2;
    const size_t next_half = (len - half) / 2;
    __builtin_prefetch(base + next_half - 1);
    __builtin_prefetch(base + half + next_half - 1);
    base += half & (size_t{0} - static_cast<size_t>(base[half - 1] < t));
    len -= half;
  }
  while (len > 1) {
    const size_t half = len / 2;
    // A mask rather than `?:`, which compilers may turn back into a branch.
    base += half & (size_t{0} - static_cast<size_t>(base[half - 1] < t));
    len -= half;
  }
  return static_cast<uint32_t>(base - begin) + (*base < t ? 1 : 0);
}

}  // namespace shale
