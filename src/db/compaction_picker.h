// The leveled compaction picker (like RocksDB's default): which Compaction the tree needs.
//
// L0's score is its file count over level0_file_num_compaction_trigger; level n >= 1 scores
// its bytes (of files not being compacted) over its target (LevelTargets). Under dynamic sizing
// L0 also scores by bytes, and as in RocksDB, scores of 1 and more are scaled so that L0 and
// levels over their targets rank above levels that drain, and a level about to receive much from
// above ranks lower.
// The highest score >= 1 is compacted, or the next when its inputs are busy (several
// compactions may run at once): L0 takes every L0 file (into the base level); level n takes one
// file, chosen by Options::compaction_pri: the one with the fewest overlapping next-level bytes per
// byte (kMinOverlappingRatio), or the next after the level's compaction pointer (kRoundRobin, round
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

struct FamilyConfig;

// The target size of each level and where L0 compacts to. Static sizing (the default): L0
// compacts to L1, whose target is max_bytes_for_level_base, each deeper level's a multiplier
// larger. Dynamic sizing (Options::level_compaction_dynamic_level_bytes, as RocksDB's): the
// largest level below L0 sets the shape — the last level's target is that size, each level up a
// multiplier smaller — and L0 compacts to the base level, the deepest one whose target fits
// max_bytes_for_level_base (the last level while nothing lies below L0); the levels between L0
// and it stay empty. No target is set below max_bytes_for_level_base. When data sits in more
// levels than its size needs (fewer bytes than a level's share), those levels drain down.
struct LevelTargets {
  int base_level = 1;
  // Levels in [1, lowest_unnecessary_level] hold data that belongs deeper (-1: none).
  int lowest_unnecessary_level = -1;
  // Per level; the maximum for levels above the base level (never compacted by size).
  std::vector<uint64_t> max_bytes;
};
LevelTargets ComputeLevelTargets(const Options& options, const Version& version);

// The compaction the tree needs most: of the levels whose score is >= 1, the highest-scoring
// one whose inputs no running compaction holds (marked being_compacted) and whose output key
// range no compaction in running writes into. Null when there is none. compact_pointers (one
// per level) is advanced for the level picked.
std::unique_ptr<Compaction> PickCompaction(const FamilyConfig& family,
                                           std::shared_ptr<Version> version,
                                           const std::vector<const Compaction*>& running,
                                           std::vector<std::string>* compact_pointers);
// A read-triggered compaction (read_compaction.h): when an L0 file has exhausted its allowed
// seeks and is not refused, every L0 file into the base level, with the base level's
// overlapping files. When that would take more than 10 × target_file_size_base, or 35 × L0's
// bytes, of the base level, the exhausted files are marked read_compaction_refused instead.
// Null when there is none to run now; *blocked then says whether one waits on inputs or key
// ranges that running compactions hold.
std::unique_ptr<Compaction> PickReadCompaction(const FamilyConfig& family,
                                               std::shared_ptr<Version> version,
                                               const std::vector<const Compaction*>& running,
                                               bool* blocked);
// The highest level score (>= 1 means a compaction is due).
double MaxCompactionScore(const FamilyConfig& family, const Version& version);
// The bytes compaction would read and write to bring every level under its target (0 when no
// compaction is due): all of L0 and L1 once L0 reaches its trigger; for a level n >= 1 over its
// target (counting what the level above sends down), the excess and the share of level n + 1
// it overlaps in proportion, excess × (1 + size(n + 1) / size(n)).
uint64_t EstimatePendingCompactionBytes(const FamilyConfig& family, const Version& version);
// Every file of level overlapping [begin, end] (null: unbounded; at L0 every L0 file) plus the
// overlapping files of its output level (level + 1, or the base level for L0); null when level has
// none there (or they are busy).
std::unique_ptr<Compaction> RangeCompaction(const FamilyConfig& family,
                                            std::shared_ptr<Version> version, int level,
                                            const Slice* begin, const Slice* end);
// A compaction of level (>= 1) into itself: the first run of consecutive files of level
// overlapping [begin, end] (null: unbounded) whose numbers are below first_skipped_number and
// that no compaction holds. Null when there is none. Called again after it has run (its outputs
// having numbers at or above first_skipped_number), it takes the next such run.
std::unique_ptr<Compaction> InPlaceCompaction(const FamilyConfig& family,
                                              std::shared_ptr<Version> version, int level,
                                              const Slice* begin, const Slice* end,
                                              uint64_t first_skipped_number);

}  // namespace shale
