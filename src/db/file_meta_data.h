// FileMetaData: one table file as a Version sees it (its number, size, key and sequence
// range), and the file's pinned reader once a lookup opened it (TablePin).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "src/base/dbformat.h"
#include "src/db/table_pin.h"

namespace shale {

// Seeks charged to a table file by iterators that found its key range overlapping another sorted
// run's (read-triggered compaction, src/db/read_compaction.h). Not part of the file's
// description: a copy starts at 0, so a file moved to another level starts afresh.
// Thread safety: Charge and charged may be called from any thread.
class SeekCharges {
 public:
  SeekCharges() = default;
  SeekCharges(const SeekCharges&) noexcept {}
  SeekCharges& operator=(const SeekCharges&) noexcept { return *this; }

  // Adds n; returns the count before.
  uint64_t Charge(uint64_t n) { return charged_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t charged() const { return charged_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> charged_{0};
};

// One table file as a Version sees it. Immutable once in a Version, except being_compacted and
// read_compaction_refused, which only change under the DB mutex, and pin and seeks, which are
// thread-safe.
struct FileMetaData {
  uint64_t number = 0;
  uint64_t file_size = 0;
  std::string smallest;  // internal keys
  std::string largest;
  SequenceNumber smallest_seqno = 0;
  SequenceNumber largest_seqno = 0;
  // Entries of the table's range-deletion block (table/format.h); 0 when it has none.
  uint64_t num_range_deletions = 0;
  bool being_compacted = false;
  // The picker found the read-triggered compaction this file's seeks asked for too wide to
  // run (read_compaction.h); it is not asked again for this file.
  bool read_compaction_refused = false;
  // The table's reader once a lookup opened it through an unbounded TableCache (see TablePin);
  // not part of the file's description (a copy holds none).
  mutable TablePin pin;
  mutable SeekCharges seeks;
};

}  // namespace shale
