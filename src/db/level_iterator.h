// LevelIterator: one iterator over all the files of a level below L0 (sorted, non-overlapping),
// opening each file's table iterator only when the scan reaches it.
// Ownership: shares the FileMetaData it was given; the TableCache must outlive it.
// Thread safety: one thread at a time.
#pragma once

#include <memory>

#include "shale/options.h"
#include "src/base/dbformat.h"
#include "src/base/internal_iterator.h"
#include "src/db/version.h"

namespace shale {

std::unique_ptr<InternalIterator> NewLevelIterator(TableCache* table_cache,
                                                   const ReadOptions& options,
                                                   const InternalKeyComparator* icmp,
                                                   FileList files);

}  // namespace shale
