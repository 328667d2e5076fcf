// TableReader: opens a block-based table file (layout in table/format.h) and answers point
// lookups and iteration over it.
//
// Open reads the footer, then the metaindex, properties, range-deletion, index and filter
// blocks, verifying each block's checksum; those stay in memory for the reader's life (the range
// tombstones as a fragmented list that readers may share beyond it). Data blocks are read on
// demand, their checksums verified when ReadOptions::verify_checksums is set, and kept in the
// block cache when there is one (ReadOptions::fill_cache). A value returned by Get from a
// cached block is pinned through its cache handle, not copied.
//
// Get applies the table's range tombstones, checks the filter (the filter the file was written
// with), then the index, then the data block(s): a user key's versions may span blocks.
//
// Files: table_reader.cc opens the table, reaches the block cache and answers Get and
// VerifyChecksum; table_iterator.h the iterator NewIterator returns; table_multiget.cc the
// batched MultiGet; table_reader_internal.h the helpers they share.
//
// Ownership: owns its file; shares the block cache; borrows the comparator and statistics,
// which must outlive it. Thread safety: immutable after Open; Get, NewIterator and
// VerifyChecksum may run from many threads at once. Iterators must not outlive the reader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/file_system.h"
#include "shale/options.h"
#include "shale/perf_context.h"
#include "shale/rate_limiter.h"
#include "shale/statistics.h"
#include "src/base/async_read.h"
#include "src/base/dbformat.h"
#include "src/base/get_context.h"
#include "src/base/internal_iterator.h"
#include "src/base/multi_get.h"
#include "src/base/range_tombstone.h"
#include "table/block.h"
#include "table/filter_block.h"
#include "table/format.h"
#include "table/table_properties.h"

namespace shale {

struct TableReaderOptions {
  const InternalKeyComparator* comparator = nullptr;  // required
  std::shared_ptr<Cache> block_cache;                 // null: blocks are read every time
  Statistics* statistics = nullptr;
  std::string file_name;  // labels errors and tools' output
  // The reader's merge operator (null: none). A table holding merge operands written with
  // another operator is refused (InvalidArgument).
  const char* merge_operator_name = nullptr;
  bool check_merge_operator = false;
  // Blocks read for a ReadOptions whose rate_limiter_priority is not kTotal pass this limiter
  // first, when it limits reads (null: none).
  RateLimiter* rate_limiter = nullptr;
  // The reader's prefix extractor (null: none): a table's prefix filter is used only when the
  // table was written with an extractor of the same Name(). Must outlive the reader.
  const SliceTransform* prefix_extractor = nullptr;
};

// A data block in use: either pinned in the block cache or owned here.
//
// It is in one of three states, never two at once (CheckState): empty (block_ null, nothing
// held); pinned (handle_ a pin on an entry of cache_ whose value is block_, owned_ null); or
// owning (owned_ is block_, handle_ and cache_ null). A pin is released exactly once: by
// Reset, which the destructor calls, or by the Cleanable that TransferTo handed it to.
// PinInto takes a further pin for a Cleanable, released when that runs its cleanups.
// cache_ is a plain pointer: the TableReader that filled the BlockRef keeps the cache alive
// (TableReaderOptions::block_cache), so a BlockRef is Reset or destroyed before that reader
// is. A pin that outlived every owner of the cache would be caught by the cache's destructor
// (src/cache/lru_cache.cc asserts that no entry is still pinned).
// Thread safety: none; one thread uses a BlockRef (the pinned block itself is immutable).
class BlockRef {
 public:
  BlockRef() = default;
  BlockRef(const BlockRef&) = delete;
  BlockRef& operator=(const BlockRef&) = delete;
  ~BlockRef() { Reset(); }
  // Releases the pin or frees the owned block; empty afterwards.
  void Reset();
  const Block* get() const { return block_; }
  bool cached() const { return handle_ != nullptr; }
  // Registers on target a cleanup that holds a pin on the cached block. REQUIRES: cached().
  void PinInto(Cleanable* target) const;
  // Moves this block's ownership or pin into target's cleanups; empty afterwards.
  void TransferTo(Cleanable* target);
  // Releases what this holds and takes what other holds; other is empty afterwards.
  void TakeFrom(BlockRef* other);

