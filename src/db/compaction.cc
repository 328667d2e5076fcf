#include "src/db/compaction.h"

#include <fmt/format.h>

#include <deque>

#include "src/base/merge_helper.h"

namespace shale {

uint64_t Compaction::InputBytes() const {
  uint64_t n = 0;
  for (const auto& which : inputs_) {
    for (const auto& f : which) n += f->file_size;
  }
  return n;
}

bool Compaction::IsTrivialMove() const {
  // An L0 file may overlap other L0 files that are older: moving it below them would reorder
  // versions, so L0 moves only when it is the only L0 file overlapping its range.
  if (inputs_[0].size() != 1 || !inputs_[1].empty()) return false;
  if (level_ > 0) return true;
  const FileMetaData& f = *inputs_[0][0];
  const Slice lo = ExtractUserKey(f.smallest), hi = ExtractUserKey(f.largest);
  return input_version_->OverlappingInputs(0, &lo, &hi).size() == 1;
}

void Compaction::AddInputDeletions(VersionEdit* edit) const {
  for (int which = 0; which < 2; which++) {
    for (const auto& f : inputs_[which]) edit->DeleteFile(level_ + which, f->number);
  }
}

void Compaction::MarkBeingCompacted(bool value) const {
  for (const auto& which : inputs_) {
    for (const auto& f : which) f->being_compacted = value;
  }
}

std::string Compaction::Describe() const {
  return fmt::format("L{}: {} files + L{}: {} files, {} bytes", level_, inputs_[0].size(),
                     level_ + 1, inputs_[1].size(), InputBytes());
}

namespace {

double LevelScore(const VersionSet& vset, const Version& v, int level) {
  if (level == 0) {
    return static_cast<double>(v.files(0).size()) /
           vset.options().level0_file_num_compaction_trigger;
  }
  uint64_t bytes = 0;
  for (const auto& f : v.files(level)) {
    if (!f->being_compacted) bytes += f->file_size;
  }
  return static_cast<double>(bytes) / static_cast<double>(vset.MaxBytesForLevel(level));
}

bool AnyBusy(const FileList& files) {
  for (const auto& f : files) {
    if (f->being_compacted) return true;
  }
  return false;
}

// Adds the files of level + 1 that overlap the user-key range of c's inputs.
bool AddNextLevelInputs(const Comparator* ucmp, Compaction* c) {
  const FileList& in = c->inputs(0);
  Slice lo = ExtractUserKey(in[0]->smallest), hi = ExtractUserKey(in[0]->largest);
  for (const auto& f : in) {
    if (ucmp->Compare(ExtractUserKey(f->smallest), lo) < 0) lo = ExtractUserKey(f->smallest);
    if (ucmp->Compare(ExtractUserKey(f->largest), hi) > 0) hi = ExtractUserKey(f->largest);
  }
  c->mutable_inputs(1) = c->input_version().OverlappingInputs(c->output_level(), &lo, &hi);
  return !AnyBusy(c->inputs(1));
}

uint64_t OutputFileSize(const VersionSet& vset) { return vset.options().target_file_size_base; }

}  // namespace

double MaxCompactionScore(const VersionSet& vset, const Version& version) {
  double best = 0;
  for (int level = 0; level + 1 < version.num_levels(); level++) {
    best = std::max(best, LevelScore(vset, version, level));
  }
  return best;
}

std::unique_ptr<Compaction> PickCompaction(const VersionSet& vset, std::shared_ptr<Version> version,
                                           std::vector<std::string>* compact_pointers) {
  int best_level = -1;
  double best = 1;
  for (int level = 0; level + 1 < version->num_levels(); level++) {
    const double score = LevelScore(vset, *version, level);
    if (score >= best) {
      best = score;
      best_level = level;
    }
  }
  if (best_level < 0) return nullptr;
  const Comparator* ucmp = vset.icmp()->user_comparator();
  auto c = std::make_unique<Compaction>(version, best_level, OutputFileSize(vset));
  const FileList& files = version->files(best_level);
  if (best_level == 0) {
    if (AnyBusy(files)) return nullptr;
    c->mutable_inputs(0) = files;
  } else {
    // The first file after the compaction pointer, wrapping around.
    const std::string& ptr = (*compact_pointers)[best_level];
    std::shared_ptr<FileMetaData> pick;
    for (const auto& f : files) {
      if (f->being_compacted) continue;
      if (ptr.empty() || vset.icmp()->Compare(f->largest, ptr) > 0) {
        pick = f;
        break;
      }
    }
    if (pick == nullptr) {
      for (const auto& f : files) {
        if (!f->being_compacted) {
          pick = f;
          break;
        }
      }
    }
    if (pick == nullptr) return nullptr;
    c->mutable_inputs(0).push_back(pick);
    (*compact_pointers)[best_level] = pick->largest;
  }
  if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;
  return c;
}

std::unique_ptr<Compaction> RangeCompaction(const VersionSet& vset,
                                            std::shared_ptr<Version> version, int level,
                                            const Slice* begin, const Slice* end) {
  FileList in = version->OverlappingInputs(level, begin, end);
  if (in.empty() || AnyBusy(in)) return nullptr;
  // L0 files overlap one another: taking some but not older overlapping ones would move newer
  // data below older data. L0 always goes down whole.
  if (level == 0) in = version->files(0);
  auto c = std::make_unique<Compaction>(version, level, OutputFileSize(vset));
  c->mutable_inputs(0) = std::move(in);
  if (!AddNextLevelInputs(vset.icmp()->user_comparator(), c.get())) return nullptr;
  return c;
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
    // [i, end) is one stripe, newest first.
    size_t k = i;
    while (k < end && e[k].type == kTypeMerge) k++;
    if (k == i) {
      // Starts with a value or deletion: it hides the rest of the stripe.
      const bool drop_tombstone =
          e[i].type == kTypeDeletion && stripe == earliest && end == n && none_below();
      if (!drop_tombstone) out->push_back(std::move(e[i]));
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
        if (base_here) out->push_back(std::move(e[k]));
      }
    }
    i = end;
  }
}

}  // namespace shale
