#include "table/restart_prefix_index.h"

#include <algorithm>
#include <cstring>

#include "src/base/dbformat.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"

namespace shale {

RestartPrefixIndex::RestartPrefixIndex(const std::vector<Slice>& user_keys) {
  if (user_keys.empty()) return;
  // Sorted keys: what the first and the last share, every key between them shares.
  const Slice& first = user_keys.front();
  const Slice& last = user_keys.back();
  size_t common = 0;
  const size_t max_common = std::min(first.size(), last.size());
  while (common < max_common && first[common] == last[common]) common++;
  common_.assign(first.data(), common);
  numbers_.reserve(user_keys.size());
  for (const Slice& key : user_keys) {
    SHALE_ASSERT(key.starts_with(Slice(common_)));
    numbers_.push_back(NumberAt(key, common));
    SHALE_ASSERT(numbers_.size() < 2 || numbers_[numbers_.size() - 2] <= numbers_.back());
  }
}

uint64_t RestartPrefixIndex::NumberAt(const Slice& key, size_t offset) {
  const size_t available = key.size() > offset ? key.size() - offset : 0;
  if (available >= 8) return __builtin_bswap64(DecodeFixed64(key.data() + offset));
  char bytes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (available > 0) std::memcpy(bytes, key.data() + offset, available);
  return __builtin_bswap64(DecodeFixed64(bytes));
}

void RestartPrefixIndex::Bounds(const Slice& target, uint32_t* lo, uint32_t* hi) const {
  const auto n = static_cast<uint32_t>(numbers_.size());
  if (target.size() < 8) {  // shorter than an internal key's tag
    *lo = 0;
    *hi = n;
    return;
  }
  const Slice user = ExtractUserKey(target);
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
  if (first == n || numbers_[first] != t) {
    *hi = first;
  } else {
    *hi = static_cast<uint32_t>(std::upper_bound(numbers_.begin() + first, numbers_.end(), t) -
                                numbers_.begin());
  }
}

uint32_t RestartPrefixIndex::LowerBound(uint64_t t) const {
  // Branch-free: the halving does not depend on the comparisons, which only choose the base
  // (arithmetically), so a search never mispredicts a branch on the data.
  const uint64_t* const begin = numbers_.data();
  size_t len = numbers_.size();
  if (len == 0) return 0;
  const uint64_t* base = begin;
  while (len > 1) {
    const size_t half = len / 2;
    // A mask rather than `?:`, which compilers may turn back into a branch.
    base += half & (size_t{0} - static_cast<size_t>(base[half - 1] < t));
    len -= half;
  }
  return static_cast<uint32_t>(base - begin) + (*base < t ? 1 : 0);
}

}  // namespace shale
