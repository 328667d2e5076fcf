// Compaction: a set of input files from one level and the overlapping files of the output
// level (the next one, or the base level for L0), to be merged into new files of the output
// level — and what survives of each user key's entries
// when they are merged (CompactKeyEntries). The picker that chooses the inputs is in
// compaction_picker.h.
//
// Ownership: shares the input Version and file metadata. Thread safety: built and marked under
// the DB mutex; read-only while the job runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "src/base/dbformat.h"
#include "src/db/version.h"
#include "src/db/version_edit.h"
#include "src/util/invariants.h"

namespace shale {

class MergeOperator;
class Statistics;

// Why a compaction runs (RocksDB's names where it has the reason, for the info log).
enum class CompactionReason : unsigned char {
  kUnknown,
  kLevelL0FilesNum,    // L0 reached its trigger (files, or bytes)
  kLevelMaxLevelSize,  // a level below L0 grew past its target
  kManualCompaction,   // CompactRange
  kReadTriggered,      // seeks paid enough for the sorted runs L0's files add
};
const char* CompactionReasonName(CompactionReason reason);

class Compaction {
 public:
  // output_level > level: the next level, or for L0 the base level (the first level below L0
  // that holds data when levels are sized dynamically; no level between them holds any).
  // output_level == level >= 1: the inputs are rewritten in place (CompactRange's
  // bottommost_level_compaction); inputs(1) is then empty.
  // target_output_file_size: the size outputs are cut at (target_file_size_base).
  Compaction(std::shared_ptr<Version> input_version, int level, int output_level,
             uint64_t target_output_file_size)
      : input_version_(std::move(input_version)),
        level_(level),
        output_level_(output_level),
        target_output_file_size_(target_output_file_size) {
    SHALE_ASSERT(output_level > level || (output_level == level && level >= 1));
  }

  int level() const { return level_; }
  int output_level() const { return output_level_; }
  const FileList& inputs(int which) const { return inputs_[which]; }
  FileList& mutable_inputs(int which) { return inputs_[which]; }
  // The files of the level below the output level that overlap the inputs' key range (empty
  // when the output level is the last): where outputs are best cut (GrandparentTracker).
  const FileList& grandparents() const { return grandparents_; }
  FileList& mutable_grandparents() { return grandparents_; }
  const Version& input_version() const { return *input_version_; }
  // Drops the input Version once the result is installed, so that the inputs it names are no
  // longer live and can be deleted. input_version() must not be called after.
  void ReleaseInputVersion() { input_version_.reset(); }
  uint64_t target_output_file_size() const { return target_output_file_size_; }
  CompactionReason reason() const { return reason_; }
  void set_reason(CompactionReason reason) { reason_ = reason; }
  // The size at which an output is finished wherever it is: the target when no file of the level
  // below the output level overlaps the inputs (no grandparents), else twice the target, so that an
  // output can run on to the boundary of a grandparent (GrandparentTracker cuts there from half the
  // target on) instead of ending inside one, which a later compaction of it would then have to
  // rewrite as well.
  uint64_t max_output_file_size() const {
    if (grandparents_.empty()) return target_output_file_size_;
    return target_output_file_size_ > UINT64_MAX / 2 ? UINT64_MAX : 2 * target_output_file_size_;
  }
  // Bytes of all the input files, or of inputs(which) alone.
  uint64_t InputBytes() const { return InputBytes(0) + InputBytes(1); }
  uint64_t InputBytes(int which) const;

  // The smallest and largest user keys of the input files: every output lies within them.
  std::pair<Slice, Slice> UserKeyRange(const Comparator* ucmp) const;
  // Nothing at the output level to merge with: the inputs can move down a level unchanged
  // (never for a compaction in place). At L0 only one file that no other L0 file overlaps; below
  // L0 any run of the picker's files, and one file of a manual compaction.
  bool IsTrivialMove() const;
  // Records the removal of every input in edit.
  void AddInputDeletions(VersionEdit* edit) const;
  // REQUIRES: DB mutex.
  void MarkBeingCompacted(bool value) const;
  std::string Describe() const;

 private:
  std::shared_ptr<Version> input_version_;
  const int level_;
  const int output_level_;
  const uint64_t target_output_file_size_;
  CompactionReason reason_ = CompactionReason::kUnknown;  // set by the picker
  FileList inputs_[2];
  FileList grandparents_;
};

// One entry of a user key inside a compaction, as read (newest first).
struct KeyEntry {
  std::string internal_key;
  std::string value;
  SequenceNumber sequence;
  ValueType type;
};

// What survives of one user key's entries (newest first) when they are compacted, given the
// live snapshots (ascending). Entries are grouped into stripes — the entries visible to the
// same oldest snapshot (or to no snapshot but the latest state). Within a stripe:
//   - a SingleDelete and a value right under it are both dropped; a SingleDelete over
//     anything else stays (dropped only as the key's oldest entry, in the oldest stripe, with
//     no deeper level holding the key) and the entries under it are decided as below;
//   - everything older than a value or deletion is hidden from every reader and dropped,
//     except a SingleDelete that does not cancel with the value right under it (it may be the
//     one that cancels an older value further down);
//   - merge operands are fully merged onto a value or a deletion below them in the stripe, or
//     onto nothing when they are the key's oldest entries and no deeper level holds the key
//     (with merge_operator set; a failing merge leaves the operands as they are, so reads
//     report it);
//   - operands that cannot be fully merged (older entries of the key may lie below) are
//     combined into one with PartialMergeMulti when the operator can, keeping the newest
//     operand's sequence;
//   - a deletion in the oldest stripe is dropped when no deeper level holds the key.
// nothing_below() answers "no level below the output holds this key" (asked only when needed).
void CompactKeyEntries(const Slice& user_key, std::vector<KeyEntry>* entries,
                       const std::vector<SequenceNumber>& snapshots,
                       const std::function<bool()>& nothing_below,
                       const MergeOperator* merge_operator, Statistics* stats,
                       std::vector<KeyEntry>* out);

}  // namespace shale
