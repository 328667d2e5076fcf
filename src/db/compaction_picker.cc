#include "src/db/compaction_picker.h"

#include <algorithm>
#include <limits>

#include "src/db/read_compaction.h"
#include "src/db/version_set.h"
#include "src/util/invariants.h"

namespace shale {

namespace {

// Dynamic sizing ranks L0 and levels over their targets on a scale 10× that of levels under
// them, and the draining of unnecessary levels between the two (as RocksDB does).
constexpr double kScoreScale = 10;

uint64_t BytesNotBeingCompacted(const FileList& files) {
  uint64_t bytes = 0;
  for (const auto& f : files) {
    if (!f->being_compacted) bytes += f->file_size;
  }
  return bytes;
}

// Every level's score (the last level's is 0: nothing lies below it).
std::vector<double> LevelScores(const Options& o, const Version& v, const LevelTargets& t) {
  std::vector<double> scores(v.num_levels(), 0);
  const double l0_by_count =
      static_cast<double>(v.files(0).size()) / o.level0_file_num_compaction_trigger;
  if (!o.level_compaction_dynamic_level_bytes) {
    // As in RocksDB, L0 is also due once the bytes no compaction holds reach
    // max_bytes_for_level_base (large L0 files, or few of them, would otherwise make one giant
    // compaction into L1 later).
    scores[0] = std::max(l0_by_count, static_cast<double>(BytesNotBeingCompacted(v.files(0))) /
                                          static_cast<double>(o.max_bytes_for_level_base));
    for (int level = 1; level + 1 < v.num_levels(); level++) {
      scores[level] = static_cast<double>(BytesNotBeingCompacted(v.files(level))) /
                      static_cast<double>(t.max_bytes[level]);
    }
    return scores;
  }
  // L0 also counts by bytes: at least due once it holds max_bytes_for_level_base, and ahead of
  // the base level once it is larger than that level.
  const uint64_t l0_bytes = v.NumLevelBytes(0);
  double l0 = l0_by_count;
  if (l0_bytes >= o.max_bytes_for_level_base) l0 = std::max(l0, 1.01);
  if (l0_bytes > t.max_bytes[t.base_level]) {
    l0 = std::max(l0, static_cast<double>(l0_bytes) /
                          static_cast<double>(
                              std::max(v.NumLevelBytes(t.base_level), t.max_bytes[t.base_level])));
  }
  scores[0] = l0 > 1 ? l0 * kScoreScale : l0;
  // Bytes on their way down from the levels above (L0's all), which lower the rank of a level
  // about to receive them.
  double incoming = static_cast<double>(l0_bytes);
  for (int level = 1; level + 1 < v.num_levels(); level++) {
    const uint64_t bytes = BytesNotBeingCompacted(v.files(level));
    const uint64_t total = v.NumLevelBytes(level);
    const double target = static_cast<double>(t.max_bytes[level]);
    double score = static_cast<double>(bytes) / target;
    if (bytes >= t.max_bytes[level]) {
      score = static_cast<double>(bytes) / (target + incoming) * kScoreScale;
    }
    if (bytes > 0 && level <= t.lowest_unnecessary_level) {
      score = std::max(score, kScoreScale * (1.001 + 0.001 * (t.lowest_unnecessary_level - level)));
    }
    scores[level] = score;
    if (level <= t.lowest_unnecessary_level) {
      incoming += static_cast<double>(total);
    } else if (total > t.max_bytes[level]) {
      incoming += static_cast<double>(total - t.max_bytes[level]);
    }
  }
  return scores;
}

bool AnyBusy(const FileList& files) {
  for (const auto& f : files) {
    if (f->being_compacted) return true;
  }
  return false;
}

// Adds the files of the output level that overlap the user-key range of c's inputs (none for a
// compaction in place), and the grandparents overlapping the whole.
bool AddNextLevelInputs(const Comparator* ucmp, Compaction* c) {
  const Version& v = c->input_version();
  if (c->output_level() != c->level()) {
    auto [lo, hi] = c->UserKeyRange(ucmp);  // of inputs(0): inputs(1) is still empty
    c->mutable_inputs(1) = v.OverlappingInputs(c->output_level(), &lo, &hi);
    if (AnyBusy(c->inputs(1))) return false;
  }
  if (c->output_level() + 1 < v.num_levels()) {
    auto [lo, hi] = c->UserKeyRange(ucmp);
    c->mutable_grandparents() = v.OverlappingInputs(c->output_level() + 1, &lo, &hi);
  }
  return true;
}

// kRoundRobin: the first file after the level's compaction pointer, wrapping around.
std::shared_ptr<FileMetaData> PickRoundRobin(const FamilyConfig& family, const FileList& files,
                                             const std::string& pointer) {
  for (const auto& f : files) {
    if (f->being_compacted) continue;
    if (pointer.empty() || family.icmp->Compare(f->largest, pointer) > 0) return f;
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

uint64_t OutputFileSize(const FamilyConfig& family) {
  return family.options->target_file_size_base;
}

// What every compaction the picker returns guarantees (see the invariant at its use).
[[maybe_unused]] bool InputsComplete(const Comparator* ucmp, const Compaction& c) {
  const Version& v = c.input_version();
  const FileList& in = c.inputs(0);
  if (in.empty()) return false;
  if (c.level() == 0 && in.size() != v.files(0).size()) return false;
  const auto [lo, hi] = c.UserKeyRange(ucmp);
  // A file ending in a range-deletion sentinel holds nothing of its largest user key: the span
  // ends before hi when every input that reaches hi ends so.
  bool hi_exclusive = true;
  for (int which = 0; which < 2; which++) {
    for (const auto& f : c.inputs(which)) {
      if (ucmp->Compare(ExtractUserKey(f->largest), hi) == 0 &&
          !IsRangeDeletionSentinel(f->largest)) {
        hi_exclusive = false;
      }
    }
  }
  // The inputs at the output level: inputs(1), or inputs(0) for a compaction in place.
  const FileList& next = c.inputs(c.level() == c.output_level() ? 0 : 1);
  for (const auto& f : v.files(c.output_level())) {
    const Slice smallest = ExtractUserKey(f->smallest), largest = ExtractUserKey(f->largest);
    if (ucmp->Compare(smallest, largest) > 0) continue;  // not a range: see the invariant
    if (std::find(next.begin(), next.end(), f) != next.end()) continue;
    const int below = ucmp->Compare(largest, lo);
    const int above = ucmp->Compare(smallest, hi);
    const bool ends_before = below < 0 || (below == 0 && IsRangeDeletionSentinel(f->largest));
    const bool starts_after = above > 0 || (above == 0 && hi_exclusive);
    if (!ends_before && !starts_after) return false;
  }
  return true;
}

}  // namespace

LevelTargets ComputeLevelTargets(const Options& o, const Version& v) {
  const int levels = v.num_levels();
  LevelTargets t;
  t.max_bytes.assign(levels, std::numeric_limits<uint64_t>::max());
  const double multiplier = o.max_bytes_for_level_multiplier;
  auto times = [multiplier](uint64_t bytes) {
    const double r = static_cast<double>(bytes) * multiplier;
    return r >= 1.8e19 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(r);
  };
  if (!o.level_compaction_dynamic_level_bytes) {
    t.base_level = 1;
    for (int level = 1; level < levels; level++) {
      t.max_bytes[level] = level == 1 ? o.max_bytes_for_level_base : times(t.max_bytes[level - 1]);
    }
    return t;
  }
  // The largest level below L0 sets the shape: the last level's target is its size, each level
  // above a multiplier smaller, down to the base level, the first whose target is at most
  // max_bytes_for_level_base. Levels above the base level stay empty (L0 skips them).
  uint64_t largest = 0;
  int first_non_empty = -1;
  for (int level = 1; level < levels; level++) {
    // A level with files is not empty, whatever their recorded sizes: L0 must not pass it.
    if (!v.files(level).empty() && first_non_empty < 0) first_non_empty = level;
    if (!v.files(level).empty()) {
      largest = std::max(largest, std::max<uint64_t>(v.NumLevelBytes(level), 1));
    }
  }
  if (first_non_empty < 0) {  // nothing below L0: L0 compacts straight into the last level
    t.base_level = levels - 1;
    t.max_bytes[levels - 1] = o.max_bytes_for_level_base;
    return t;
  }
  const uint64_t base_max = o.max_bytes_for_level_base;
  const uint64_t base_min = static_cast<uint64_t>(static_cast<double>(base_max) / multiplier);
  uint64_t size = largest;
  for (int level = levels - 2; level >= first_non_empty; level--) {
    size = static_cast<uint64_t>(static_cast<double>(size) / multiplier);
    if (t.lowest_unnecessary_level < 0 && size <= base_min) t.lowest_unnecessary_level = level;
  }
  uint64_t base_size;
  if (size <= base_min) {
    // Data sits in more levels than its size needs (or there is little of it): the first
    // non-empty level stays the base, at its smallest target; the levels down to
    // lowest_unnecessary_level drain.
    t.base_level = first_non_empty;
    base_size = base_min + 1;
  } else {
    t.base_level = first_non_empty;
    while (t.base_level > 1 && size > base_max) {
      t.base_level--;
      size = static_cast<uint64_t>(static_cast<double>(size) / multiplier);
    }
    base_size = std::max<uint64_t>(1, std::min(size, base_max));
  }
  uint64_t target = base_size;
  for (int level = t.base_level; level < levels; level++) {
    if (level > t.base_level) target = times(target);
    // No level's target under max_bytes_for_level_base: an L1+ smaller than L0 would outrank it.
    t.max_bytes[level] = std::max(target, base_max);
  }
  return t;
}

double MaxCompactionScore(const FamilyConfig& family, const Version& version) {
  const std::vector<double> scores =
      LevelScores(*family.options, version, ComputeLevelTargets(*family.options, version));
  return *std::max_element(scores.begin(), scores.end());
}

uint64_t EstimatePendingCompactionBytes(const FamilyConfig& family, const Version& version) {
  const Options& o = *family.options;
  const LevelTargets t = ComputeLevelTargets(o, version);
  const int last = version.num_levels() - 1;
  uint64_t pending = 0;
  uint64_t carried = 0;  // bytes the levels above send down
  const uint64_t l0 = version.NumLevelBytes(0);
  if (version.files(0).size() >= static_cast<size_t>(o.level0_file_num_compaction_trigger) ||
      (o.level_compaction_dynamic_level_bytes && l0 >= o.max_bytes_for_level_base)) {
    carried = l0;
    pending = l0 + version.NumLevelBytes(t.base_level);
  }
  // Levels above the base level are empty; a level that drains goes down whole.
  for (int level = t.base_level; level < last; level++) {
    const uint64_t size = version.NumLevelBytes(level) + carried;
    const uint64_t target = level <= t.lowest_unnecessary_level ? 0 : t.max_bytes[level];
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

// A file below L0 that overlaps nothing at the output level moves down without a rewrite
// (inputs(1) empty). Its neighbours in the level that overlap nothing there either go with it, as
// long as the output level stays within its target: each file moved now is one the next
// compactions into this level do not merge again (in a young tree, L0 -> L1 compactions would
// otherwise rewrite the L1 files that only wait for room below). The level stays sorted and
// disjoint: the moved files are consecutive and the output level holds nothing in their span.
void ExtendTrivialMove(const LevelTargets& t, Compaction* c) {
  const Version& v = c->input_version();
  const int level = c->level(), out = c->output_level();
  if (level == 0 || level == out || !c->inputs(1).empty()) return;
  const uint64_t out_bytes = v.NumLevelBytes(out);
  if (out_bytes >= t.max_bytes[out]) return;
  uint64_t room = t.max_bytes[out] - out_bytes;
  const FileList& files = v.files(level);
  const auto at = std::find(files.begin(), files.end(), c->inputs(0)[0]);
  SHALE_ASSERT(at != files.end());
  size_t first = static_cast<size_t>(at - files.begin()), last = first;
  if (files[first]->file_size > room) return;
  room -= files[first]->file_size;
  // Whether files[i] can join the run [first, last]: free, within the room left, and the
  // run's span with it still meets no file of the output level.
  auto fits = [&](size_t i, size_t lo, size_t hi) {
    if (files[i]->being_compacted || files[i]->file_size > room) return false;
    const Slice a = ExtractUserKey(files[lo]->smallest), b = ExtractUserKey(files[hi]->largest);
    return v.OverlappingInputs(out, &a, &b).empty();
  };
  while (last + 1 < files.size() && fits(last + 1, first, last + 1)) {
    room -= files[++last]->file_size;
  }
  while (first > 0 && fits(first - 1, first - 1, last)) room -= files[--first]->file_size;
  c->mutable_inputs(0).assign(files.begin() + static_cast<std::ptrdiff_t>(first),
                              files.begin() + static_cast<std::ptrdiff_t>(last) + 1);
}

// The level a compaction of level writes to.
int OutputLevel(const LevelTargets& t, int level) { return level == 0 ? t.base_level : level + 1; }

// The compaction of level that the picker would run, or null when its inputs are busy.
std::unique_ptr<Compaction> PickAtLevel(const FamilyConfig& family,
                                        std::shared_ptr<Version> version, int level,
                                        const LevelTargets& targets,
                                        const std::vector<std::string>& pointers) {
  const int output_level = OutputLevel(targets, level);
  const Comparator* ucmp = family.icmp->user_comparator();
  auto c = std::make_unique<Compaction>(version, level, output_level, OutputFileSize(family));
  const FileList& files = version->files(level);
  if (level == 0) {
    if (AnyBusy(files)) return nullptr;
    c->mutable_inputs(0) = files;
  } else {
    std::shared_ptr<FileMetaData> pick =
        family.options->compaction_pri == CompactionPri::kRoundRobin
            ? PickRoundRobin(family, files, pointers[level])
            : PickMinOverlappingRatio(ucmp, files, version->files(output_level));
    if (pick == nullptr) return nullptr;
    c->mutable_inputs(0).push_back(pick);
  }
  if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;
  if (level > 0 && c->inputs(1).empty()) {
    ExtendTrivialMove(targets, c.get());
    if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;  // the wider span's grandparents
  }
  return c;
}

}  // namespace

std::unique_ptr<Compaction> PickCompaction(const FamilyConfig& family,
                                           std::shared_ptr<Version> version,
                                           const std::vector<const Compaction*>& running,
                                           std::vector<std::string>* compact_pointers) {
  // Levels due for compaction, the highest score first; the first whose inputs are free wins.
  const LevelTargets targets = ComputeLevelTargets(*family.options, *version);
  const std::vector<double> scores = LevelScores(*family.options, *version, targets);
  std::vector<std::pair<double, int>> due;
  for (int level = 0; level + 1 < version->num_levels(); level++) {
    if (scores[level] >= 1) due.emplace_back(scores[level], level);
  }
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const Comparator* ucmp = family.icmp->user_comparator();
  for (const auto& [score, level] : due) {
    std::unique_ptr<Compaction> c = PickAtLevel(family, version, level, targets, *compact_pointers);
    if (c == nullptr || OutputConflicts(ucmp, *c, running)) continue;
    if (level > 0) (*compact_pointers)[level] = c->inputs(0).back()->largest;
    c->set_reason(level == 0 ? CompactionReason::kLevelL0FilesNum
                             : CompactionReason::kLevelMaxLevelSize);
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

std::unique_ptr<Compaction> PickReadCompaction(const FamilyConfig& family,
                                               std::shared_ptr<Version> version,
                                               const std::vector<const Compaction*>& running,
                                               bool* blocked) {
  *blocked = false;
  const Options& o = *family.options;
  if (o.read_compaction_bytes_per_seek == 0 || version->num_levels() < 2) return nullptr;
  const FileList& l0 = version->files(0);
  std::vector<std::shared_ptr<FileMetaData>> due;
  for (const auto& f : l0) {
    if (!f->read_compaction_refused && SeeksExhausted(*f, o.read_compaction_bytes_per_seek)) {
      due.push_back(f);
    }
  }
  if (due.empty()) return nullptr;
  const LevelTargets targets = ComputeLevelTargets(o, *version);
  auto c =
      std::make_unique<Compaction>(version, 0, OutputLevel(targets, 0), OutputFileSize(family));
  c->mutable_inputs(0) = l0;  // L0 goes down whole
  c->set_reason(CompactionReason::kReadTriggered);
  const Comparator* ucmp = family.icmp->user_comparator();
  if (AnyBusy(l0) || !AddNextLevelInputs(ucmp, c.get()) || OutputConflicts(ucmp, *c, running)) {
    *blocked = true;
    return nullptr;
  }
  const uint64_t in = c->InputBytes(0), next = c->InputBytes(1);
  if (next > 10 * o.target_file_size_base || next / 35 > in) {
    for (const auto& f : due) f->read_compaction_refused = true;
    return nullptr;
  }
  // Invariant: as PickCompaction's.
  SHALE_ASSERT(InputsComplete(ucmp, *c));
  return c;
}

std::unique_ptr<Compaction> RangeCompaction(const FamilyConfig& family,
                                            std::shared_ptr<Version> version, int level,
                                            const Slice* begin, const Slice* end) {
  FileList in = version->OverlappingInputs(level, begin, end);
  if (in.empty() || AnyBusy(in)) return nullptr;
  // L0 files overlap one another: taking some but not older overlapping ones would move newer
  // data below older data. L0 always goes down whole.
  if (level == 0) in = version->files(0);
  const int output_level = OutputLevel(ComputeLevelTargets(*family.options, *version), level);
  auto c = std::make_unique<Compaction>(version, level, output_level, OutputFileSize(family));
  c->mutable_inputs(0) = std::move(in);
  c->set_reason(CompactionReason::kManualCompaction);
  const Comparator* ucmp = family.icmp->user_comparator();
  if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;
  // Invariant: as PickCompaction's.
  SHALE_ASSERT(InputsComplete(ucmp, *c));
  return c;
}

std::unique_ptr<Compaction> InPlaceCompaction(const FamilyConfig& family,
                                              std::shared_ptr<Version> version, int level,
                                              const Slice* begin, const Slice* end,
                                              uint64_t first_skipped_number) {
  SHALE_ASSERT(level >= 1);
  const FileList in = version->OverlappingInputs(level, begin, end);
  auto c = std::make_unique<Compaction>(version, level, level, OutputFileSize(family));
  c->set_reason(CompactionReason::kManualCompaction);
  // The first run of consecutive files none of which is skipped or busy: a gap left by a
  // skipped file inside the inputs would let an output overlap it.
  for (const auto& f : in) {
    if (f->number < first_skipped_number && !f->being_compacted) {
      c->mutable_inputs(0).push_back(f);
    } else if (!c->inputs(0).empty()) {
      break;
    }
  }
  if (c->inputs(0).empty()) return nullptr;
  const Comparator* ucmp = family.icmp->user_comparator();
  if (!AddNextLevelInputs(ucmp, c.get())) return nullptr;
  // Invariant: as PickCompaction's, the output level being the inputs' own.
  SHALE_ASSERT(InputsComplete(ucmp, *c));
  return c;
}

}  // namespace shale
