// FileMetaData: one table file as a Version sees it (its number, size, key and sequence
// range), and the file's pinned reader once a lookup opened it (TablePin).
#pragma once

#include <cstdint>
#include <string>

#include "src/base/dbformat.h"
#include "src/db/table_pin.h"

namespace shale {

// One table file as a Version sees it. Immutable once in a Version, except being_compacted,
// which only changes under the DB mutex, and pin, which is thread-safe.
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
  // The table's reader once a lookup opened it through an unbounded TableCache (see TablePin);
  // not part of the file's description (a copy holds none).
  mutable TablePin pin;
};

}  // namespace shale
