#include "src/db/db_iter.h"

#include <algorithm>
#include <string>
#include <vector>

#include "shale/statistics.h"
#include "src/base/dbformat.h"
#include "src/base/merge_helper.h"
#include "src/monitoring/perf_context_imp.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

class DBIter final : public Iterator {
 public:
  DBIter(const Comparator* ucmp, const MergeOperator* merge_operator, Statistics* stats,
         std::unique_ptr<InternalIterator> iter, SequenceNumber sequence,
         const DBIterOptions& options, std::unique_ptr<ReadSampler> sampler)
      : ucmp_(ucmp),
        merge_operator_(merge_operator),
        stats_(stats),
        iter_(std::move(iter)),
        sequence_(sequence),
        lower_(options.lower_bound),
        upper_(options.upper_bound),
        extractor_(options.prefix_extractor),
        prefix_same_as_start_(options.prefix_same_as_start),
        total_order_seek_(options.total_order_seek),
        max_skip_(options.max_sequential_skip_in_iterations),
        tombstones_(options.range_tombstones != nullptr && !options.range_tombstones->empty()
                        ? options.range_tombstones
                        : nullptr),
        sampler_(std::move(sampler)) {}

  bool Valid() const override { return valid_; }
  Slice key() const override { return Slice(key_); }
  Slice value() const override { return value_; }
  Status status() const override { return status_.ok() ? iter_->status() : status_; }

  void SeekToFirst() override {
    Reset();
    if (lower_ != nullptr) {
      SeekInternal(*lower_, sequence_);
    } else {
      iter_->SeekToFirst();
    }
    FindNextUserEntry(false, Slice());
  }
  void Seek(const Slice& target) override {
    Reset();
    const Slice& from = BelowLower(target) ? *lower_ : target;
    // The prefix is target's, as RocksDB's; the filters are asked only when the key sought
    // (the lower bound, for a target below it) has that prefix too.
    if (StartPrefix(target) && (&from == &target || InPrefix(from))) {
      lookup_.clear();
      AppendInternalKey(&lookup_, from, sequence_, kValueTypeForSeek);
      PrefixSeek seek{Slice(prefix_), extractor_, prefix_same_as_start_};
      if (iter_->SeekInPrefix(lookup_, seek)) {
        prefix_seek_ = true;
      } else {
        // No memtable or file holds the prefix.
        if (prefix_same_as_start_) return;
        SeekPastCovered(from, /*backward=*/false);
      }
    } else {
      SeekPastCovered(from, /*backward=*/false);
    }
    FindNextUserEntry(false, Slice());
    Sample();
  }
  void Next() override {
    SHALE_ASSERT(valid_);
    std::string skip = key_;
    if (reverse_) {
      // The internal iterator is before key_'s entries: back to the first of them.
      reverse_ = false;
      SeekInternal(skip, kMaxSequenceNumber);
    } else if (at_current_entry_) {
      // Step off the entry just returned (a merge result has already left its chain), so
      // that only older versions count as skipped.
      iter_->Next();
    }
    FindNextUserEntry(true, Slice(skip));
  }
  void SeekToLast() override {
    Reset();
    if (upper_ != nullptr) {
      SeekBeforeKey(*upper_);
    } else {
      iter_->SeekToLast();
    }
    reverse_ = true;
    PrevUserEntry();
  }
  void SeekForPrev(const Slice& target) override {
    Reset();
    StartPrefix(target);
    if (AtOrAboveUpper(target)) {
      SeekBeforeKey(*upper_);
    } else {
      SeekPastCovered(target, /*backward=*/true);
    }
    reverse_ = true;
    PrevUserEntry();
    Sample();
  }
  void Prev() override {
    SHALE_ASSERT(valid_);
    if (!reverse_) {
      // To the last entry before key_'s: the newest possible entry of key_ sorts before all
      // of them.
      reverse_ = true;
      SeekBeforeKey(key_);
    }
    // Going backward the internal iterator already stands on the previous key's last entry.
    PrevUserEntry();
  }

 private:
  void Reset() {
    prefix_seek_ = false;
    valid_ = false;
    at_current_entry_ = false;
    reverse_ = false;
    status_ = Status::OK();
    in_prefix_ = false;
    no_skip_.valid = false;
  }

