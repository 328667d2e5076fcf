#include "src/db/compaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "shale/merge_operator.h"
#include "src/base/merge_helper.h"
#include "src/util/invariants.h"

namespace shale {

uint64_t Compaction::InputBytes(int which) const {
  uint64_t n = 0;
  for (const auto& f : inputs_[which]) n += f->file_size;
  return n;
}

std::pair<Slice, Slice> Compaction::UserKeyRange(const Comparator* ucmp) const {
  SHALE_ASSERT(!inputs_[0].empty());
  Slice lo = ExtractUserKey(inputs_[0][0]->smallest), hi = ExtractUserKey(inputs_[0][0]->largest);
  for (const auto& which : inputs_) {
    for (const auto& f : which) {
      if (ucmp->Compare(ExtractUserKey(f->smallest), lo) < 0) lo = ExtractUserKey(f->smallest);
      if (ucmp->Compare(ExtractUserKey(f->largest), hi) > 0) hi = ExtractUserKey(f->largest);
    }
  }
  return {lo, hi};
}

bool Compaction::IsTrivialMove() const {
  // An L0 file may overlap other L0 files that are older: moving it below them would reorder
  // versions, so L0 moves only when it is the only L0 file overlapping its range.
  if (inputs_[0].empty() || !inputs_[1].empty() || level_ == output_level_) return false;
  // A manual compaction of several files rewrites them, as it always has.
  if (level_ > 0) return inputs_[0].size() == 1 || reason_ != CompactionReason::kManualCompaction;
  if (inputs_[0].size() != 1) return false;
  const FileMetaData& f = *inputs_[0][0];
  const Slice lo = ExtractUserKey(f.smallest), hi = ExtractUserKey(f.largest);
  return input_version_->OverlappingInputs(0, &lo, &hi).size() == 1;
}

void Compaction::AddInputDeletions(VersionEdit* edit) const {
  for (int which = 0; which < 2; which++) {
    for (const auto& f : inputs_[which]) {
      edit->DeleteFile(which == 0 ? level_ : output_level_, f->number);
    }
  }
}

void Compaction::MarkBeingCompacted(bool value) const {
  for (const auto& which : inputs_) {
    for (const auto& f : which) f->being_compacted = value;
  }
}

const char* CompactionReasonName(CompactionReason reason) {
  switch (reason) {
    case CompactionReason::kLevelL0FilesNum:
      return "LevelL0FilesNum";
    case CompactionReason::kLevelMaxLevelSize:
      return "LevelMaxLevelSize";
    case CompactionReason::kManualCompaction:
      return "ManualCompaction";
    case CompactionReason::kReadTriggered:
      return "ReadTriggered";
    case CompactionReason::kUnknown:
      break;
  }
  return "Unknown";
}

std::string Compaction::Describe() const {
  return fmt::format("L{}: {} files + L{}: {} files, {} bytes", level_, inputs_[0].size(),
                     output_level_, inputs_[1].size(), InputBytes());
}

namespace {

SequenceNumber StripeOf(SequenceNumber seq, const std::vector<SequenceNumber>& snapshots) {
  auto it = std::lower_bound(snapshots.begin(), snapshots.end(), seq);
  return it == snapshots.end() ? kMaxSequenceNumber : *it;
}

}  // namespace

void CompactKeyEntries(const Slice& user_key, std::vector<KeyEntry>* entries,
                       const std::vector<SequenceNumber>& snapshots,
                       const std::function<bool()>& nothing_below,
                       const MergeOperator* merge_operator, Statistics* stats,
                       std::vector<KeyEntry>* out) {
  std::vector<KeyEntry>& e = *entries;
  const size_t n = e.size();
  const SequenceNumber earliest = snapshots.empty() ? kMaxSequenceNumber : snapshots.front();
  int below = -1;  // nothing_below(), computed at most once
  auto none_below = [&] {
    if (below < 0) below = nothing_below() ? 1 : 0;
    return below == 1;
  };
  // A merge result replacing a run of operands.
  auto emit = [&](ValueType type, SequenceNumber seq, std::string value) {
    KeyEntry r;
    r.sequence = seq;
    r.type = type;
    AppendInternalKey(&r.internal_key, user_key, seq, type);
    r.value = std::move(value);
    out->push_back(std::move(r));
  };
  size_t i = 0;
  while (i < n) {
    const SequenceNumber stripe = StripeOf(e[i].sequence, snapshots);
    size_t end = i;
    while (end < n && StripeOf(e[end].sequence, snapshots) == stripe) end++;
    // [i, end) is one stripe, newest first. A SingleDelete and the value right under it in the
    // stripe cancel out (no snapshot between them: no reader can see the value without the
    // deletion). A SingleDelete over anything else stays and hides nothing here, since it
    // cancels only one value: what follows it is decided as the stripe's head.
    while (i < end && e[i].type == kTypeSingleDeletion) {
      if (i + 1 < end && e[i + 1].type == kTypeValue) {
        i += 2;
        continue;
      }
      const bool drop_tombstone = i + 1 == n && stripe == earliest && none_below();
      if (!drop_tombstone) out->push_back(std::move(e[i]));
      i++;
    }
    if (i == end) continue;
    // Under a value or deletion, the stripe's older entries are hidden, but a SingleDelete
    // among them may be the one that cancels an older value of the key further down (in an
    // older stripe or a deeper level): if it went, that value would come back once the entry
    // over it goes (a value cancelled by a later SingleDelete, a deletion hidden by a later
    // value). Such single deletions stay, under it; those that cancel with the value right
    // under them go, as do the rest.
    auto keep_single_deletes_under = [&](size_t from) {
      for (size_t j = from; j < end; j++) {
        if (e[j].type != kTypeSingleDeletion) continue;
        if (j + 1 < end && e[j + 1].type == kTypeValue) {
          j++;
          continue;
        }
        if (j + 1 == n && none_below()) continue;  // nothing older anywhere to cancel
        out->push_back(std::move(e[j]));
      }
    };
    size_t k = i;
    while (k < end && e[k].type == kTypeMerge) k++;
    if (k == i) {
      // Starts with a value or deletion: it hides the rest of the stripe.
      const ValueType head = e[i].type;
      const bool drop_tombstone =
          head == kTypeDeletion && stripe == earliest && end == n && none_below();
      if (!drop_tombstone) out->push_back(std::move(e[i]));
      keep_single_deletes_under(i + 1);
    } else {
      // Operands [i, k), then maybe a base or deletion at k.
      const bool base_here = k < end;
      const bool nothing_older = k == n && none_below();
      bool merged = false;
      const bool full = base_here || nothing_older;
      if (merge_operator != nullptr && full) {
        std::vector<Slice> operands;  // oldest first
        for (size_t j = k; j-- > i;) operands.emplace_back(e[j].value);
        const Slice base_value = base_here && e[k].type == kTypeValue ? Slice(e[k].value) : Slice();
        const Slice* base = base_here && e[k].type == kTypeValue ? &base_value : nullptr;
        std::string result;
        if (FullMerge(merge_operator, user_key, base, operands, &result, stats).ok()) {
          emit(kTypeValue, e[i].sequence, std::move(result));
          keep_single_deletes_under(k + 1);
          merged = true;
        }
      }
      if (!merged && merge_operator != nullptr && !full && k - i >= 2) {
        // Older entries of the key may live below: the operands can only be combined with
        // each other, into one operand that takes the newest one's place.
        std::deque<Slice> operands;  // oldest first
        for (size_t j = k; j-- > i;) operands.emplace_back(e[j].value);
        std::string result;
        if (merge_operator->PartialMergeMulti(user_key, operands, &result)) {
          emit(kTypeMerge, e[i].sequence, std::move(result));
          merged = true;
        }
      }
      if (!merged) {
        for (size_t j = i; j < k; j++) out->push_back(std::move(e[j]));
        // The base or deletion under them stays (it hides the rest of the stripe).
        if (base_here) {
          out->push_back(std::move(e[k]));
          keep_single_deletes_under(k + 1);
        }
      }
    }
    i = end;
  }
}

}  // namespace shale
