// GrandparentTracker: where a compaction cuts its outputs at the boundaries of the files one
// level below its output level.
//
// Ownership: holds pointers to the comparator and to the grandparent list, which the
// Compaction owns and which outlive the tracker. Thread safety: see the class.
#pragma once

#include <cstddef>
#include <cstdint>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "src/db/version.h"

namespace shale {

// Where a compaction's outputs are cut besides max_output_file_size: at the boundaries of the
// grandparent files (the level below the output level), so that a later compaction of an
// output overlaps few of them. Before a user key that crosses a grandparent boundary, the open
// output is finished when
//   - with the grandparent bytes it overlaps, it would exceed 25 × the target file size (the
//     largest compaction of it later);
//   - the key skips a whole grandparent file of more than 1/8 of the target size (so that a
//     later compaction of the output need not rewrite that file);
//   - it holds 50% of the target size, plus 5% for each boundary it has crossed, at most 90%
//     (a boundary is a good place to cut, and more are likely to come when many came).
// Keys are fed in order, each once; a user key never spans two files of a level.
//
// Thread safety: used by one compaction part's thread; grandparents are read-only metadata.
class GrandparentTracker {
 public:
  GrandparentTracker(const Comparator* ucmp, const FileList* grandparents, uint64_t target)
      : ucmp_(ucmp), grandparents_(grandparents), target_(target) {}

  // Moves to user_key, the next key to be written; true when the open output, holding
  // output_bytes, should be finished before it (never for the first key). After a cut the
  // next output starts its own count.
  bool CutBefore(const Slice& user_key, bool output_open, uint64_t output_bytes);

 private:
  // The size of the grandparent the last key lies in (0 in a gap): where a new count starts.
  uint64_t BytesAtKey() const;

  const Comparator* const ucmp_;
  const FileList* const grandparents_;  // sorted, disjoint
  const uint64_t target_;
  size_t index_ = 0;    // the grandparent the last key is in, or the first after its gap
  bool in_gap_ = true;  // the last key lies before grandparents_[index_] (or after all)
  bool seen_key_ = false;
  uint64_t overlapped_bytes_ = 0;  // grandparent bytes the open output's keys overlap
  size_t boundaries_crossed_ = 0;  // by the open output
};

}  // namespace shale
