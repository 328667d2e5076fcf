// MergingIterator: the union of several sorted internal-key iterators (memtables, L0 files,
// levels) as one sorted iterator, in both directions. A binary heap over the children: a
// min-heap while moving forward, a max-heap while moving backward; changing direction re-seeks
// the other children around the current key.
// Internal keys are unique across children (each has its own sequence number), so no two
// children are ever positioned on equal keys.
// Ownership: owns the children. Thread safety: one thread at a time.
#pragma once

#include <memory>
#include <vector>

#include "shale/file_system.h"
#include "shale/statistics.h"
#include "src/base/dbformat.h"
#include "src/base/internal_iterator.h"

namespace shale {

// With async_fs, a seek first lets every child stage the data block it will land in
// (InternalIterator::PrepareSeek) and reads the missing ones together through the calling
// thread's reader for async_fs; stats counts the reads (ASYNC_READ_*).
//
// newest_sequences: per child, in order, a sequence no entry of the child is above
// (kMaxSequenceNumber: unknown). SeekCovered and SkipCovered move the children whose bound lies
// below a range tombstone's sequence past it; empty: they move none.
struct MergingIteratorOptions {
  std::shared_ptr<FileSystem> async_fs;
  Statistics* stats = nullptr;
  std::vector<SequenceNumber> newest_sequences;
};

std::unique_ptr<InternalIterator> NewMergingIterator(
    const InternalKeyComparator* icmp, std::vector<std::unique_ptr<InternalIterator>> children,
    MergingIteratorOptions options = {});

}  // namespace shale
