// RestartPrefixIndex: the restart keys of a block of internal keys as 8-byte numbers, so that a
// seek's binary search reads one compact array instead of a restart offset and then a key at
// every step.
//
// A table's index block holds one restart key per data block (tens of thousands in a 64 MiB
// table), and a point lookup's binary search over it makes two dependent memory loads per step
// (the restart offset, then the key it points at) spread over the whole block. Here each
// restart key is kept as the 8 bytes of its user key that follow the prefix every user key in
// the block shares, read big-endian and zero-padded: 8 bytes per data block, in key order, so a
// search reads one contiguous array (its last steps within one cache line) and compares
// integers.
//
// Order: with a user comparator that orders bytewise, a smaller number means a smaller user
// key, hence a smaller internal key; equal numbers decide nothing (the keys may differ further
// on, or only in their sequence numbers), so Bounds returns the run of restart keys whose
// numbers tie with the target's, which the caller compares in full.
//
// Built in memory when a table reader loads its index block; nothing of it is stored in the
// file. Ownership: a value owned by the Block it describes. Thread safety: immutable after
// construction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale {

class RestartPrefixIndex {
 public:
  // user_keys: the user keys of a block's restart entries, in order (ascending bytewise).
  explicit RestartPrefixIndex(const std::vector<Slice>& user_keys);
  RestartPrefixIndex(const RestartPrefixIndex&) = delete;
  RestartPrefixIndex& operator=(const RestartPrefixIndex&) = delete;

  // For an internal key target: restart keys [0, *lo) are below it and [*hi, n) above it;
  // those in [*lo, *hi) need a full comparison. A target too short to be an internal key gives
  // the whole range.
  void Bounds(const Slice& target, uint32_t* lo, uint32_t* hi) const;

  uint32_t size() const { return static_cast<uint32_t>(numbers_.size()); }
  // Bytes held (a table reader's memory).
  size_t memory_usage() const {
    return sizeof(*this) + common_.capacity() + numbers_.capacity() * sizeof(uint64_t);
  }

 private:
  // The first index whose number is not below t (size() if none).
  uint32_t LowerBound(uint64_t t) const;
  // The 8 bytes of key after offset, big-endian, zero-padded past its end.
  static uint64_t NumberAt(const Slice& key, size_t offset);

  std::string common_;             // the prefix every user key in the block starts with
  std::vector<uint64_t> numbers_;  // NumberAt(user key, common_.size()) per restart key
};

}  // namespace shale