 private:
  friend class TableReader;
  // SHALE_ASSERTs the state invariant above.
  void CheckState() const;

  const Block* block_ = nullptr;
  Cache* cache_ = nullptr;
  Cache::Handle* handle_ = nullptr;
  std::unique_ptr<Block> owned_;
};

class TableReader {
 public:
  [[nodiscard]] static Status Open(const TableReaderOptions& options,
                                   std::unique_ptr<RandomAccessFile> file, uint64_t file_size,
                                   std::unique_ptr<TableReader>* reader);
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;
  ~TableReader();

  // Feeds ctx the entries of internal_key's user key visible at its sequence, newest first,
  // until ctx has its answer. OK when the key is simply absent; errors are Corruption/IOError.
  [[nodiscard]] Status Get(const ReadOptions& options, const Slice& internal_key,
                           GetContext* ctx) const;
  // As Get, with hash = Hash64(the user key) computed by the caller (see PrefetchFilter).
  [[nodiscard]] Status Get(const ReadOptions& options, const Slice& internal_key, uint64_t hash,
                           GetContext* ctx) const;
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const;
  // Reads every data block with its checksum checked and its entries decoded and in order.
  [[nodiscard]] Status VerifyChecksum() const;

  // False only when the filter rules user_key out: by the whole key, or, in a table whose
  // filter holds prefixes only, by its prefix.
  bool KeyMayMatch(const Slice& user_key) const;
  // False only when the prefix filter rules out every key with this prefix (a value of the
  // reader's prefix extractor); counted in the prefix tickers.
  bool PrefixMayMatch(const Slice& prefix) const;
  // The file offset where entries >= internal_key start: the offset of the data block that
  // could hold it (from the index), or the end of the data blocks when every key is smaller.
  uint64_t ApproximateOffsetOf(const Slice& internal_key) const;
  const TableProperties& properties() const { return properties_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& file_name() const { return options_.file_name; }
  // Iterates the index: keys are separators (user keys when index_keys_are_user_keys(), else
  // internal keys), values encoded BlockHandles. Its seeks take IndexTarget(internal key).
  std::unique_ptr<InternalIterator> NewIndexIterator() const;
  bool index_keys_are_user_keys() const { return index_user_keys_; }
  // What the index's seeks compare with its separators for internal_key (a key too short to be
  // one, read from a damaged block without checksums, is compared whole).
  Slice IndexTarget(const Slice& internal_key) const {
    return index_user_keys_ && internal_key.size() >= 8 ? ExtractUserKey(internal_key)
                                                        : internal_key;
  }
  // The user key of an index separator; false for an internal-key separator too short to be
  // one (a damaged index).
  bool IndexUserKey(const Slice& separator, Slice* user_key) const {
    if (index_user_keys_) {
      *user_key = separator;
      return true;
    }
    if (separator.size() < 8) return false;
    *user_key = ExtractUserKey(separator);
    return true;
  }
  // The handle of the filter block (size 0 when there is none).
  const BlockHandle& filter_handle() const { return filter_handle_; }
  // The table's range tombstones; null when it has none.
  const std::shared_ptr<const FragmentedRangeTombstoneList>& range_tombstones() const {
    return range_tombstones_;
  }
  // Gives ctx the newest of the table's range tombstones covering lookup_key (an internal key
  // at the read sequence), if any.
  void ApplyRangeTombstones(const Slice& lookup_key, GetContext* ctx) const {
    if (range_tombstones_ != nullptr) {
      ctx->UpdateCoveringSeq(range_tombstones_->MaxCoveringSeq(ExtractUserKey(lookup_key),
                                                               ExtractTag(lookup_key) >> 8));
    }
  }

  // A point splitting the table by key: every key of the data blocks counted in range_bytes
  // (those after the previous anchor) has a user key <= user_key.
  struct KeyAnchor {
    std::string user_key;
    uint64_t range_bytes;
  };
  // Up to max_anchors anchors in key order, from the index (no data block is read): about
  // equal runs of data blocks, the last ending at the table's last block. Corruption on a
  // malformed index entry.
  [[nodiscard]] Status ApproximateKeyAnchors(size_t max_anchors,
                                             std::vector<KeyAnchor>* anchors) const;

  // Reads (or finds in the cache) the data block at handle.
  // With readahead, a block not in the cache comes through that window.
  [[nodiscard]] Status GetDataBlock(const ReadOptions& options, const BlockHandle& handle,
                                    BlockRef* ref, ReadaheadBuffer* readahead = nullptr) const;
  // GetDataBlock in two steps, for a read run together with others (an iterator's seek, see
  // InternalIterator::PrepareSeek): FindCachedDataBlock pins a cached block into *ref (true);
  // after a miss ReadDataBlock reads the block at once, or ReadDataBlockAsync on io (*ref holds
  // it once the task ends, else *status says why; the caller runs io and keeps this reader
  // alive until then).
  bool FindCachedDataBlock(const BlockHandle& handle, BlockRef* ref) const {
    return LookupCachedBlock(handle, ref);
  }
  [[nodiscard]] Status ReadDataBlock(const ReadOptions& options, const BlockHandle& handle,
                                     BlockRef* ref, ReadaheadBuffer* readahead = nullptr) const;
  Task ReadDataBlockAsync(ReadOptions options, BlockHandle handle, BlockRef* ref, Status* status,
                          AsyncIo* io) const;

  // Looks up keys[0..n) (sorted by internal key, none resolved) in this table: the filter is
  // probed for the whole batch (lines prefetched first), the index sought once per group of
  // keys sharing a data block, and each block read once for its group. Cached blocks serve
  // their keys at once; with io, each missing block is read by a coroutine spawned on io
  // (which the caller runs, keeping this reader alive until it finishes); without, synchronously.
  // A key's errors go to its own status; the other keys are unaffected.
  // filter_checked: the caller already asked FilterMayMatch for every key. Range tombstones
  // are applied to every key first; a covered key the filter rules out ends there.
  void MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n, AsyncIo* io,
                bool filter_checked = false) const;
  // The filter's answer for user_key, hashed with Hash64(user_key) (by the whole key, or by
  // its prefix as KeyMayMatch), counted in the statistics like a Get's; PrefetchFilter starts
  // loading the line a whole-key answer needs.
  bool FilterMayMatch(const Slice& user_key, uint64_t hash) const;
  void PrefetchFilter(uint64_t hash) const {
    if (filter_ != nullptr) filter_->PrefetchHash(hash);
  }

