// DBIter: the user-visible Iterator over an InternalIterator. It hides entries newer than the
// read sequence, drops deleted keys, resolves merge operands, and shows each user key once.
//
// Both directions walk the internal iterator: forward, a key's newest visible entry decides
// (a merge reads on to its base); backward, a key's entries arrive oldest first, so its value
// is known once the walk has passed them all. Only a change of direction seeks. An entry below
// the newest range tombstone covering its key (DBIterOptions::range_tombstones) is deleted.
// Thread safety: one thread at a time. Ownership: owns the internal iterator; the caller keeps
// what that iterator reads alive (cleanups registered on the returned Iterator).
#pragma once

#include <memory>

#include "shale/comparator.h"
#include "shale/iterator.h"
#include "shale/merge_operator.h"
#include "shale/snapshot.h"
#include "src/base/internal_iterator.h"
#include "src/base/range_tombstone.h"
#include "src/db/read_compaction.h"

namespace shale {

class Statistics;

// What a DBIter shows beyond the visible, live keys at its sequence.
struct DBIterOptions {
  // Only user keys in [lower_bound, upper_bound) (ReadOptions::iterate_lower_bound /
  // iterate_upper_bound; may be null, and must outlive the iterator).
  const Slice* lower_bound = nullptr;
  const Slice* upper_bound = nullptr;
  // The family's prefix extractor (may be null; must outlive the iterator). With one, a seek
  // to a key in its domain asks the internal iterator for a prefix seek unless
  // total_order_seek, and with prefix_same_as_start shows only keys of that prefix.
  const SliceTransform* prefix_extractor = nullptr;
  bool prefix_same_as_start = false;
  bool total_order_seek = false;
  // ColumnFamilyOptions::max_sequential_skip_in_iterations.
  uint64_t max_sequential_skip_in_iterations = 8;
  // The range tombstones of every source of the internal iterator (null or empty: none),
  // gathered apart from it: its children may be left unpositioned by a prefix seek or left out
  // by bounds, while a tombstone in any source can delete a key of another.
  std::shared_ptr<const RangeTombstoneSet> range_tombstones;
};

// sampler (may be null) is told the key of every seek that lands on one (read-triggered
// compaction).
std::unique_ptr<Iterator> NewDBIterator(const Comparator* user_comparator,
                                        const MergeOperator* merge_operator, Statistics* stats,
                                        std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence,
                                        const DBIterOptions& options = DBIterOptions(),
                                        std::unique_ptr<ReadSampler> sampler = nullptr);

// An iterator that is never valid and reports status.
std::unique_ptr<Iterator> NewErrorIterator(const Status& status);

}  // namespace shale
