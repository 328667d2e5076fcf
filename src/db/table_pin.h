// TablePin: a table file's reader held open for as long as the file's FileMetaData lives, so
// that a lookup in the file reaches its reader with one load instead of a TableCache lookup
// (hash, shard lock, reference count) per file per read. Only a TableCache with no bound on
// its open readers (Options::max_open_files < 0) installs pins; a bounded cache must stay free
// to close readers.
//
// The pin holds one reference to the reader's TableCache entry and drops it when the metadata
// goes (the entry, erased when the file is deleted, then closes its reader). It keeps the
// entry's cache alive too, so a FileMetaData that outlives its family's TableCache still drops
// its pin safely (its reader must not be used then: it borrows the family's comparator).
// A copy of a FileMetaData describes the same file but holds no pin (the copy pins on its own
// first lookup).
//
// Thread safety: reader() and Install may race each other; the first Install wins and later
// ones are refused (their caller keeps its own reference). The destructor and assignment need
// exclusive access, as for any member of a FileMetaData.
#pragma once

#include <atomic>
#include <memory>

#include "shale/cache.h"

namespace shale {

class TableReader;

class TablePin {
 public:
  TablePin() = default;
  TablePin(const TablePin& /*other*/) noexcept {}
  TablePin& operator=(const TablePin& other) noexcept;
  ~TablePin() { Reset(); }

  // The pinned reader, or null when none is installed yet.
  TableReader* reader() const { return reader_.load(std::memory_order_acquire); }

  // Makes handle (a reference to reader's entry in cache) the pin's. True when it did; false
  // when another pin came first, and then the caller still owns handle.
  [[nodiscard]] bool Install(const std::shared_ptr<Cache>& cache, Cache::Handle* handle,
                             TableReader* reader);

 private:
  void Reset();

  // Set once, by the Install that wins it; every other field is written only by that Install,
  // before reader_ publishes them.
  std::atomic<Cache::Handle*> handle_{nullptr};
  std::shared_ptr<Cache> cache_;
  std::atomic<TableReader*> reader_{nullptr};
};

}  // namespace shale
