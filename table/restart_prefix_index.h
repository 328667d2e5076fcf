// RestartPrefixIndex: the restart keys of a block of internal keys (or, in a format 3 index
// block, of user keys) as 8-byte numbers, so that a seek's binary search reads one compact array
// instead of a restart offset and then a key at every step.
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
// key, hence a smaller internal key (a block of user keys compares them alone); equal numbers
// decide nothing (the keys may differ further on, or only in their sequence numbers), so Bounds
// returns the run of restart keys whose numbers tie with the target's, which the caller compares in
// full.
//
// Small blocks (a data block holds a few restart points) keep their numbers, and the offsets
// of their restart entries, inside the object itself: a block that holds it by value then
// answers a seek from the cache lines of its own header, without first loading the restart
// array at the block's end and then the restart entries a binary search probes.
//
// Built in memory when a table reader loads its index block, or a data block enters the block
// cache; nothing of it is stored in the file. Ownership: a value owned by the Block it
// describes. Thread safety: filled by Add before it is shared, immutable after.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "shale/slice.h"

namespace shale {

class RestartPrefixIndex {
 public:
  // Restart counts up to this keep numbers and offsets inline.
  static constexpr uint32_t kInlineRestarts = 8;

  // Empty (built() false) until Start and its Adds.
  RestartPrefixIndex() = default;
  RestartPrefixIndex(const RestartPrefixIndex&) = delete;
  RestartPrefixIndex& operator=(const RestartPrefixIndex&) = delete;

  // Starts the index of a block with n >= 1 restart points whose first and last restart
  // entries have the user keys first and last (ascending bytewise): a block of internal keys,
  // or (internal_keys false) of user keys, the kind Bounds' targets then are. REQUIRES: empty.
  void Start(const Slice& first, const Slice& last, uint32_t n, bool internal_keys = true);
  // Adds the next restart entry: its user key (not below the previous one's, not above last)
  // and its offset in the block. Called n times after Start.
  void Add(const Slice& user_key, uint32_t offset);
  // Back to empty (a build that found the block unfit).
  void Clear();
  // Whether Start and all its Adds are done; Bounds and Offset need it.
  bool built() const { return n_ != 0 && added_ == n_; }

  // For a target of the block's kind of key: restart keys [0, *lo) are below it and [*hi, n)
  // above it; those in [*lo, *hi) need a full comparison. An internal-key target too short to
  // be one gives the whole range.
  void Bounds(const Slice& target, uint32_t* lo, uint32_t* hi) const;

  uint32_t size() const { return n_; }
  // Whether Offset answers (the restart entries' offsets are held for small blocks only).
  bool has_offsets() const { return n_ <= kInlineRestarts; }
  // REQUIRES: built(), has_offsets(), i < size(). Where restart entry i starts in the block.
  uint32_t Offset(uint32_t i) const { return offsets_[i]; }
  // REQUIRES: built(), has_offsets(). The offsets, Offset(0) to Offset(size() - 1).
  const uint32_t* offsets() const { return offsets_; }
  // Bytes held outside the object (a table reader's or the block cache's memory).
  size_t heap_usage() const {
    // A string within its small-string capacity allocates nothing.
    return (common_.capacity() > std::string().capacity() ? common_.capacity() + 1 : 0) +
           (heap_ != nullptr ? n_ * sizeof(uint64_t) : 0);
  }

 private:
  // NumberAt(restart key i, common_.size()) at [i]: inline or on the heap.
  const uint64_t* numbers() const { return heap_ != nullptr ? heap_.get() : inline_numbers_; }
  uint64_t* numbers() { return const_cast<uint64_t*>(std::as_const(*this).numbers()); }
  // The first index whose number is not below t (size() if none).
  uint32_t LowerBound(uint64_t t) const;
  // The 8 bytes of key after offset, big-endian, zero-padded past its end.
  static uint64_t NumberAt(const Slice& key, size_t offset);

  // Fields in the order a seek reads them, so that a small block's search touches the fewest
  // cache lines of its holder.
  uint32_t n_ = 0;
  // One word with added_, so that the object (held inline by every Block) keeps its size.
  uint32_t added_ : 31 = 0;
  uint32_t internal_keys_ : 1 = 1;    // whether Bounds' targets carry an 8-byte tag to strip
  std::unique_ptr<uint64_t[]> heap_;  // the numbers when n_ > kInlineRestarts
  std::string common_;                // the prefix every user key in the block starts with
  uint64_t inline_numbers_[kInlineRestarts];
  uint32_t offsets_[kInlineRestarts];  // when n_ <= kInlineRestarts
};

}  // namespace shale
