#include "src/db/compaction_picker.h"

#include <algorithm>

#include "src/db/version_set.h"
#include "src/util/invariants.h"

namespace shale {

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

// kRoundRobin: the first file after the level's compaction pointer, wrapping around.
std::shared_ptr<FileMetaData> PickRoundRobin(const VersionSet& vset, const FileList& files,
                                             const std::string& pointer) {
  for (const auto& f : files) {
    if (f->being_compacted) continue;
    if (pointer.empty() || vset.icmp()->Compare(f->largest, pointer) > 0) return f;
  }
  for (const auto& f : files) {
    if (!f->being_compacted) return f;
  }
  return nullptr;
}

// kMinOverlappingRatio: the file whose overlapping bytes in the next level, over its own size,
// are the fewest (the first such in key order); files whose overlapping next-level files are
// being compacted are skipped. One sweep: both levels are sorted and disjoint.
std::shared_ptr<FileMetaData> PickMinOverlappingRatio(const Comparator* ucmp, const FileList& files,
                                                      const FileList& next) {
  std::shared_ptr<FileMetaData> best;
  double best_ratio = 0;
  size_t first = 0;  // the first next-level file that can meet the current file or later ones
  for (const auto& f : files) {
    const Slice lo = ExtractUserKey(f->smallest), hi = ExtractUserKey(f->largest);
    while (first < next.size() && ucmp->Compare(ExtractUserKey(next[first]->largest), lo) < 0) {
      first++;
    }
    if (f->being_compacted) continue;
    uint64_t overlap = 0;
    bool busy = false;
    for (size_t k = first;
         k < next.size() && ucmp->Compare(ExtractUserKey(next[k]->smallest), hi) <= 0; k++) {
      overlap += next[k]->file_size;
      busy = busy || next[k]->being_compacted;
    }
    if (busy) continue;
    const double ratio =
        static_cast<double>(overlap) / static_cast<double>(std::max<uint64_t>(f->file_size, 1));
    if (best == nullptr || ratio < best_ratio) {
      best = f;
      best_ratio = ratio;
    }
  }
  return best;
}

uint64_t OutputFileSize(const VersionSet& vset) { return vset.options().target_file_size_base; }

// What every compaction the picker returns guarantees (see the invariant at its use).
[[maybe_unused]] bool InputsComplete(const Comparator* ucmp, const Compaction& c) {
  const Version& v = c.input_version();
  const FileList& in = c.inputs(0);
  if (in.empty()) return false;
  if (c.level() == 0 && in.size() != v.files(0).size()) return false;
  // The user-key span of all the inputs.
  Slice lo = ExtractUserKey(in[0]->smallest), hi = ExtractUserKey(in[0]->largest);
  for (int which = 0; which < 2; which++) {
    for (const auto& f : c.inputs(which)) {
      if (ucmp->Compare(ExtractUserKey(f->smallest), lo) < 0) lo = ExtractUserKey(f->smallest);
      if (ucmp->Compare(ExtractUserKey(f->largest), hi) > 0) hi = ExtractUserKey(f->largest);
    }
  }
  const FileList& next = c.inputs(1);
  for (const auto& f : v.files(c.output_level())) {
    const Slice smallest = ExtractUserKey(f->smallest), largest = ExtractUserKey(f->largest);
    if (ucmp->Compare(smallest, largest) > 0) continue;  // not a range: see the invariant
    if (std::find(next.begin(), next.end(), f) != next.end()) continue;
    if (ucmp->Compare(largest, lo) >= 0 && ucmp->Compare(smallest, hi) <= 0) return false;
  }
  return true;
}

}  // namespace

double MaxCompactionScore(const VersionSet& vset, const Version& version) {
  double best = 0;
  for (int level = 0; level + 1 < version.num_levels(); level++) {
    best = std::max(best, LevelScore(vset, version, level));
  }
  return best;
}

uint64_t EstimatePendingCompactionBytes(const VersionSet& vset, const Version& version) {
  const int last = version.num_levels() - 1;
  uint64_t pending = 0;
  uint64_t carried = 0;  // bytes the level above sends down
  if (version.files(0).size() >=
      static_cast<size_t>(vset.options().level0_file_num_compaction_trigger)) {
    carried = version.NumLevelBytes(0);
    pending = carried + version.NumLevelBytes(1);
  }
  for (int level = 1; level < last; level++) {
    const uint64_t size = version.NumLevelBytes(level) + carried;
    const uint64_t target = vset.MaxBytesForLevel(level);
    carried = 0;
    if (size <= target) continue;
    carried = size - target;
    const double fan_out = static_cast<double>(version.NumLevelBytes(level + 1)) /
                           static_cast<double>(std::max<uint64_t>(size, 1));
    pending += static_cast<uint64_t>(static_cast<double>(carried) * (1 + fan_out));
  }
  return pending;
}

