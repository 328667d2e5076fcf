// BuildTable: writes the entries of a sorted internal-key iterator (a memtable being flushed)
// and its range tombstones as one table file, synced and closed, and describes it in *meta. With
// neither entries nor tombstones no file is written (meta->file_size stays 0). On failure the
// partial file is deleted. With limiter, the writes pass it at kHigh (a flush).
// Thread safety: a free function; the iterator belongs to the caller.
#pragma once

#include <string>
#include <vector>

#include "shale/file_system.h"
#include "shale/rate_limiter.h"
#include "shale/statistics.h"
#include "shale/status.h"
#include "src/base/internal_iterator.h"
#include "src/base/range_tombstone.h"
#include "src/db/version_edit.h"
#include "table/table_builder.h"

namespace shale {

// What a flush drops: the versions of a user key that no reader can see, given the live
// snapshots (ascending) — those under a newer value or deletion in the same snapshot stripe
// (CompactKeyEntries' rules; deletions stay, as older data may lie below), and a single
// deletion with the value under it. A key with merge operands keeps all its entries:
// compactions merge them. When nothing is left no table is written (meta->file_size 0).
struct FlushFilter {
  const std::vector<SequenceNumber>* snapshots;
};

// With filter, iter's key() and value() must stay valid until iter is destroyed (a memtable's
// do): a user key's entries are gathered before they are decided.
// tombstones (may be null) are written whole; the file's bounds cover them.
[[nodiscard]] Status BuildTable(const std::string& dbname, FileSystem* fs,
                                const FileOptions& file_options, const TableBuilderOptions& options,
                                InternalIterator* iter, FileMetaData* meta,
                                const FlushFilter* filter = nullptr, RateLimiter* limiter = nullptr,
                                Statistics* stats = nullptr,
                                const FragmentedRangeTombstoneList* tombstones = nullptr);

}  // namespace shale