  // After a seek: the key it landed on goes to the sampler.
  void Sample() {
    if (valid_ && sampler_ != nullptr) sampler_->Seeked(Slice(key_));
  }

  // A seek to key: with prefix_same_as_start, only keys of key's prefix are shown until the
  // next seek. true: the seek should be a prefix seek (the internal iterator may skip what
  // its filters rule out).
  bool StartPrefix(const Slice& key) {
    if (extractor_ == nullptr || !extractor_->InDomain(key)) return false;
    const Slice p = extractor_->Transform(key);
    prefix_.assign(p.data(), p.size());
    in_prefix_ = prefix_same_as_start_;
    return !total_order_seek_;
  }
  // Whether user_key has the prefix of the last seek (REQUIRES: StartPrefix returned true).
  bool InPrefix(const Slice& user_key) const {
    return extractor_->InDomain(user_key) && extractor_->Transform(user_key) == Slice(prefix_);
  }
  // Whether user_key lies outside the prefix the iterator is held to.
  bool OutsidePrefix(const Slice& user_key) const { return in_prefix_ && !InPrefix(user_key); }

  bool BelowLower(const Slice& user_key) const {
    return lower_ != nullptr && ucmp_->Compare(user_key, *lower_) < 0;
  }
  bool AtOrAboveUpper(const Slice& user_key) const {
    return upper_ != nullptr && ucmp_->Compare(user_key, *upper_) >= 0;
  }
  // To the last entry of the user keys before user_key: the newest possible entry of user_key
  // sorts before every entry of it.
  void SeekBeforeKey(const Slice& user_key) {
    lookup_.clear();
    AppendInternalKey(&lookup_, user_key, kMaxSequenceNumber, kValueTypeForSeek);
    iter_->SeekForPrev(lookup_);
  }

  // Seeks to user_key's newest entry at the read sequence (backward: seeks for prev to its
  // oldest possible entry, so that everything at or before it belongs to keys <= user_key).
  // Where a range tombstone covers user_key, the sorted runs older than it are positioned past
  // its fragment (cut to the bounds) instead: their entries there are deleted, and their
  // blocks are not read.
  void SeekPastCovered(const Slice& user_key, bool backward) {
    lookup_.clear();
    if (backward) {
      AppendInternalKey(&lookup_, user_key, 0, kTypeDeletion);
    } else {
      AppendInternalKey(&lookup_, user_key, sequence_, kValueTypeForSeek);
    }
    Slice start, end;
    SequenceNumber seq = CoveringFragment(user_key, backward, &start, &end);
    const Slice& past_key = backward ? start : end;
    // A bound may leave nothing of the fragment past user_key: then a plain seek.
    if (seq != 0 && (backward ? ucmp_->Compare(past_key, user_key) > 0
                              : ucmp_->Compare(past_key, user_key) <= 0)) {
      seq = 0;
    }
    if (seq == 0) {
      (void)iter_->SeekCovered(lookup_, lookup_, 0, backward);
      return;
    }
    past_.clear();
    AppendInternalKey(&past_, past_key, kMaxSequenceNumber, kValueTypeForSeek);
    if (iter_->SeekCovered(lookup_, past_, seq, backward)) {
      PerfCount(&PerfContext::internal_range_del_reseek_count);
    }
  }
  // The sequence of the newest range tombstone covering user_key at the read sequence (0: none)
  // and the bounds of its fragment, the one in the direction of iteration (forward: end;
  // backward: start) cut to the iterator's bound on that side.
  SequenceNumber CoveringFragment(const Slice& user_key, bool backward, Slice* start,
                                  Slice* end) const {
    if (tombstones_ == nullptr) return 0;
    const SequenceNumber seq = tombstones_->MaxCoveringRange(user_key, sequence_, start, end);
    if (seq == 0) return 0;
    if (!backward && upper_ != nullptr && ucmp_->Compare(*end, *upper_) > 0) *end = *upper_;
    if (backward && lower_ != nullptr && ucmp_->Compare(*start, *lower_) < 0) *start = *lower_;
    return seq;
  }

