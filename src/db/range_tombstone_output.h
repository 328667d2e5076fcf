// AddRangeTombstones: a fragmented tombstone list, or its part within a key range, written to a
// table being built (flush and compaction outputs), with the file's bounds widened to hold it.
// Thread safety: a free function; the list, builder and bounds belong to the caller.
#pragma once

#include <string>

#include "shale/status.h"
#include "src/base/dbformat.h"
#include "src/base/range_tombstone.h"
#include "table/table_builder.h"

namespace shale {

// Adds to builder the fragments of list that meet [lower, upper) (null: unbounded), clipped to
// it, and widens the file bounds *smallest / *largest (internal keys; empty: none yet) to hold
// them: a fragment [s, e) at newest sequence t spans from (s, t, kTypeRangeDeletion) to the
// sentinel of e. Returns how many fragments were added, or the builder's error in *status.
size_t AddRangeTombstones(const FragmentedRangeTombstoneList& list,
                          const InternalKeyComparator& icmp, const Slice* lower, const Slice* upper,
                          TableBuilder* builder, std::string* smallest, std::string* largest,
                          Status* status);

}  // namespace shale
