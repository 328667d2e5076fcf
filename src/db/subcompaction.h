// Subcompactions: one compaction's key range split into parts that separate threads compact
// at once (Options::max_subcompactions). Part i holds the user keys in [boundary i - 1,
// boundary i) — the first part from the smallest key, the last to the largest — so the parts'
// outputs are disjoint and, concatenated in part order, sorted: together they are what one
// compaction over the whole range would install. A user key's entries all fall in one part.
//
// The boundaries come from the input tables' indexes: each input yields up to 128 anchor keys
// with the bytes before them (TableReader::ApproximateKeyAnchors); sorted together, the anchors
// are cut where the running sum passes each multiple of the part size. Anchors of overlapping
// inputs interleave, so a part's bytes are estimates.
//
// Thread safety: reads the inputs' table readers (thread-safe) and the Compaction, which is
// read-only while it runs; needs no DB lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/status.h"
#include "src/db/compaction.h"

namespace shale {

class TableCache;

// The most parts one compaction is split into (Options and CompactRangeOptions
// max_subcompactions).
inline constexpr uint32_t kMaxSubcompactions = 64;

// Ascending, distinct user keys splitting c into at most max_parts parts of about equal input
// bytes, each at least min_part_bytes (empty: one part). An input whose index cannot be read
// counts as one anchor at its largest key.
std::vector<std::string> SubcompactionBoundaries(const Compaction& c, TableCache* tables,
                                                 const Comparator* ucmp, uint32_t max_parts,
                                                 uint64_t min_part_bytes);

}  // namespace shale