 private:
  struct MissedBlock;
  static constexpr size_t kCacheKeySize = 16;
  TableReader(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile> file,
              uint64_t file_size);
  // Open's reads, in this order: the footer, the metaindex (which locates the properties and
  // filter blocks), the properties (checked against the reader's comparator and merge
  // operator), the index, the filter.
  [[nodiscard]] Status ReadMetaBlocks();
  [[nodiscard]] Status ReadFooter(Footer* footer) const;
  // Sets *properties_handle, and filter_handle_ / range_del_handle_ when the table has those.
  [[nodiscard]] Status ReadMetaindex(const BlockHandle& metaindex_handle,
                                     BlockHandle* properties_handle);
  // Decodes properties_, then CheckWrittenCompatibly.
  [[nodiscard]] Status ReadProperties(const BlockHandle& properties_handle);
  // InvalidArgument when the table's keys were ordered by another comparator, or its merge
  // operands written with another merge operator than this reader's.
  [[nodiscard]] Status CheckWrittenCompatibly() const;
  // Reads the index block, in the encoding the format version and properties say.
  [[nodiscard]] Status ReadIndex(const BlockHandle& index_handle, uint32_t format_version);
  // Positions nothing: iter over the index block, comparing separators as they are stored.
  void InitIndexIterator(BlockIter* iter) const {
    index_block_->InitIterator(index_comparator_, iter);
  }
  // Reads range_del_handle_'s block into range_tombstones_. Corruption when the block's
  // presence disagrees with the format version, or when DecodeRangeDeletions refuses it.
  [[nodiscard]] Status ReadRangeDeletions(uint32_t format_version);
  // Checks a range-deletion block's entries (type, start < end, order, sequence numbers within
  // the table's, their count against the properties) and, with out, fragments them.
  [[nodiscard]] Status DecodeRangeDeletions(
      BlockContents contents, std::shared_ptr<const FragmentedRangeTombstoneList>* out) const;
  // Reads filter_handle_'s block, if any, into filter_.
  [[nodiscard]] Status ReadFilter();
  // The block cache key of a data block: cache id, then offset.
  void CacheKey(const BlockHandle& handle, char* key) const;
  // Hints the block cache that LookupCachedBlock(handle) follows soon.
  void PrefetchCachedBlock(const BlockHandle& handle) const;
  // True (and *ref set) when the block is in the block cache. REQUIRES: *ref is empty.
  bool LookupCachedBlock(const BlockHandle& handle, BlockRef* ref) const;
  // Waits for the rate limiter's grant of a read of handle, when reads are limited.
  void RequestReadRate(const ReadOptions& options, const BlockHandle& handle) const;
  // A data block read's start, and its latency (from start to now) recorded in SST_READ_MICROS,
  // with statistics only. An asynchronous read counts from when it is queued until its
  // completion is handled, the thread's other work meanwhile included: the samples of one
  // batch overlap.
  uint64_t ReadStart() const;
  void RecordReadMicros(uint64_t start) const;
  // The end of an asynchronous data block read started at start (ReadStart): its latency, its
  // checks, the block counted (async_counter too) and installed in *ref.
  [[nodiscard]] Status CompleteBlockRead(const ReadOptions& options, const BlockHandle& handle,
                                         BlockReadRequest* read, uint64_t start,
                                         uint64_t PerfContext::*async_counter, BlockRef* ref) const;
  // Makes contents, read from handle, the block in *ref, inserting it into the cache when
  // reads fill it. REQUIRES: *ref is empty.
  void InstallBlock(const ReadOptions& options, const BlockHandle& handle, BlockContents contents,
                    BlockRef* ref) const;
  // Feeds ctx the entries of internal_key's user key in one block. *done: no later block can
  // hold more of them (or ctx needs no more).
  [[nodiscard]] Status ScanBlock(const BlockRef& ref, const BlockHandle& handle,
                                 const Slice& internal_key, GetContext* ctx, bool* matched,
                                 bool* done) const;
  // ScanBlock over the blocks from index's position on, until done.
  [[nodiscard]] Status GetFromIndex(const ReadOptions& options, BlockIter* index,
                                    const Slice& internal_key, GetContext* ctx,
                                    bool* matched) const;
  // MultiGet's steps (table_multiget.cc). ServeKeys feeds keys[0..n), which the block at
  // handle may hold, from ref's block, then from the blocks after it for a key whose versions
  // run on; each key's error goes to its own status.
  void ServeKeys(const ReadOptions& options, const BlockRef& ref, const BlockHandle& handle,
                 MultiGetKey* const* keys, size_t n) const;
  // Reads a block the cache did not have through io, installs it and serves its keys.
  Task ReadMissedBlock(ReadOptions options, MissedBlock block, AsyncIo* io) const;
  Status Annotate(const Status& s) const;

  const TableReaderOptions options_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
  // Whether the user comparator orders keys by their bytes (blocks then get a prefix index).
  const bool bytewise_;
  uint64_t cache_id_ = 0;
  TableProperties properties_;
  std::unique_ptr<Block> index_block_;
  // Whether the index's separators are user keys (format 3's shale.index.key.is.user.key), and
  // the comparator ordering them.
  bool index_user_keys_ = false;
  const Comparator* index_comparator_ = nullptr;
  BlockContents filter_contents_;
  BlockHandle filter_handle_;
  BlockHandle range_del_handle_;
  std::shared_ptr<const FragmentedRangeTombstoneList> range_tombstones_;
  std::unique_ptr<FilterBlockReader> filter_;
  // What filter_ can answer (set by ReadFilter from the properties): whole keys, and prefixes
  // of the reader's extractor.
  bool whole_key_filter_ = false;
  bool prefix_filter_ = false;
};

}  // namespace shale
