// TableReader: opens a block-based table file (layout in table/format.h) and answers point
// lookups and iteration over it.
//
// Open reads the footer, then the metaindex, properties, index and filter blocks, verifying
// each block's checksum; those stay in memory for the reader's life. Data blocks are read on
// demand, their checksums verified when ReadOptions::verify_checksums is set, and kept in the
// block cache when there is one (ReadOptions::fill_cache). A value returned by Get from a
// cached block is pinned through its cache handle, not copied.
//
// Get checks the filter first (the filter the file was written with), then the index, then
// the data block(s): a user key's versions may span blocks.
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
#include "shale/statistics.h"
#include "src/base/async_read.h"
#include "src/base/dbformat.h"
#include "src/base/get_context.h"
#include "src/base/internal_iterator.h"
#include "src/base/multi_get.h"
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
};

// A data block in use: either pinned in the block cache or owned here.
class BlockRef {
 public:
  BlockRef() = default;
  BlockRef(const BlockRef&) = delete;
  BlockRef& operator=(const BlockRef&) = delete;
  ~BlockRef() { Reset(); }
  void Reset();
  const Block* get() const { return block_; }
  bool cached() const { return handle_ != nullptr; }
  // Registers on target a cleanup that holds a pin on the cached block. REQUIRES: cached().
  void PinInto(Cleanable* target) const;
  // Moves this block's ownership or pin into target's cleanups.
  void TransferTo(Cleanable* target);

 private:
  friend class TableReader;
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
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const;
  // Reads every data block with its checksum checked and its entries decoded and in order.
  [[nodiscard]] Status VerifyChecksum() const;

  // False only when the filter rules user_key out.
  bool KeyMayMatch(const Slice& user_key) const;
  const TableProperties& properties() const { return properties_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& file_name() const { return options_.file_name; }
  // Iterates the index: keys are separators, values encoded BlockHandles.
  std::unique_ptr<InternalIterator> NewIndexIterator() const;
  // The handle of the filter block (size 0 when there is none).
  const BlockHandle& filter_handle() const { return filter_handle_; }

  // Reads (or finds in the cache) the data block at handle.
  // With readahead, a block not in the cache comes through that window.
  [[nodiscard]] Status GetDataBlock(const ReadOptions& options, const BlockHandle& handle,
                                    BlockRef* ref, ReadaheadBuffer* readahead = nullptr) const;

  // Looks up keys[0..n) (sorted by internal key, none resolved) in this table: the filter is
  // probed for the whole batch (lines prefetched first), the index sought once per group of
  // keys sharing a data block, and each block read once for its group. Cached blocks serve
  // their keys at once; with io, each missing block is read by a coroutine spawned on io
  // (which the caller runs, keeping this reader alive until it finishes); without, synchronously.
  // A key's errors go to its own status; the other keys are unaffected.
  // filter_checked: the caller already asked FilterMayMatch for every key.
  void MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n, AsyncIo* io,
                bool filter_checked = false) const;
  // The filter's answer for a key hashed with Hash64(user_key), counted in the statistics
  // like a Get's; PrefetchFilter starts loading the line that answer needs.
  bool FilterMayMatch(uint64_t hash) const;
  void PrefetchFilter(uint64_t hash) const {
    if (filter_ != nullptr) filter_->PrefetchHash(hash);
  }

 private:
  struct MissedBlock;
  static constexpr size_t kCacheKeySize = 16;
  TableReader(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile> file,
              uint64_t file_size);
  [[nodiscard]] Status ReadMetaBlocks();
  // The block cache key of a data block: cache id, then offset.
  void CacheKey(const BlockHandle& handle, char* key) const;
  // True (and *ref set) when the block is in the block cache.
  bool LookupCachedBlock(const BlockHandle& handle, BlockRef* ref) const;
  // Makes contents the block in *ref, inserting it into the cache when reads fill it.
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
  void ServeKeys(const ReadOptions& options, const BlockRef& ref, const BlockHandle& handle,
                 MultiGetKey* const* keys, size_t n) const;
  Task ReadMissedBlock(ReadOptions options, MissedBlock block, AsyncIo* io) const;
  Status Annotate(const Status& s) const;

  const TableReaderOptions options_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
  uint64_t cache_id_ = 0;
  TableProperties properties_;
  std::unique_ptr<Block> index_block_;
  BlockContents filter_contents_;
  BlockHandle filter_handle_;
  std::unique_ptr<FilterBlockReader> filter_;
};

}  // namespace shale
