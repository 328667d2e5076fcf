// TableCache: open TableReaders of a DB's table files, keyed by file number, bounded by
// Options::max_open_files (least recently used readers are closed first; a reader in use is
// kept until released). Unbounded (max_open_files < 0), a reader once opened is pinned in the
// file's FileMetaData (TablePin) and later lookups in that file skip the cache.
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
#include "src/db/version_edit.h"
#include "table/table_reader.h"

namespace shale {

// A table's reader held for a call: either a reference to its TableCache entry, dropped with
// the TableRef, or the reader the file's FileMetaData pins (nothing to drop; the metadata must
// outlive the TableRef). Thread safety: a plain value of one thread. Ownership: movable, not
// copyable.
class TableRef {
 public:
  TableRef() = default;
  TableRef(TableRef&& other) noexcept { *this = std::move(other); }
  TableRef& operator=(TableRef&& other) noexcept;
  TableRef(const TableRef&) = delete;
  TableRef& operator=(const TableRef&) = delete;
  ~TableRef() { Reset(); }

  TableReader* get() const { return reader_; }
  TableReader* operator->() const { return reader_; }
  explicit operator bool() const { return reader_ != nullptr; }
  void Reset();

 private:
  friend class TableCache;
  TableReader* reader_ = nullptr;
  Cache* cache_ = nullptr;  // with handle_: the entry to release; null when pinned by the file
  Cache::Handle* handle_ = nullptr;
};

class TableCache {
 public:
  // max_open_files < 0: unbounded.
  TableCache(std::string dbname, FileSystem* fs, const TableReaderOptions& reader_options,
             int max_open_files, bool use_direct_reads);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  // f's reader, opened if it is not open yet.
  [[nodiscard]] Status Find(const FileMetaData& f, TableRef* ref);
  // f's reader if it is open already, else an empty ref (nothing is opened).
  TableRef FindOpen(const FileMetaData& f);
  // The iterator keeps the reader open while it lives; it must not outlive f.
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options, const FileMetaData& f);
  // The range tombstones of f, whose MANIFEST entry counts num_range_deletions (> 0) of them;
  // Corruption when the table holds none.
  [[nodiscard]] Status GetRangeTombstones(
      const FileMetaData& f, std::shared_ptr<const FragmentedRangeTombstoneList>* list);
  // Closes the reader of a deleted file (once unpinned).
  void Evict(uint64_t file_number);
  // Readers currently open.
  size_t open_readers() const { return cache_->GetUsage(); }

 private:
  // Opens file_number's reader (after its size is checked against file_size) and inserts it,
  // referenced in *handle. Two threads missing at once both open; the later insert replaces
  // the earlier entry, which closes when its last reference goes.
  [[nodiscard]] Status OpenTable(uint64_t file_number, uint64_t file_size, Cache::Handle** handle);
  TableRef Ref(const FileMetaData& f, Cache::Handle* handle);

  const std::string dbname_;
  FileSystem* const fs_;
  const TableReaderOptions reader_options_;
  const bool use_direct_reads_;
  const bool pin_readers_;
  std::shared_ptr<Cache> cache_;
};

}  // namespace shale