  void SeekInternal(const Slice& user_key, SequenceNumber seq) {
    lookup_.clear();
    AppendInternalKey(&lookup_, user_key, seq, kValueTypeForSeek);
    iter_->Seek(lookup_);
  }

  // True when the internal iterator stopped on an error, which then ends this iteration
  // (status_ holds it): going on could show an older version of a key whose newer one, or
  // whose deletion, could not be read.
  bool StoppedOnError() {
    if (iter_->Valid()) return false;
    Status s = iter_->status();
    if (s.ok()) return false;
    status_ = std::move(s);
    valid_ = false;
    return true;
  }

  // The entry now current, in the calling thread's PerfContext.
  void CountRead() const { PerfCount(&PerfContext::iter_read_bytes, key_.size() + value_.size()); }

  bool Parse(ParsedInternalKey* ikey) {
    if (!ParseInternalKey(iter_->key(), ikey)) {
      status_ = Status::Corruption("malformed internal key in iterator");
      valid_ = false;
      return false;
    }
    return true;
  }

  // Moves forward to the first visible, live user key (> skip when skipping).
  //
  // Entries stepped over come in runs of one user key: the older versions of a key already
  // decided (skip), or the versions of a key newer than the read. Past max_skip_ entries of
  // one run the internal iterator is sought past the run instead (once per run: entries a
  // seek cannot pass, as several of sequence 0, are then walked; not after a prefix seek).
  void FindNextUserEntry(bool skipping, Slice skip) {
    std::string skip_storage;
    valid_ = false;
    at_current_entry_ = false;
    uint64_t run_length = 0;
    bool run_sought = false;    // the current run was sought past already
    uint64_t covered_keys = 0;  // keys in a row a range tombstone deletes
    bool newer_run = false;     // the run is of entries newer than the read, of newer_key_
    while (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!Parse(&ikey)) return;
      if (AtOrAboveUpper(ikey.user_key)) return;  // past the range: nothing more to show
      if (OutsidePrefix(ikey.user_key)) return;
      const bool older = skipping && ucmp_->Compare(ikey.user_key, skip) <= 0;
      if (older || ikey.sequence > sequence_) {
        PerfCount(&PerfContext::internal_key_skipped_count);
        if (!older && (!newer_run || !ucmp_->Equal(ikey.user_key, newer_key_))) {
          newer_key_.assign(ikey.user_key.data(), ikey.user_key.size());
          newer_run = true;
          run_length = 0;
          run_sought = false;
        }
        // Not after a prefix seek: a plain seek would position the children its filters left
        // out, reading files that cannot hold the prefix.
        if (++run_length > max_skip_ && !run_sought && !prefix_seek_) {
          run_sought = true;
          if (stats_ != nullptr) stats_->recordTick(NUMBER_OF_RESEEKS_IN_ITERATION);
          // Past every entry of skip; or to newer_key_'s newest entry the read sees.
          if (older) {
            SeekInternal(skip, 0);
          } else {
            SeekInternal(newer_key_, sequence_);
          }
          continue;
        }
        iter_->Next();
        continue;
      }
      // The key's newest visible entry: a range tombstone above it deletes the key.
      ValueType type = ikey.type;
      covering_ =
          tombstones_ != nullptr ? tombstones_->MaxCoveringSeq(ikey.user_key, sequence_) : 0;
      if (ikey.sequence < covering_) type = kTypeDeletion;
      key_.assign(ikey.user_key.data(), ikey.user_key.size());
      switch (DecideCurrentKey(type, /*copy_value=*/false)) {
        case Decision::kLive:
          valid_ = true;
          at_current_entry_ = type == kTypeValue;  // a merge has left its chain
          CountRead();
          return;
        case Decision::kFailed:
          return;
        case Decision::kDeleted:
          PerfCount(&PerfContext::internal_delete_skipped_count);
          skip_storage = key_;
          skip = Slice(skip_storage);
          skipping = true;
          newer_run = false;  // a run of skip's older versions starts
          run_length = 0;
          run_sought = false;
          if (ikey.sequence >= covering_) {
            covered_keys = 0;
          } else if (++covered_keys > max_skip_ &&
                     SkipCoveredRange(/*backward=*/false, covering_)) {
            covered_keys = 0;
            break;  // the internal iterator stands on the first entry left
          }
          iter_->Next();
          break;
      }
    }
    StoppedOnError();
  }

  enum class Decision { kLive, kDeleted, kFailed };
  // The internal iterator is at key_'s newest entry the read sees, of `type` (a deletion where
  // a range tombstone covers it; merges stop at covering_). kLive: value_ holds the key's
  // value, in the internal iterator's memory unless copy_value (then in saved_value_, as a
  // merge result always is). kFailed: status_ is set.
  Decision DecideCurrentKey(ValueType type, bool copy_value) {
    switch (type) {
      case kTypeValue:
        if (copy_value) {
          saved_value_.assign(iter_->value().data(), iter_->value().size());
          value_ = Slice(saved_value_);
        } else {
          value_ = iter_->value();
        }
        return Decision::kLive;
      case kTypeMerge:
        return MergeFromCurrent() ? Decision::kLive : Decision::kFailed;
      case kTypeDeletion:
      case kTypeSingleDeletion:
        return Decision::kDeleted;
      case kTypeRangeDeletion:
        FailOnRangeTombstone();
        return Decision::kFailed;
    }
    SHALE_ASSERT(false && "unknown value type");
    return Decision::kFailed;
  }

  // Past max_skip_ keys in a row covered by range tombstones (not after a prefix seek): the
  // sorted runs older than the tombstone covering key_ at `covering` move past its fragment,
  // cut to the bounds, all at once (forward: to the fragment's end; backward: before its
  // start). Whether any moved. When none could, the rest of the fragment is not tried again.
  bool SkipCoveredRange(bool backward, SequenceNumber covering) {
    if (prefix_seek_) return false;
    if (no_skip_.valid && no_skip_.backward == backward && no_skip_.seq == covering &&
        (backward ? ucmp_->Compare(key_, no_skip_.until) >= 0
                  : ucmp_->Compare(key_, no_skip_.until) < 0)) {
      return false;
    }
    Slice start, end;
    const SequenceNumber seq = CoveringFragment(key_, backward, &start, &end);
    SHALE_ASSERT(seq == covering);
    if (!iter_->SkipCovered(start, end, seq, backward)) {
      // No older run stands in the fragment before key_ leaves it.
      no_skip_.valid = true;
      no_skip_.backward = backward;
      no_skip_.seq = seq;
      no_skip_.until.assign(backward ? start.data() : end.data(),
                            backward ? start.size() : end.size());
      return false;
    }
    PerfCount(&PerfContext::internal_range_del_reseek_count);
    return true;
  }

  // Unreachable: Parse refuses range tombstones (they live in their own blocks).
  void FailOnRangeTombstone() {
    SHALE_ASSERT(false && "ParseInternalKey refuses range tombstones");
    status_ = Status::Corruption("range tombstone among point entries");
  }

  // The internal iterator is at a visible Merge entry of key_: collects operands down to a
  // base value, a deletion, an entry below covering_ (a range tombstone's) or the end, and
  // merges. false (status_ set) if the merge fails.
  bool MergeFromCurrent() {
    if (merge_operator_ == nullptr) {
      status_ = Status::InvalidArgument("merge operand found but no merge_operator set");
      return false;
    }
    std::vector<std::string> operands;  // newest first
    operands.emplace_back(iter_->value().ToStringView());
    std::string base;
    bool has_base = false;
    for (iter_->Next(); iter_->Valid(); iter_->Next()) {
      ParsedInternalKey ikey;
      if (!Parse(&ikey)) return false;
      if (!ucmp_->Equal(ikey.user_key, key_)) break;
      if (ikey.sequence < covering_) break;  // deleted by a range tombstone: no base
      if (ikey.type == kTypeMerge) {
        operands.emplace_back(iter_->value().ToStringView());
        continue;
      }
      if (ikey.type == kTypeValue) {
        base.assign(iter_->value().data(), iter_->value().size());
        has_base = true;
      }
      break;  // a value or a deletion ends the chain
    }
    if (StoppedOnError()) return false;  // the rest of the chain could not be read
    std::reverse(operands.begin(), operands.end());
    std::vector<Slice> slices(operands.begin(), operands.end());
    Slice base_slice(base);
    status_ = FullMerge(merge_operator_, key_, has_base ? &base_slice : nullptr, slices,
                        &saved_value_, stats_);
    if (!status_.ok()) return false;
    value_ = Slice(saved_value_);
    return true;
  }

  // From the last entry of a user key (or of the keys before it), walks back to the nearest
  // user key with a live value at the read sequence. A key's entries come oldest first going
  // backward, so its state is known once the walk has passed all of them: the internal
  // iterator then stands on the previous key's last entry, where the next Prev goes on. Past
  // max_skip_ entries of one key (not after a prefix seek) the key is decided by a seek
  // instead (DecideKeyBySeek).
  void PrevUserEntry() {
    valid_ = false;
    at_current_entry_ = false;
    uint64_t covered_keys = 0;  // keys in a row whose oldest entry a range tombstone covers
    while (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!Parse(&ikey)) return;
      if (BelowLower(ikey.user_key)) return;  // before the range: nothing more to show
      if (OutsidePrefix(ikey.user_key)) return;
      key_.assign(ikey.user_key.data(), ikey.user_key.size());
      // The visible entries, oldest first: a value or a deletion starts over; merge operands
      // pile up on it. Entries below a covering range tombstone count as deletions.
      const SequenceNumber covering =
          tombstones_ != nullptr ? tombstones_->MaxCoveringSeq(key_, sequence_) : 0;
      // The key's oldest entry, deleted by a range tombstone: past max_skip_ such keys in a
      // row the older sorted runs move before the tombstone's fragment at once.
      if (ikey.sequence >= covering) {
        covered_keys = 0;
      } else if (++covered_keys > max_skip_ && SkipCoveredRange(/*backward=*/true, covering)) {
        covered_keys = 0;
        continue;
      }
      bool has_base = false, any_visible = false;
      std::vector<std::string> operands;  // oldest first
      uint64_t walked = 0;
      do {
        if (walked++ >= max_skip_ && !prefix_seek_) {
          operands.clear();
          if (!DecideKeyBySeek(covering, &has_base, &any_visible)) return;
          break;
        }
        if (ikey.sequence <= sequence_) {
          any_visible = true;
          switch (ikey.sequence < covering ? kTypeDeletion : ikey.type) {
            case kTypeValue:
              saved_value_.assign(iter_->value().data(), iter_->value().size());
              has_base = true;
              operands.clear();
              break;
            case kTypeDeletion:
            case kTypeSingleDeletion:
              has_base = false;
              operands.clear();
              break;
            case kTypeMerge:
              operands.emplace_back(iter_->value().ToStringView());
              break;
            case kTypeRangeDeletion:
              FailOnRangeTombstone();
              return;
          }
        } else {
          PerfCount(&PerfContext::internal_key_skipped_count);
        }
        iter_->Prev();
        if (!iter_->Valid()) break;
        if (!Parse(&ikey)) return;
      } while (ucmp_->Equal(ikey.user_key, key_));
      if (StoppedOnError()) return;  // older entries of the key, or its newer ones, unread
      if (!operands.empty()) {
        if (merge_operator_ == nullptr) {
          status_ = Status::InvalidArgument("merge operand found but no merge_operator set");
          return;
        }
        std::vector<Slice> slices(operands.begin(), operands.end());
        const std::string base = has_base ? saved_value_ : std::string();
        const Slice base_slice(base);
        status_ = FullMerge(merge_operator_, key_, has_base ? &base_slice : nullptr, slices,
                            &saved_value_, stats_);
        if (!status_.ok()) return;
        has_base = true;
      } else if (any_visible && !has_base) {
        PerfCount(&PerfContext::internal_delete_skipped_count);
      }
      if (has_base) {
        value_ = Slice(saved_value_);
        valid_ = true;
        CountRead();
        return;
      }
    }
    StoppedOnError();
  }

  // PrevUserEntry's way past many entries of key_: reads the key's newest entries the read sees
  // going forward from a seek (as FindNextUserEntry does; entries below `covering` count as
  // deleted), then sets the internal iterator on the previous key's last entry. *live: key_
  // has a value, now in saved_value_; *visible: an entry of key_ is visible. false (status_
  // set) on an error.
  bool DecideKeyBySeek(SequenceNumber covering, bool* live, bool* visible) {
    if (stats_ != nullptr) stats_->recordTick(NUMBER_OF_RESEEKS_IN_ITERATION);
    *live = false;
    *visible = false;
    SeekInternal(key_, sequence_);
    if (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!Parse(&ikey)) return false;
      // On another key, none of key_'s entries is visible.
      if (ucmp_->Equal(ikey.user_key, key_)) {
        *visible = true;
        covering_ = covering;
        switch (DecideCurrentKey(ikey.sequence < covering ? kTypeDeletion : ikey.type,
                                 /*copy_value=*/true)) {
          case Decision::kLive:
            *live = true;  // the value is in saved_value_
            break;
          case Decision::kDeleted:
            break;
          case Decision::kFailed:
            return false;
        }
      }
    } else if (StoppedOnError()) {
      return false;
    }
    SeekBeforeKey(key_);
    return true;
  }

  const Comparator* const ucmp_;
  const MergeOperator* const merge_operator_;
  Statistics* const stats_;
  const std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber sequence_;
  const Slice* const lower_;  // ReadOptions::iterate_lower_bound / upper_bound (may be null)
  const Slice* const upper_;
  const SliceTransform* const extractor_;  // may be null
  const bool prefix_same_as_start_;
  const bool total_order_seek_;
  const uint64_t max_skip_;  // entries of one run stepped over before seeking past it
  // Range tombstones the read sees (null: none); covering_: the newest covering the key at
  // hand, set where FindNextUserEntry decides a key.
  const std::shared_ptr<const RangeTombstoneSet> tombstones_;
  SequenceNumber covering_ = 0;

  bool valid_ = false;
  // The prefix of the last seek's key; in_prefix_: keys outside it are not shown.
  std::string prefix_;
  bool in_prefix_ = false;
  // The last seek was a prefix seek (some children may be left unpositioned until it leaves the
  // prefix): FindNextUserEntry does not seek past runs.
  bool prefix_seek_ = false;
  bool at_current_entry_ = false;  // iter_ is at the entry key_/value_ came from
  // Moving backward: iter_ stands before key_'s entries (on the previous key's last one).
  bool reverse_ = false;
  Status status_;
  std::string key_;
  Slice value_;
  std::string saved_value_;  // merge results
  std::string lookup_;       // seek target scratch
  std::string past_;         // SeekPastCovered's target for the older sorted runs
  // A fragment SkipCoveredRange found no older run in: the tombstone's sequence, the direction,
  // and the fragment's end (backward: its start), cut to the bounds. Cleared by every seek.
  struct {
    bool valid = false;
    bool backward = false;
    SequenceNumber seq = 0;
    std::string until;
  } no_skip_;
  std::string newer_key_;  // FindNextUserEntry: the key of a run of entries newer than the read
  const std::unique_ptr<ReadSampler> sampler_;  // may be null
};

class ErrorIterator final : public Iterator {
 public:
  explicit ErrorIterator(Status status) : status_(std::move(status)) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(const Slice&) override {}
  void SeekForPrev(const Slice&) override {}
  void Next() override { SHALE_ASSERT(false); }
  void Prev() override { SHALE_ASSERT(false); }
  Slice key() const override { return Slice(); }
  Slice value() const override { return Slice(); }
  Status status() const override { return status_; }

 private:
  const Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(const Comparator* user_comparator,
                                        const MergeOperator* merge_operator, Statistics* stats,
                                        std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, const DBIterOptions& options,
                                        std::unique_ptr<ReadSampler> sampler) {
  return std::make_unique<DBIter>(user_comparator, merge_operator, stats, std::move(internal),
                                  sequence, options, std::move(sampler));
}

std::unique_ptr<Iterator> NewErrorIterator(const Status& status) {
  return std::make_unique<ErrorIterator>(status);
}

}  // namespace shale
