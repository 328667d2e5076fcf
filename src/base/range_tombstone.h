// Range tombstones: a DeleteRange(start, end) written at sequence s deletes every entry of a user
// key in [start, end) whose sequence is below s.
//
// FragmentedRangeTombstoneList is the form readers use: tombstones cut at every start and end so
// that fragments never overlap, each fragment [start, end) carrying the sequence numbers of the
// tombstones that cover it, newest first. The newest tombstone covering a key at a read sequence
// is then one binary search over the fragments and a short walk down one stack.
//
// A table stores the list it was written with one entry per (fragment, sequence) pair, in
// internal-key order (table/format.h); a reader rebuilds the list from those entries, so any set
// of tombstones, fragmented or not, gives the same list.
//
// Ownership: a list owns copies of its keys. Thread safety: immutable after construction; shared
// through shared_ptr<const FragmentedRangeTombstoneList> by readers on many threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "shale/snapshot.h"

namespace shale {

// Deletes [start, end) below seq. A tombstone with start >= end deletes nothing.
struct RangeTombstone {
  std::string start;
  std::string end;
  SequenceNumber seq = 0;
};

class FragmentedRangeTombstoneList {
 public:
  struct Fragment {
    std::string start;
    std::string end;  // exclusive; start < end
    // The fragment's sequence numbers are seqs_[seq_begin, seq_end), strictly decreasing.
    uint32_t seq_begin = 0;
    uint32_t seq_end = 0;
  };

  // Fragments tombstones given in any order; empty ranges are left out. ucmp must outlive the
  // list. With snapshots (ascending), a fragment keeps only the newest sequence of each stripe
  // between consecutive snapshots: no reader can tell the older ones of a stripe apart from it.
  FragmentedRangeTombstoneList(const Comparator* ucmp, std::vector<RangeTombstone> tombstones,
                               const std::vector<SequenceNumber>* snapshots = nullptr);
  FragmentedRangeTombstoneList(const FragmentedRangeTombstoneList&) = delete;
  FragmentedRangeTombstoneList& operator=(const FragmentedRangeTombstoneList&) = delete;

  bool empty() const { return fragments_.empty(); }
  const std::vector<Fragment>& fragments() const { return fragments_; }
  std::span<const SequenceNumber> seqs(const Fragment& f) const {
    return std::span<const SequenceNumber>(seqs_).subspan(f.seq_begin, f.seq_end - f.seq_begin);
  }
  // (fragment, sequence) pairs: the entries a table stores for this list.
  size_t num_entries() const { return seqs_.size(); }
  SequenceNumber smallest_seq() const { return smallest_seq_; }
  SequenceNumber largest_seq() const { return largest_seq_; }

  // The index of the fragment holding user_key, or fragments().size() when none does.
  size_t FindFragment(const Slice& user_key) const;
  // The largest tombstone sequence <= read_seq whose range holds user_key; 0 when none (no
  // entry has a sequence below 0). An entry of user_key with a smaller sequence is deleted.
  SequenceNumber MaxCoveringSeq(const Slice& user_key, SequenceNumber read_seq) const;
  // As MaxCoveringSeq, and when a tombstone covers user_key, *fragment is the fragment holding
  // it (every key in it is covered at the same sequences).
  SequenceNumber MaxCoveringSeq(const Slice& user_key, SequenceNumber read_seq,
                                const Fragment** fragment) const;
  // Calls fn(start, end, seqs) for each fragment cut to [lower, upper) (null: no bound), in
  // order, leaving out those the cut empties.
  template <typename Fn>
  void ForEachClipped(const Slice* lower, const Slice* upper, Fn&& fn) const {
    for (const Fragment& f : fragments_) {
      Slice start(f.start), end(f.end);
      if (lower != nullptr && ucmp_->Compare(end, *lower) <= 0) continue;
      if (upper != nullptr && ucmp_->Compare(start, *upper) >= 0) break;
      if (lower != nullptr && ucmp_->Compare(start, *lower) < 0) start = *lower;
      if (upper != nullptr && ucmp_->Compare(end, *upper) > 0) end = *upper;
      fn(start, end, seqs(f));
    }
  }
  // Whether every user key in [begin, end] (end_inclusive) or [begin, end) lies in a fragment
  // holding a sequence in (newer_than, at_most]: gap-free fragments from begin to end.
  bool CoversRange(const Slice& begin, const Slice& end, bool end_inclusive,
                   SequenceNumber newer_than, SequenceNumber at_most) const;

 private:
  const Comparator* const ucmp_;
  std::vector<Fragment> fragments_;  // by start; disjoint
  std::vector<SequenceNumber> seqs_;
  SequenceNumber smallest_seq_ = 0;
  SequenceNumber largest_seq_ = 0;
};

using RangeTombstoneLists = std::vector<std::shared_ptr<const FragmentedRangeTombstoneList>>;

// The range tombstones one read sees, from all its sources (memtables, tables) at once: an entry
// of a key is deleted when any source holds a newer tombstone covering the key.
// Ownership: shares the lists. Thread safety: immutable once built.
class RangeTombstoneSet {
 public:
  explicit RangeTombstoneSet(RangeTombstoneLists lists) : lists_(std::move(lists)) {}
  bool empty() const { return lists_.empty(); }
  // The largest tombstone sequence <= read_seq covering user_key in any list; 0 when none.
  SequenceNumber MaxCoveringSeq(const Slice& user_key, SequenceNumber read_seq) const {
    SequenceNumber best = 0;
    for (const auto& list : lists_) best = std::max(best, list->MaxCoveringSeq(user_key, read_seq));
    return best;
  }
  // As MaxCoveringSeq; when a tombstone covers user_key, [*start, *end) is a range around it
  // where that tombstone's sequence deletes every older entry (its fragment in the list holding
  // it). The slices stay valid while this set lives.
  SequenceNumber MaxCoveringRange(const Slice& user_key, SequenceNumber read_seq, Slice* start,
                                  Slice* end) const {
    SequenceNumber best = 0;
    for (const auto& list : lists_) {
      const FragmentedRangeTombstoneList::Fragment* f = nullptr;
      const SequenceNumber s = list->MaxCoveringSeq(user_key, read_seq, &f);
      if (s > best) {
        best = s;
        *start = Slice(f->start);
        *end = Slice(f->end);
      }
    }
    return best;
  }

 private:
  const RangeTombstoneLists lists_;
};

}  // namespace shale
