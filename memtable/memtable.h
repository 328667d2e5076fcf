// MemTable: the in-memory, sorted write buffer in front of the SST files.
//
// Entries live in a ConcurrentArena and are indexed by a lock-free SkipList. Entry format:
//   entry := internal_key_length:varint32 user_key tag:fixed64 value_length:varint32 value_ref
//   value_ref := value bytes                     if value_length <= kMaxInlineValue
//              | the value's address (8 native bytes) otherwise (bytes in a second arena)
// (tag = sequence << 8 | type; see src/base/dbformat.h). Keeping long values out of line keeps
// the nodes small and close together: a seek, or a walk down one key's versions (merge
// operands, GetMergeOperands), touches a few dense cache lines per node instead of one node
// per value-sized stride, whatever the value sizes.
//
// Range tombstones (DeleteRange) are kept apart from the entries, in a list under a small mutex,
// fragmented on first use after a change (src/base/range_tombstone.h); Get applies them before
// its Bloom filter, since a key the filter rules out may still be covered.
//
// Ownership: intrusively ref-counted. Whoever holds a reference (the DB's current state, a
// reader, a PinnableSlice pin) keeps every entry's bytes alive; the last Unref frees it.
// Thread safety: Add may be called from several threads at once; Get and iterators run
// concurrently with Adds without locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "memtable/memtable_bloom.h"
#include "memtable/skiplist.h"
#include "shale/slice.h"
#include "shale/slice_transform.h"
#include "src/base/dbformat.h"
#include "src/base/internal_iterator.h"
#include "src/base/range_tombstone.h"
#include "src/util/arena.h"
#include "src/util/mutex.h"

namespace shale {

class GetContext;

class MemTable {
 public:
  // Values longer than this are stored out of line (see the entry format above).
  static constexpr size_t kMaxInlineValue = 256;

  // arena_block_size: the unit in which memory is reserved (see ArenaBlockSizeFor).
  // bloom_bytes > 0: a whole-key Bloom filter of about that size answers lookups of absent keys
  // without searching the skiplist (its memory counts as memtable memory).
  // prefix_extractor (may be null): the filter also holds the prefixes of keys in its domain.
  // block_pool (may be null): where the arenas' blocks come from and go back to, shared by the
  // memtables of a family (NewBlockPool).
  explicit MemTable(const InternalKeyComparator& comparator,
                    size_t arena_block_size = Arena::kBlockSize, size_t bloom_bytes = 0,
                    std::shared_ptr<const SliceTransform> prefix_extractor = nullptr,
                    std::shared_ptr<ArenaBlockPool> block_pool = nullptr);
  // A pool for memtables of arena_block_size that keeps up to max_bytes of their blocks.
  static std::shared_ptr<ArenaBlockPool> NewBlockPool(size_t arena_block_size, size_t max_bytes);
  // An arena block size suited to a memtable flushed at write_buffer_size bytes: an eighth of
  // it, within [4 KiB, 1 MiB]; from 128 MiB on, huge-page blocks (Arena::kHugePageSize), whose
  // partly used last block is at most 1.6 % of the memtable.
  static size_t ArenaBlockSizeFor(size_t write_buffer_size);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Frees the memtable when the last reference goes.
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Adds an entry. Thread-safe with concurrent Adds and readers.
  void Add(SequenceNumber seq, ValueType type, const Slice& key, const Slice& value);

  // Adds the range tombstone [begin, end) at seq (an empty range covers nothing: left out).
  // Thread-safe with concurrent Adds and readers.
  void AddRangeDeletion(SequenceNumber seq, const Slice& begin, const Slice& end);
  // The range tombstones, fragmented; null when there are none. The list stays valid after the
  // memtable changes (a later tombstone gives a new list).
  std::shared_ptr<const FragmentedRangeTombstoneList> RangeTombstones() const;
  uint64_t num_range_deletions() const {
    return num_range_deletions_.load(std::memory_order_acquire);
  }

  // Gives ctx the newest range tombstone covering key at its sequence, then feeds it the
  // entries of key visible at key's sequence, newest first, until it has its answer; ends the
  // lookup when a tombstone covers the rest (GetContext::EndIfCovered). Returns true if any
  // entry was seen.
  bool Get(const LookupKey& key, GetContext* ctx);

  // False only when the memtable's Bloom filter rules user_key out (true without a filter).
  bool MayContain(const Slice& user_key) const;
  // False only when the filter rules out every key with this prefix (a value of the
  // memtable's prefix extractor; true without a filter or an extractor).
  bool MayContainPrefix(const Slice& prefix) const;

  // An iterator over internal keys. The memtable must outlive it (hold a Ref).
  std::unique_ptr<InternalIterator> NewIterator();
  // Entries (every version) with user keys in [start, limit), and their key and value bytes:
  // exact, by walking them.
  void CountRange(const Slice& start, const Slice& limit, uint64_t* count, uint64_t* bytes);

  size_t ApproximateMemoryUsage() const {
    return arena_.MemoryUsage() + value_arena_.MemoryUsage() +
           range_deletion_bytes_.load(std::memory_order_relaxed);
  }
  uint64_t num_entries() const { return num_entries_.load(std::memory_order_relaxed); }
  uint64_t num_deletes() const { return num_deletes_.load(std::memory_order_relaxed); }

  // Registers a cleanup on target that releases a reference taken now.
  void PinInto(class Cleanable* target);

 private:
  ~MemTable() = default;
  friend class MemTableIterator;
  // Get's walk over the point entries.
  bool GetEntries(const LookupKey& key, GetContext* ctx);

  struct KeyComparator {
    const InternalKeyComparator* comparator;
    bool bytewise;
    int operator()(const char* a, const char* b) const;
  };
  using Table = SkipList<KeyComparator>;

  std::atomic<int> refs_{0};
  const InternalKeyComparator comparator_;
  const bool bytewise_;          // the user comparator is bytewise: Get compares keys inline
  ConcurrentArena arena_;        // skiplist nodes with their entries
  ConcurrentArena value_arena_;  // values longer than kMaxInlineValue
  Table table_;
  std::unique_ptr<MemTableBloom> bloom_;                          // null: no filter
  const std::shared_ptr<const SliceTransform> prefix_extractor_;  // with bloom_ only
  std::atomic<uint64_t> num_entries_{0};                          // range tombstones included
  std::atomic<uint64_t> num_deletes_{0};
  std::atomic<uint64_t> num_range_deletions_{0};
  std::atomic<size_t> range_deletion_bytes_{0};
  mutable Mutex range_del_mu_;
  std::vector<RangeTombstone> range_deletions_ GUARDED_BY(range_del_mu_);
  // Fragmented from range_deletions_; null when stale. Stored only under range_del_mu_ (reset
  // by AddRangeDeletion, set by the first reader after it), loaded without it: a reader whose
  // sequence covers a tombstone loads null or a list built after the tombstone was added.
  mutable std::atomic<std::shared_ptr<const FragmentedRangeTombstoneList>> range_del_list_;
};

}  // namespace shale
