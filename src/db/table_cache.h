// TableCache: open TableReaders of a DB's table files, keyed by file number, bounded by
// Options::max_open_files (least recently used readers are closed first; a reader in use is
// kept until released).
//
// Opening a file checks that its size is the size the caller (the MANIFEST) expects, so a
// truncated or swapped file is reported as Corruption before any block is read.
// Ownership: owns the readers through an LRU Cache of its own; borrows the file system and the
// TableReaderOptions' comparator and statistics. Thread safety: every method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/cache.h"
#include "shale/file_system.h"
#include "src/base/get_context.h"
#include "src/base/internal_iterator.h"
#include "table/table_reader.h"

namespace shale {

class TableCache {
 public:
  // max_open_files < 0: unbounded.
  TableCache(std::string dbname, FileSystem* fs, const TableReaderOptions& reader_options,
             int max_open_files, bool use_direct_reads);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  [[nodiscard]] Status Get(const ReadOptions& options, uint64_t file_number, uint64_t file_size,
                           const Slice& internal_key, GetContext* ctx);
  // The iterator keeps the reader open while it lives.
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options, uint64_t file_number,
                                                uint64_t file_size);
  // A pinned reader; Release(*handle) when done.
  [[nodiscard]] Status FindTable(uint64_t file_number, uint64_t file_size, Cache::Handle** handle);
  // The range tombstones of a table whose MANIFEST entry counts num_range_deletions (> 0) of
  // them; Corruption when the table holds none.
  [[nodiscard]] Status GetRangeTombstones(
      uint64_t file_number, uint64_t file_size, uint64_t num_range_deletions,
      std::shared_ptr<const FragmentedRangeTombstoneList>* list);
  // The reader of file_number pinned if it is open already, else null (nothing is opened).
  Cache::Handle* LookupOpen(uint64_t file_number);
  TableReader* GetReader(Cache::Handle* handle) {
    return static_cast<TableReader*>(cache_->Value(handle));
  }
  void Release(Cache::Handle* handle) { cache_->Release(handle); }
  // Closes the reader of a deleted file (once unpinned).
  void Evict(uint64_t file_number);
  // Readers currently open.
  size_t open_readers() const { return cache_->GetUsage(); }

 private:
  const std::string dbname_;
  FileSystem* const fs_;
  const TableReaderOptions reader_options_;
  const bool use_direct_reads_;
  std::shared_ptr<Cache> cache_;
};

}  // namespace shale