namespace {

// Whether c would write into a key range of its output level that a running compaction writes
// into. The inputs of running compactions are marked being_compacted and the picker never takes
// them, which already keeps such ranges apart (the span a compaction writes at its output level
// is covered by its own inputs, or at L1 by the whole of L0); this check states it outright.
bool OutputConflicts(const Comparator* ucmp, const Compaction& c,
                     const std::vector<const Compaction*>& running) {
  const auto [lo, hi] = c.UserKeyRange(ucmp);
  for (const Compaction* r : running) {
    if (r->output_level() != c.output_level()) continue;
    const auto [rlo, rhi] = r->UserKeyRange(ucmp);
    if (ucmp->Compare(hi, rlo) >= 0 && ucmp->Compare(rhi, lo) >= 0) return true;
  }
  return false;
}

// The compaction of level that the picker would run, or null when its inputs are busy.
std::unique_ptr<Compaction> PickAtLevel(const VersionSet& vset, std::shared_ptr<Version> version,
                                        int level, const std::vector<std::string>& pointers) {
  const Comparator* ucmp = vset.icmp()->user_comparator();
  auto c = std::make_unique<Compaction>(version, level, OutputFileSize(vset));
  const FileList& files = version->files(level);
  if (level == 0) {
    if (AnyBusy(files)) return nullptr;
    c->mutable_inputs(0) = files;
  } else {
    std::shared_ptr<FileMetaData> pick =
        vset.options().compaction_pri == CompactionPri::kRoundRobin
            ? PickRoundRobin(vset, files, pointers[level])
            : PickMinOverlappingRatio(ucmp, files, version->files(level + 1));
    if (pick == nullptr) return nullptr;
    c->mutable_inputs(0).push_back(pick);
  }
  if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;
  return c;
}

}  // namespace

std::unique_ptr<Compaction> PickCompaction(const VersionSet& vset, std::shared_ptr<Version> version,
                                           const std::vector<const Compaction*>& running,
                                           std::vector<std::string>* compact_pointers) {
  // Levels due for compaction, the highest score first; the first whose inputs are free wins.
  std::vector<std::pair<double, int>> due;
  for (int level = 0; level + 1 < version->num_levels(); level++) {
    const double score = LevelScore(vset, *version, level);
    if (score >= 1) due.emplace_back(score, level);
  }
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const Comparator* ucmp = vset.icmp()->user_comparator();
  for (const auto& [score, level] : due) {
    std::unique_ptr<Compaction> c = PickAtLevel(vset, version, level, *compact_pointers);
    if (c == nullptr || OutputConflicts(ucmp, *c, running)) continue;
    if (level > 0) (*compact_pointers)[level] = c->inputs(0)[0]->largest;
    // Invariant: of every compaction it returns, the picker guarantees (given a Version whose
    // levels below L0 are sorted and disjoint, as VersionBuilder makes every Version):
    //   - inputs(0) is not empty, and at L0 it is every L0 file (L0 files overlap one another:
    //     leaving an older one behind would put newer data below it);
    //   - inputs(1) is exactly the files of the output level whose user-key range meets [lo, hi],
    //     the user-key span of inputs(0) (AddNextLevelInputs). They need not cover [lo, hi]
    //     (there may be gaps between them), but no other file of the output level is in it;
    //   - hence every other file of the output level lies wholly outside the user-key span of
    //     all the inputs (its largest user key below the span's smallest, or its smallest above
    //     the span's largest), so the outputs, whose keys all come from the inputs, cannot
    //     overlap it;
    //   - no input is being compacted, and no running compaction writes into the key range of
    //     the output level that this one writes into.
    // Asserted: the first and the third. The third for the files whose smallest user key <=
    // their largest: the engine writes no other, but recovery accepts a MANIFEST that lists one,
    // and such a file can meet the span without meeting [lo, hi].
    SHALE_ASSERT(InputsComplete(ucmp, *c));
    return c;
  }
  return nullptr;
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
  const Comparator* ucmp = vset.icmp()->user_comparator();
  if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;
  // Invariant: as PickCompaction's.
  SHALE_ASSERT(InputsComplete(ucmp, *c));
  return c;
}

}  // namespace shale
