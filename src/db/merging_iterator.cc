#include "src/db/merging_iterator.h"

#include <algorithm>
#include <string>

#include "src/base/async_read.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

class MergingIterator final : public InternalIterator {
 public:
  MergingIterator(const InternalKeyComparator* icmp,
                  std::vector<std::unique_ptr<InternalIterator>> children,
                  MergingIteratorOptions options)
      : icmp_(icmp), children_(std::move(children)), options_(std::move(options)) {
    SHALE_ASSERT(options_.newest_sequences.empty() ||
                 options_.newest_sequences.size() == children_.size());
    heap_.reserve(children_.size());
  }

  // A child that stops on an error ends the whole iteration: going on without it could show an
  // older version of a key whose newer one is in the failed child.
  bool Valid() const override { return status_.ok() && !heap_.empty(); }
  void SeekToFirst() override {
    deferred_.clear();
    for (auto& c : children_) c->SeekToFirst();
    Rebuild(kForward);
  }
  void SeekToLast() override {
    deferred_.clear();
    for (auto& c : children_) c->SeekToLast();
    Rebuild(kReverse);
  }
  void Seek(const Slice& target) override { (void)SeekCovered(target, target, 0, false); }
  // The children older than seq go to past, the others to target.
  bool SeekCovered(const Slice& target, const Slice& past, SequenceNumber seq,
                   bool backward) override {
    deferred_.clear();
    bool any_past = false;
    auto target_of = [&](size_t i) -> const Slice& { return OlderThan(i, seq) ? past : target; };
    ReadTogether([&] {
      for (size_t i = 0; i < children_.size(); i++) {
        children_[i]->PrepareSeek(target_of(i), backward, &staged_);
      }
    });
    for (size_t i = 0; i < children_.size(); i++) {
      any_past = any_past || OlderThan(i, seq);
      SeekChild(i, target_of(i), backward);
    }
    Rebuild(backward ? kReverse : kForward);
    return any_past;
  }
  // Children whose filters rule the prefix out wait, unpositioned, until iteration leaves
  // the prefix (CheckDeferred). false only when every child was ruled out.
  bool SeekInPrefix(const Slice& target, const PrefixSeek& prefix) override {
    deferred_.clear();
    ReadTogether([&] {
      for (auto& c : children_) c->PrepareSeekInPrefix(target, prefix, &staged_);
    });
    for (size_t i = 0; i < children_.size(); i++) {
      if (!children_[i]->SeekInPrefix(target, prefix)) deferred_.push_back(i);
    }
    if (deferred_.size() == children_.size()) {
      // Nothing positioned: empty, with no error of an earlier positioning left over.
      deferred_.clear();
      heap_.clear();
      status_ = Status::OK();
      direction_ = kForward;
      return false;
    }
    if (!deferred_.empty()) {
      deferred_target_.assign(target.data(), target.size());
      prefix_storage_.assign(prefix.prefix.data(), prefix.prefix.size());
      prefix_ = prefix;
      prefix_.prefix = Slice(prefix_storage_);
    }
    Rebuild(kForward);
    CheckDeferred();
    return true;
  }
  void SeekForPrev(const Slice& target) override { (void)SeekCovered(target, target, 0, true); }
  void Next() override {
    if (direction_ != kForward) {
      // Every other child moves to its first entry after the current key.
      const std::string current = key().ToString();
      InternalIterator* top = children_[heap_.front()].get();
      ReadTogether(current, false, top);
      for (auto& c : children_) {
        if (c.get() == top) continue;
        c->Seek(current);
        if (c->Valid() && icmp_->Compare(c->key(), current) == 0) c->Next();
      }
      top->Next();
      Rebuild(kForward);
      return;
    }
    children_[heap_.front()]->Next();
    FixTop();
    CheckDeferred();
  }
  void Prev() override {
    if (direction_ != kReverse) {
      deferred_.clear();  // the loop below positions them too
      // Every other child moves to its last entry before the current key.
      const std::string current = key().ToString();
      InternalIterator* top = children_[heap_.front()].get();
      ReadTogether(current, true, top);
      for (auto& c : children_) {
        if (c.get() == top) continue;
        c->SeekForPrev(current);
        if (c->Valid() && icmp_->Compare(c->key(), current) == 0) c->Prev();
      }
      top->Prev();
      Rebuild(kReverse);
      return;
    }
    children_[heap_.front()]->Prev();
    FixTop();
  }
  // Past a range tombstone's fragment: the children older than the tombstone that stand in
  // [start, end) all move at once (their entries there are deleted), then the heap is rebuilt.
  bool SkipCovered(const Slice& start, const Slice& end, SequenceNumber seq,
                   bool backward) override {
    if (options_.newest_sequences.empty() || !Valid()) return false;
    SHALE_ASSERT(backward == (direction_ == kReverse));
    const Comparator* ucmp = icmp_->user_comparator();
    covered_.clear();
    for (size_t i : heap_) {
      if (!OlderThan(i, seq)) continue;
      const Slice user_key = ExtractUserKey(children_[i]->key());
      if (backward ? ucmp->Compare(user_key, start) >= 0 : ucmp->Compare(user_key, end) < 0) {
        covered_.push_back(i);
      }
    }
    if (covered_.empty()) return false;
    // Forward: the first entry of end. Backward: the last entry before start's first one.
    skip_target_.clear();
    AppendInternalKey(&skip_target_, backward ? start : end, kMaxSequenceNumber, kValueTypeForSeek);
    SeekChildren(covered_, Slice(skip_target_), backward);
    Rebuild(direction_);
    if (!backward) CheckDeferred();
    return true;
  }
  Slice key() const override { return children_[heap_.front()]->key(); }
  Slice value() const override { return children_[heap_.front()]->value(); }
  Status status() const override {
    if (!status_.ok()) return status_;
    for (const auto& c : children_) {
      Status s = c->status();
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

 private:
  enum Direction { kForward, kReverse };

  // Whether every entry of child i is below seq (by options_.newest_sequences).
  bool OlderThan(size_t i, SequenceNumber seq) const {
    return !options_.newest_sequences.empty() && options_.newest_sequences[i] < seq;
  }
  // True when child a should be below child b in the heap (b is "better").
  bool Below(size_t a, size_t b) const {
    const int c = icmp_->Compare(children_[a]->key(), children_[b]->key());
    return direction_ == kForward ? c > 0 : c < 0;
  }
  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    while (true) {
      size_t best = i;
      const size_t l = 2 * i + 1, r = l + 1;
      if (l < n && Below(heap_[best], heap_[l])) best = l;
      if (r < n && Below(heap_[best], heap_[r])) best = r;
      if (best == i) return;
      std::swap(heap_[i], heap_[best]);
      i = best;
    }
  }
  // Once the forward scan leaves the prefix of a prefix seek, the children its filters
  // skipped are sought to the seek's target: they hold no key with the prefix, so their
  // first keys at or after it all sort after the keys shown so far. With stop_at_prefix_end
  // the reader stops there instead, and they are never read.
  void CheckDeferred() {
    if (deferred_.empty() || prefix_.stop_at_prefix_end) return;
    if (!heap_.empty() && prefix_.Matches(ExtractUserKey(children_[heap_.front()]->key()))) {
      return;
    }
    SeekChildren(deferred_, Slice(deferred_target_), /*backward=*/false);
    deferred_.clear();
    Rebuild(kForward);
  }
  // Before every child but skip seeks (for_prev: seeks for prev) to target: with async_fs, the
  // data blocks the children will land in and do not hold are read in one batch.
  void ReadTogether(const Slice& target, bool for_prev, const InternalIterator* skip) {
    ReadTogether([&] {
      for (auto& c : children_) {
        if (c.get() != skip) c->PrepareSeek(target, for_prev, &staged_);
      }
    });
  }
  // Child i seeks (backward: seeks for prev) to target.
  void SeekChild(size_t i, const Slice& target, bool backward) {
    if (backward) {
      children_[i]->SeekForPrev(target);
    } else {
      children_[i]->Seek(target);
    }
  }
  // The children listed in which seek (backward: for prev) to target, their reads together.
  void SeekChildren(const std::vector<size_t>& which, const Slice& target, bool backward) {
    ReadTogether([&] {
      for (size_t i : which) children_[i]->PrepareSeek(target, backward, &staged_);
    });
    for (size_t i : which) SeekChild(i, target, backward);
  }
  // With async_fs: prepare() readies the children's next positionings (PrepareSeek or
  // PrepareSeekInPrefix into staged_), then the staged reads run in one batch.
  template <typename Prepare>
  void ReadTogether(Prepare prepare) {
    if (options_.async_fs == nullptr) return;
    staged_.clear();
    prepare();
    if (staged_.size() >= 2) {  // one read: its child does it at once, without the ring
      // Looked up per call: the iterator may be used by another thread each time.
      AsyncReader* reader = ThreadAsyncReaderOrFallback(options_.async_fs, options_.stats);
      if (reader != nullptr) RunStagedReads(reader, options_.stats, staged_);
    }
    staged_.clear();  // the reads are owned by the children that staged them
  }
  // After every child was positioned (but the deferred ones): the heap of the valid ones, and
  // the first child error.
  void Rebuild(Direction d) {
    direction_ = d;
    heap_.clear();
    status_ = Status::OK();
    for (size_t i = 0; i < children_.size(); i++) {
      if (std::find(deferred_.begin(), deferred_.end(), i) != deferred_.end()) continue;
      if (children_[i]->Valid()) {
        heap_.push_back(i);
      } else {
        NoteError(*children_[i]);
      }
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
  }
  void NoteError(const InternalIterator& child) {
    if (status_.ok()) status_ = child.status();
  }
  // The top child moved: drop it if exhausted (or failed), else restore the heap order.
  void FixTop() {
    if (!children_[heap_.front()]->Valid()) {
      NoteError(*children_[heap_.front()]);
      heap_.front() = heap_.back();
      heap_.pop_back();
    }
    if (!heap_.empty()) SiftDown(0);
  }

  const InternalKeyComparator* const icmp_;
  std::vector<std::unique_ptr<InternalIterator>> children_;
  const MergingIteratorOptions options_;
  StagedReads staged_;        // ReadTogether's, kept to reuse its memory
  std::vector<size_t> heap_;  // indexes of valid children
  // SkipCovered's scratch: the children it moves, and their target.
  std::vector<size_t> covered_;
  std::string skip_target_;
  Direction direction_ = kForward;
  // Children a prefix seek left unpositioned (SeekInPrefix), with that seek's target and prefix.
  std::vector<size_t> deferred_;
  std::string deferred_target_;
  std::string prefix_storage_;
  PrefixSeek prefix_;
  // The first error of a child since the last repositioning of all children; not OK makes
  // this iterator invalid.
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewMergingIterator(
    const InternalKeyComparator* icmp, std::vector<std::unique_ptr<InternalIterator>> children,
    MergingIteratorOptions options) {
  if (children.size() == 1) return std::move(children[0]);
  return std::make_unique<MergingIterator>(icmp, std::move(children), std::move(options));
}

}  // namespace shale
