// BuildTable: writes the entries of a sorted internal-key iterator (a memtable being flushed)
// as one table file, synced and closed, and describes it in *meta. An empty iterator writes no
// file (meta->file_size stays 0). On failure the partial file is deleted. With limiter, the
// writes pass it at kHigh (a flush).
// Thread safety: a free function; the iterator belongs to the caller.
#pragma once

#include <string>

#include "shale/file_system.h"
#include "shale/rate_limiter.h"
#include "shale/statistics.h"
#include "shale/status.h"
#include "src/base/internal_iterator.h"
#include "src/db/version_edit.h"
#include "table/table_builder.h"

namespace shale {

[[nodiscard]] Status BuildTable(const std::string& dbname, FileSystem* fs,
                                const TableBuilderOptions& options, InternalIterator* iter,
                                FileMetaData* meta, RateLimiter* limiter = nullptr,
                                Statistics* stats = nullptr);

}  // namespace shale
