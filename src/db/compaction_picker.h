// The leveled compaction picker (like RocksDB's default): which Compaction the tree needs.
//
// L0's score is its file count over level0_file_num_compaction_trigger; level n >= 1 scores
// its bytes (of files not being compacted) over max_bytes_for_level_base × multiplier^(n-1).
// The highest score >= 1 is compacted, or the next when its inputs are busy (several
// compactions may run at once): L0 takes every L0 file; level n takes one file, chosen by
// Options::compaction_pri: the one with the fewest overlapping next-level bytes per byte
// (kMinOverlappingRatio), or the next after the level's compaction pointer (kRoundRobin, round
// robin over the key space). The next level's files overlapping the inputs join them.
//
// Thread safety: REQUIRES the DB mutex (reads FileMetaData::being_compacted).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"
#include "src/db/compaction.h"
#include "src/db/version.h"

namespace shale {

class VersionSet;

// The compaction the tree needs most: of the levels whose score is >= 1, the highest-scoring
// one whose inputs no running compaction holds (marked being_compacted) and whose output key
// range no compaction in running writes into. Null when there is none. compact_pointers (one
// per level) is advanced for the level picked.
std::unique_ptr<Compaction> PickCompaction(const VersionSet& vset, std::shared_ptr<Version> version,
                                           const std::vector<const Compaction*>& running,
                                           std::vector<std::string>* compact_pointers);
// The highest level score (>= 1 means a compaction is due).
double MaxCompactionScore(const VersionSet& vset, const Version& version);
// The bytes compaction would read and write to bring every level under its target (0 when no
// compaction is due): all of L0 and L1 once L0 reaches its trigger; for a level n >= 1 over its
// target (counting what the level above sends down), the excess and the share of level n + 1
// it overlaps in proportion, excess × (1 + size(n + 1) / size(n)).
uint64_t EstimatePendingCompactionBytes(const VersionSet& vset, const Version& version);
// Every file of level overlapping [begin, end] (null: unbounded; at L0 every L0 file) plus the
// overlapping files of level + 1; null when level has none there (or they are busy).
std::unique_ptr<Compaction> RangeCompaction(const VersionSet& vset,
                                            std::shared_ptr<Version> version, int level,
                                            const Slice* begin, const Slice* end);

}  // namespace shale
