#include "src/base/range_tombstone.h"

#include <algorithm>
#include <limits>

#include "src/util/invariants.h"

namespace shale {

FragmentedRangeTombstoneList::FragmentedRangeTombstoneList(
    const Comparator* ucmp, std::vector<RangeTombstone> tombstones,
    const std::vector<SequenceNumber>* snapshots)
    : ucmp_(ucmp) {
  SHALE_ASSERT(ucmp_ != nullptr);
  const auto less = [this](const std::string& a, const std::string& b) {
    return ucmp_->Compare(a, b) < 0;
  };
  std::erase_if(tombstones,
                [this](const RangeTombstone& t) { return ucmp_->Compare(t.start, t.end) >= 0; });
  if (tombstones.empty()) return;
  std::sort(
      tombstones.begin(), tombstones.end(),
      [&](const RangeTombstone& a, const RangeTombstone& b) { return less(a.start, b.start); });

  // Every start and end, in order: fragments lie between consecutive boundaries.
  std::vector<const std::string*> bounds;
  bounds.reserve(tombstones.size() * 2);
  for (const RangeTombstone& t : tombstones) {
    bounds.push_back(&t.start);
    bounds.push_back(&t.end);
  }
  std::sort(bounds.begin(), bounds.end(),
            [&](const std::string* a, const std::string* b) { return less(*a, *b); });
  bounds.erase(std::unique(bounds.begin(), bounds.end(),
                           [this](const std::string* a, const std::string* b) {
                             return ucmp_->Compare(*a, *b) == 0;
                           }),
               bounds.end());

  smallest_seq_ = std::numeric_limits<SequenceNumber>::max();
  // The tombstones covering the current fragment: those started at or before it and not ended.
  std::vector<const RangeTombstone*> active;
  std::vector<SequenceNumber> stack;
  size_t next = 0;
  for (size_t i = 0; i + 1 < bounds.size(); i++) {
    const std::string& from = *bounds[i];
    std::erase_if(active,
                  [&](const RangeTombstone* t) { return ucmp_->Compare(t->end, from) <= 0; });
    while (next < tombstones.size() && ucmp_->Compare(tombstones[next].start, from) <= 0) {
      active.push_back(&tombstones[next++]);
    }
    if (active.empty()) continue;
    stack.clear();
    for (const RangeTombstone* t : active) stack.push_back(t->seq);
    std::sort(stack.begin(), stack.end(), std::greater<>());
    stack.erase(std::unique(stack.begin(), stack.end()), stack.end());
    if (snapshots != nullptr) {
      // Newest first: keep a sequence only when a snapshot lies between it and the one kept
      // before it (with no snapshot, only the newest).
      const auto stripe = [snapshots](SequenceNumber s) {
        return std::lower_bound(snapshots->begin(), snapshots->end(), s) - snapshots->begin();
      };
      size_t kept = 1;
      for (size_t j = 1; j < stack.size(); j++) {
        if (stripe(stack[j]) != stripe(stack[kept - 1])) stack[kept++] = stack[j];
      }
      stack.resize(kept);
    }
    Fragment f;
    f.start = from;
    f.end = *bounds[i + 1];
    f.seq_begin = static_cast<uint32_t>(seqs_.size());
    seqs_.insert(seqs_.end(), stack.begin(), stack.end());
    f.seq_end = static_cast<uint32_t>(seqs_.size());
    smallest_seq_ = std::min(smallest_seq_, stack.back());
    largest_seq_ = std::max(largest_seq_, stack.front());
    fragments_.push_back(std::move(f));
  }
  SHALE_ASSERT(!fragments_.empty());
}

size_t FragmentedRangeTombstoneList::FindFragment(const Slice& user_key) const {
  // The first fragment ending after user_key; it holds the key when it starts at or before it.
  auto it = std::upper_bound(
      fragments_.begin(), fragments_.end(), user_key,
      [this](const Slice& key, const Fragment& f) { return ucmp_->Compare(key, f.end) < 0; });
  if (it == fragments_.end() || ucmp_->Compare(it->start, user_key) > 0) {
    return fragments_.size();
  }
  return static_cast<size_t>(it - fragments_.begin());
}

SequenceNumber FragmentedRangeTombstoneList::MaxCoveringSeq(const Slice& user_key,
                                                            SequenceNumber read_seq) const {
  const Fragment* fragment = nullptr;
  return MaxCoveringSeq(user_key, read_seq, &fragment);
}

SequenceNumber FragmentedRangeTombstoneList::MaxCoveringSeq(const Slice& user_key,
                                                            SequenceNumber read_seq,
                                                            const Fragment** fragment) const {
  if (fragments_.empty() || read_seq < smallest_seq_) return 0;
  const size_t i = FindFragment(user_key);
  if (i == fragments_.size()) return 0;
  for (SequenceNumber s : seqs(fragments_[i])) {
    if (s <= read_seq) {
      *fragment = &fragments_[i];
      return s;
    }
  }
  return 0;
}

bool FragmentedRangeTombstoneList::CoversRange(const Slice& begin, const Slice& end,
                                               bool end_inclusive, SequenceNumber newer_than,
                                               SequenceNumber at_most) const {
  if (ucmp_->Compare(begin, end) > 0 || (!end_inclusive && ucmp_->Compare(begin, end) == 0)) {
    return true;  // no key
  }
  const size_t first = FindFragment(begin);
  for (size_t i = first; i < fragments_.size(); i++) {
    const Fragment& f = fragments_[i];
    if (i != first && ucmp_->Compare(fragments_[i - 1].end, f.start) != 0) return false;
    const auto s = seqs(f);
    if (std::none_of(s.begin(), s.end(),
                     [&](SequenceNumber q) { return q > newer_than && q <= at_most; })) {
      return false;
    }
    const int c = ucmp_->Compare(end, f.end);
    if (c < 0 || (c == 0 && !end_inclusive)) return true;
  }
  return false;
}

}  // namespace shale
