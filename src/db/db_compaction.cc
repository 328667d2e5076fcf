// Compaction jobs: the background compaction the picker chooses (compaction.h), CompactRange,
// and the steps of one compaction. A compaction merges its input files (one level and the
// overlapping files of its output level) into new files of the output level, deciding each user
// key's entries together (CompactKeyEntries) against the live snapshots; it writes with mutex_
// released and installs its result in one MANIFEST record. A single input with nothing to
// merge moves down a level unchanged. Several compactions may run at once on disjoint inputs
// (see db_background.cc); one from L0, or a manual one, may be split into subcompactions
// (subcompaction.h), each part written by a thread of its own.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "src/base/filename.h"
#include "src/db/builder.h"
#include "src/db/compaction.h"
#include "src/db/compaction_picker.h"
#include "src/db/db_impl.h"
#include "src/db/grandparent_tracker.h"
#include "src/db/level_iterator.h"
#include "src/db/merging_iterator.h"
#include "src/db/range_tombstone_output.h"
#include "src/db/subcompaction.h"
#include "src/db/table_cache.h"
#include "src/env/rate_limited_file.h"
#include "src/util/clock.h"
#include "src/util/event_log.h"
#include "src/util/invariants.h"
#include "src/util/test_hook.h"
#include "table/table_reader.h"

namespace shale {
namespace {

// Compaction inputs are read in requests of this size (fewer, larger reads beside foreground
// point reads; with direct IO each block would otherwise be its own device read).
constexpr size_t kCompactionReadahead = 2 << 20;

}  // namespace

std::vector<SequenceNumber> DBImpl::SnapshotSequences() const {
  std::vector<SequenceNumber> seqs;
  for (const auto& s : snapshots_) seqs.push_back(s->GetSequenceNumber());
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

// ---------------------------------------------------------------- background compaction

bool DBImpl::BackgroundCompaction() {
  // The families by their highest score, the first that has a compaction to run wins; when none
  // is due by level sizes, the first that seeks asked for a read-triggered one.
  std::vector<std::pair<double, std::shared_ptr<ColumnFamilyData>>> due;
  for (const auto& [id, cfd] : families_) {
    if (!NeedsCompaction(*cfd)) continue;
    due.emplace_back(MaxCompactionScore(cfd->config(), *versions_->current(id)), cfd);
  }
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  auto running_in = [this](uint32_t family) REQUIRES(mutex_) {
    std::vector<const Compaction*> running;
    for (const RunningCompaction& r : running_compactions_) {
      if (r.family == family) running.push_back(r.compaction);
    }
    return running;
  };
  std::shared_ptr<ColumnFamilyData> cfd;
  std::unique_ptr<Compaction> c;
  for (const auto& [score, candidate] : due) {
    c = PickCompaction(candidate->config(), versions_->current(candidate->id),
                       running_in(candidate->id), &candidate->compact_pointers);
    if (c != nullptr) {
      cfd = candidate;
      break;
    }
  }
  for (size_t i = 0; c == nullptr && i < due.size(); i++) {
    const std::shared_ptr<ColumnFamilyData>& candidate = due[i].second;
    if (!ReadCompactionDue(*candidate)) continue;
    bool blocked = false;
    c = PickReadCompaction(candidate->config(), versions_->current(candidate->id),
                           running_in(candidate->id), &blocked);
    if (c != nullptr) {
      cfd = candidate;
      if (stats_ != nullptr) stats_->recordTick(COMPACT_READ_TRIGGERED);
    } else if (!blocked) {
      // None left to run: waiters (WaitForCompact) counted this request as pending work.
      candidate->read_compaction_due = false;
      bg_done_cv_.SignalAll();
    }
  }
  if (c == nullptr) return false;
  // Only a compaction from L0 is split: it holds every L0 file, and the others behind it wait.
  Status s =
      RunCompaction(cfd.get(), c.get(), c->level() == 0 ? cfd->options.max_subcompactions : 1);
  if (!s.ok() && !shutdown_requested_.load(std::memory_order_relaxed) &&
      !cfd->dropped.load(std::memory_order_relaxed)) {
    SetBackgroundErrorLocked(s);
  }
  return true;
}

// ---------------------------------------------------------------- one compaction's steps

// The work in progress of one compaction, or of one part of its key range (a subcompaction):
// what it decides with, the entries of the user key being gathered, the output being written
// and the outputs written so far. Used by one thread alone (which holds no mutex_ while it
// writes); parts of one compaction share only the Compaction and the stop flag.
struct DBImpl::CompactionState {
  CompactionState(ColumnFamilyData* family, Compaction* c,
                  std::vector<SequenceNumber> snapshot_seqs,
                  const TableBuilderOptions& builder_options, std::atomic<bool>* stop_flag)
      : cfd(family),
        compaction(c),
        snapshots(std::move(snapshot_seqs)),
        options(builder_options),
        stop(stop_flag),
        grandparents(builder_options.comparator->user_comparator(), &c->grandparents(),
                     c->target_output_file_size()) {}

  ColumnFamilyData* const cfd;  // kept alive by the caller of RunCompaction
  Compaction* const compaction;
  const std::vector<SequenceNumber> snapshots;  // live snapshots, ascending
  const TableBuilderOptions options;
  // The part's user keys: [start, end), unbounded where unset.
  std::optional<std::string> start, end;
  // Set by a part that failed, so that its siblings stop early.
  std::atomic<bool>* const stop;
  Status status;
  bool stopped_by_sibling = false;
  // Where to cut outputs at grandparent boundaries.
  GrandparentTracker grandparents;

  // The user key whose entries (newest first) are being gathered, and its survivors.
  std::string user_key;
  std::vector<KeyEntry> key_entries, survivors;
  // The inputs' range tombstones within the part, the newest of each snapshot stripe (null:
  // none): they delete what they cover among the entries. output_tombstones: those of them
  // still needed (null: none), which the outputs keep; each output takes those between the
  // previous output's end (tombstones_from; unset: the part's start) and the next output's
  // first key, so outputs meet where they are cut.
  std::shared_ptr<const FragmentedRangeTombstoneList> tombstones, output_tombstones;
  std::optional<std::string> tombstones_from;

  // The output being written: builder is null between outputs.
  std::unique_ptr<WritableFile> file;
  std::unique_ptr<TableBuilder> builder;
  FileMetaData current;

  std::vector<FileMetaData> outputs;  // finished
  std::vector<uint64_t> created;      // every output number taken, finished or not
  uint64_t bytes_written = 0;
  uint64_t input_records = 0;   // entries read from the inputs
  uint64_t output_records = 0;  // entries written to the outputs (range tombstones aside)
  // The compaction's number in the info log, and when it started (NowMicros).
  uint64_t job = 0;
  uint64_t start_micros = 0;
};

Status DBImpl::RunCompaction(ColumnFamilyData* cfd, Compaction* c, uint32_t max_subcompactions) {
  c->MarkBeingCompacted(true);
  if (c->IsTrivialMove()) return MoveFileDownLocked(cfd, c);
  running_compactions_.push_back(RunningCompaction{c, cfd->id});
  const std::vector<SequenceNumber> snapshots = SnapshotSequences();
  const TableBuilderOptions builder_options = BuilderOptions(*cfd);
  const bool split = max_subcompactions > 1;
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<CompactionState>> parts;
  const uint64_t job = next_job_id_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t start_micros = NowMicros();
  const double score = MaxCompactionScore(cfd->config(), c->input_version());
  mutex_.Unlock();
  LogCompactionStart(job, cfd->name, *c, score);
  std::vector<std::string> boundaries;
  if (split) {
    boundaries = SubcompactionBoundaries(*c, cfd->table_cache.get(), cfd->icmp.user_comparator(),
                                         max_subcompactions, c->target_output_file_size());
  }
  for (size_t i = 0; i <= boundaries.size(); i++) {
    auto part = std::make_unique<CompactionState>(cfd, c, snapshots, builder_options, &stop);
    part->job = job;
    part->start_micros = start_micros;
    if (i > 0) part->start = boundaries[i - 1];
    if (i < boundaries.size()) part->end = boundaries[i];
    parts.push_back(std::move(part));
  }
  if (split && stats_ != nullptr)
    stats_->recordInHistogram(NUM_SUBCOMPACTIONS_SCHEDULED, parts.size());
  RunSubcompactions(parts);
  // The first failure a part met itself (its siblings then stopped with Aborted).
  Status s;
  for (const auto& part : parts) {
    if (!part->status.ok() && !part->stopped_by_sibling) {
      s = part->status;
      break;
    }
  }
  mutex_.Lock();
  s = InstallCompactionResultsLocked(parts, s);
  c->ReleaseInputVersion();  // it would keep the replaced inputs live
  DeleteObsoleteFiles();
  // Listed until its replaced inputs are gone, so that WaitForCompact returns after that.
  std::erase_if(running_compactions_,
                [c](const RunningCompaction& r) { return r.compaction == c; });
  FlushInfoLogUnlocked();
  return s;
}

void DBImpl::RunSubcompactions(const std::vector<std::unique_ptr<CompactionState>>& parts) {
  std::vector<std::thread> threads;
  threads.reserve(parts.size());
  for (size_t i = 1; i < parts.size(); i++) {
    CompactionState* part = parts[i].get();
    try {
      threads.emplace_back([this, part] { part->status = WriteCompactionOutputs(part); });
    } catch (const std::system_error&) {  // no thread to be had: run the part here
      part->status = WriteCompactionOutputs(part);
    }
  }
  parts[0]->status = WriteCompactionOutputs(parts[0].get());
  for (std::thread& t : threads) t.join();
}

Status DBImpl::MoveFileDownLocked(ColumnFamilyData* cfd, Compaction* c) {
  VersionEdit edit;
  edit.SetColumnFamily(cfd->id);
  uint64_t bytes = 0;
  for (const auto& f : c->inputs(0)) {
    edit.DeleteFile(c->level(), f->number);
    edit.AddFile(c->output_level(), *f);
    bytes += f->file_size;
  }
  Status s = versions_->LogAndApply(&edit);
  c->MarkBeingCompacted(false);
  EventLog("trivial_move", next_job_id_.fetch_add(1, std::memory_order_relaxed))
      .Add("cf_name", cfd->name)
      .Add("compaction_reason", CompactionReasonName(c->reason()))
      .Add("source_level", c->level())
      .Add("destination_level", c->output_level())
      .Add("files", c->inputs(0).size())
      .Add("total_files_size", bytes)
      .Add("file_number", c->inputs(0)[0]->number)
      .Add("status", s.ToString())
      .Write(info_log_.get());
  if (s.ok()) {
    num_compactions_++;
    ColumnFamilyData::LevelCompactionStats& ls = cfd->LevelStats(c->output_level());
    ls.moves += c->inputs(0).size();
    ls.moved_bytes += bytes;
    InstallSuperVersion(cfd);
    if (c->inputs(0).size() > 1) SHALE_TEST_HOOK("DBImpl::MoveFileDownLocked:SeveralFiles");
  }
  return s;
}

Status DBImpl::WriteCompactionOutputs(CompactionState* state) {
  ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = kCompactionReadahead;
  ro.rate_limiter_priority = IOPriority::kLow;
  // L0 files overlap: one child each. A level below L0 is sorted and disjoint: one child that
  // opens its files in turn, so the compaction holds one readahead buffer per level rather
  // than one per input file, and the merge compares fewer children per key.
  const Compaction& c = *state->compaction;
  ColumnFamilyData* const cfd = state->cfd;
  Status s = GatherRangeTombstones(state);
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (int which = 0; which < 2 && s.ok(); which++) {
    // An input whose keys (in this part) a newer tombstone of the inputs covers for every
    // reader is not read: all it holds is dropped here. Its own tombstones were gathered above.
    FileList files;
    for (const auto& f : c.inputs(which)) {
      if (CoveredByTombstones(*state, *f)) {
        if (stats_ != nullptr) {
          // Per part: a file several parts share counts once in each that skips it.
          stats_->recordTick(COMPACTION_RANGE_DEL_FILES_SKIPPED);
          stats_->recordTick(COMPACTION_RANGE_DEL_BYTES_SKIPPED, f->file_size);
        }
      } else {
        files.push_back(f);
      }
    }
    if (files.empty()) continue;
    if ((which == 0 ? c.level() : c.output_level()) == 0) {
      for (const auto& f : files) {
        children.push_back(cfd->table_cache->NewIterator(ro, *f));
      }
    } else {
      children.push_back(NewLevelIterator(cfd->table_cache.get(), ro, &cfd->icmp, files));
    }
  }
  std::unique_ptr<InternalIterator> input = NewMergingIterator(&cfd->icmp, std::move(children));

  // Entries arrive newest first per user key; each key's entries are decided together
  // (WriteKeyEntries) and written, and outputs are cut only between user keys, so a key
  // never spans two files of a level.
  const Comparator* ucmp = cfd->icmp.user_comparator();
  if (!s.ok()) {
    // Nothing to read.
  } else if (state->start.has_value()) {
    std::string seek;
    AppendInternalKey(&seek, *state->start, kMaxSequenceNumber, kValueTypeForSeek);
    input->Seek(seek);
  } else {
    input->SeekToFirst();
  }
  for (; s.ok() && input->Valid(); input->Next()) {
    if (shutdown_requested_.load(std::memory_order_relaxed)) {
      s = Status::Aborted("shutting down");
      break;
    }
    if (state->stop->load(std::memory_order_relaxed)) {
      s = Status::Aborted("another part of the compaction failed");
      state->stopped_by_sibling = true;
      break;
    }
    const Slice key = input->key();
    ParsedInternalKey p;
    if (!ParseInternalKey(key, &p)) {
      s = Status::Corruption("compaction input has a malformed key");
      break;
    }
    if (state->end.has_value() && ucmp->Compare(p.user_key, *state->end) >= 0) break;
    if (state->key_entries.empty() || ucmp->Compare(p.user_key, state->user_key) != 0) {
      s = WriteKeyEntries(state);
      if (!s.ok()) break;
      state->user_key.assign(p.user_key.data(), p.user_key.size());
    }
    state->input_records++;
    state->key_entries.push_back(
        KeyEntry{key.ToString(), input->value().ToString(), p.sequence, p.type});
  }
  if (s.ok()) s = WriteKeyEntries(state);
  if (s.ok()) s = input->status();
  // Tombstones with no entry left beside them in the part still need an output.
  if (s.ok() && state->builder == nullptr && state->output_tombstones != nullptr &&
      TombstonesFrom(*state) < state->output_tombstones->fragments().size()) {
    s = OpenCompactionOutput(state, std::string());
  }
  if (s.ok() && state->builder != nullptr) s = FinishCompactionOutput(state, nullptr);
  if (state->builder != nullptr) state->builder->Abandon();
  // An output left unfinished is closed here, before the inputs are.
  state->builder.reset();
  state->file.reset();
  if (!s.ok()) state->stop->store(true, std::memory_order_relaxed);
  return s;
}

Status DBImpl::GatherRangeTombstones(CompactionState* state) {
  const Compaction& c = *state->compaction;
  TableCache* tables = state->cfd->table_cache.get();
  const Comparator* ucmp = state->cfd->icmp.user_comparator();
  std::vector<RangeTombstone> raw;
  for (int which = 0; which < 2; which++) {
    for (const auto& f : c.inputs(which)) {
      if (f->num_range_deletions == 0) continue;
      std::shared_ptr<const FragmentedRangeTombstoneList> list;
      Status s = tables->GetRangeTombstones(*f, &list);
      if (!s.ok()) return s;
      // Clipped to the part: its neighbours carry the rest.
      const Slice lower = state->start.has_value() ? Slice(*state->start) : Slice();
      const Slice upper = state->end.has_value() ? Slice(*state->end) : Slice();
      list->ForEachClipped(state->start.has_value() ? &lower : nullptr,
                           state->end.has_value() ? &upper : nullptr,
                           [&](const Slice& start, const Slice& end, auto seqs) {
                             for (SequenceNumber seq : seqs) {
                               raw.push_back({start.ToString(), end.ToString(), seq});
                             }
                           });
    }
  }
  if (raw.empty()) return Status::OK();
  state->tombstones =
      std::make_shared<const FragmentedRangeTombstoneList>(ucmp, std::move(raw), &state->snapshots);
  // A tombstone every reader sees (in the oldest stripe) with nothing below the output level
  // in its range has done its work once this compaction drops what it covers here.
  const SequenceNumber earliest =
      state->snapshots.empty() ? kMaxSequenceNumber : state->snapshots.front();
  std::vector<RangeTombstone> kept;
  for (const auto& frag : state->tombstones->fragments()) {
    const bool nothing_below =
        c.input_version().RangeNotInLevelsBelow(c.output_level(), frag.start, frag.end);
    for (SequenceNumber seq : state->tombstones->seqs(frag)) {
      if (nothing_below && seq <= earliest) continue;
      kept.push_back({frag.start, frag.end, seq});
    }
  }
  if (!kept.empty()) {
    state->output_tombstones =
        std::make_shared<const FragmentedRangeTombstoneList>(ucmp, std::move(kept));
  }
  return Status::OK();
}

bool DBImpl::CoveredByTombstones(const CompactionState& state, const FileMetaData& f) {
  if (state.tombstones == nullptr) return false;
  const Comparator* ucmp = state.cfd->icmp.user_comparator();
  // The file's keys within the part: [smallest, largest], or [smallest, largest) when the file
  // ends in a tombstone sentinel (it holds nothing of that key).
  Slice begin = ExtractUserKey(f.smallest);
  Slice end = ExtractUserKey(f.largest);
  bool inclusive = !IsRangeDeletionSentinel(f.largest);
  if (state.start.has_value() && ucmp->Compare(begin, *state.start) < 0) begin = *state.start;
  if (state.end.has_value() && ucmp->Compare(end, *state.end) >= 0) {
    end = *state.end;
    inclusive = false;
  }
  // A tombstone hides the file's entries from a reader only when it is newer than all of them
  // and no snapshot lies between the file's oldest entry and the tombstone (such a snapshot
  // would still see the entries).
  const auto& snaps = state.snapshots;
  const auto first_snapshot = std::lower_bound(snaps.begin(), snaps.end(), f.smallest_seqno);
  const SequenceNumber at_most =
      first_snapshot == snaps.end() ? kMaxSequenceNumber : *first_snapshot;
  return state.tombstones->CoversRange(begin, end, inclusive, f.largest_seqno, at_most);
}

size_t DBImpl::TombstonesFrom(const CompactionState& state) {
  const auto& fragments = state.output_tombstones->fragments();
  const std::optional<std::string>& from =
      state.tombstones_from.has_value() ? state.tombstones_from : state.start;
  if (!from.has_value()) return 0;
  const Comparator* ucmp = state.cfd->icmp.user_comparator();
  return std::partition_point(fragments.begin(), fragments.end(),
                              [&](const auto& f) { return ucmp->Compare(f.end, *from) <= 0; }) -
         fragments.begin();
}

Status DBImpl::WriteKeyEntries(CompactionState* state) {
  if (state->key_entries.empty()) return Status::OK();
  const Compaction& c = *state->compaction;
  state->survivors.clear();
  size_t synthetic = 0;
  if (state->tombstones != nullptr) {
    // The input tombstones covering the key join its entries as deletions at their sequence
    // numbers (with an empty internal key, never written): they hide, per snapshot stripe,
    // what lies under them and end merge chains, as a Delete would.
    const size_t i = state->tombstones->FindFragment(state->user_key);
    if (i < state->tombstones->fragments().size()) {
      const auto real = static_cast<std::ptrdiff_t>(state->key_entries.size());
      for (SequenceNumber seq : state->tombstones->seqs(state->tombstones->fragments()[i])) {
        state->key_entries.push_back(KeyEntry{std::string(), std::string(), seq, kTypeDeletion});
        synthetic++;
      }
      // Two runs, each newest first: merged.
      std::inplace_merge(
          state->key_entries.begin(), state->key_entries.begin() + real, state->key_entries.end(),
          [](const KeyEntry& a, const KeyEntry& b) { return a.sequence > b.sequence; });
    }
  }
  CompactKeyEntries(
      state->user_key, &state->key_entries, state->snapshots,
      [&] { return c.input_version().KeyNotInLevelsBelow(c.output_level(), state->user_key); },
      state->cfd->options.merge_operator.get(), stats_, &state->survivors);
  if (synthetic > 0) {
    std::erase_if(state->survivors, [](const KeyEntry& e) { return e.internal_key.empty(); });
  }
  state->key_entries.clear();
  Status r;
  if (!state->survivors.empty()) {
    // An output is finished before the first key it cannot take (it reached the output size,
    // or crossed enough grandparents), so that its range tombstones end where the next begins.
    const bool open = state->builder != nullptr;
    const bool full = open && state->builder->FileSize() >= c.max_output_file_size();
    const bool cut = state->grandparents.CutBefore(state->user_key, open && !full,
                                                   open ? state->builder->FileSize() : 0);
    if (open && (full || cut)) {
      const Slice next(state->user_key);
      r = FinishCompactionOutput(state, &next);
      if (!r.ok()) return r;
    }
  }
  for (const KeyEntry& entry : state->survivors) {
    if (state->builder == nullptr) {
      r = OpenCompactionOutput(state, entry.internal_key);
      if (!r.ok()) return r;
    }
    state->current.largest = entry.internal_key;
    r = state->builder->Add(entry.internal_key, entry.value);
    if (!r.ok()) return r;
    state->output_records++;
  }
  return r;
}

Status DBImpl::OpenCompactionOutput(CompactionState* state, const std::string& first_key) {
  {
    MutexLock l(&mutex_);
    state->current = FileMetaData();
    state->current.number = versions_->NewFileNumber();
    pending_outputs_.insert(state->current.number);
    state->created.push_back(state->current.number);
  }
  Status r = fs_->NewWritableFile(TableFileName(dbname_, state->current.number), TableFileOptions(),
                                  &state->file);
  if (!r.ok()) return r;
  state->file = RateLimitedWritableFile::Wrap(
      std::move(state->file), state->cfd->options.rate_limiter.get(), IOPriority::kLow, stats_);
  state->builder = std::make_unique<TableBuilder>(state->options, state->file.get());
  state->current.smallest = first_key;
  return Status::OK();
}

Status DBImpl::FinishCompactionOutput(CompactionState* state, const Slice* next_key) {
  Status r;
  if (state->output_tombstones != nullptr) {
    const std::optional<std::string>& from =
        state->tombstones_from.has_value() ? state->tombstones_from : state->start;
    const Slice lower = from.has_value() ? Slice(*from) : Slice();
    const Slice part_end = state->end.has_value() ? Slice(*state->end) : Slice();
    const Slice* upper =
        next_key != nullptr ? next_key : (state->end.has_value() ? &part_end : nullptr);
    AddRangeTombstones(*state->output_tombstones, state->cfd->icmp,
                       from.has_value() ? &lower : nullptr, upper, state->builder.get(),
                       &state->current.smallest, &state->current.largest, &r);
    if (upper != nullptr) state->tombstones_from = upper->ToString();
  }
  if (r.ok()) r = state->builder->Finish();
  if (r.ok()) r = state->file->Sync();
  if (r.ok()) r = state->file->Close();
  if (r.ok()) {
    FileMetaData& f = state->current;
    f.file_size = state->builder->FileSize();
    f.smallest_seqno = state->builder->properties().smallest_seqno;
    f.largest_seqno = state->builder->properties().largest_seqno;
    f.num_range_deletions = state->builder->properties().num_range_deletions;
    state->bytes_written += f.file_size;
    state->outputs.push_back(f);
    LogTableFileCreation(state->job, state->cfd->name, state->compaction->output_level(), f);
  }
  state->builder.reset();
  state->file.reset();
  return r;
}

// A compaction's output range stays within its inputs: every output's smallest and largest
// user keys lie within [smallest, largest] of the input files' user keys, since outputs hold
// only (possibly merged) entries of keys read from the inputs and each input file's recorded
// smallest and largest bound its keys. So a compaction never widens the key range it rewrites.
// Keys outside that range mean an input table holds keys beyond what its MANIFEST entry
// records, which is damage: Corruption, and the outputs are not installed.
Status DBImpl::CheckOutputsWithinInputs(const ColumnFamilyData& cfd, const Compaction& c,
                                        const std::vector<FileMetaData>& outputs) {
  const Comparator* ucmp = cfd.icmp.user_comparator();
  const auto [smallest, largest] = c.UserKeyRange(ucmp);
  for (const FileMetaData& f : outputs) {
    if (ucmp->Compare(ExtractUserKey(f.smallest), smallest) < 0 ||
        ucmp->Compare(ExtractUserKey(f.largest), largest) > 0) {
      return Status::Corruption(fmt::format(
          "compaction {}: output {:06}.sst holds keys outside its inputs' recorded key range",
          c.Describe(), f.number));
    }
  }
  return Status::OK();
}

Status DBImpl::InstallCompactionResultsLocked(
    const std::vector<std::unique_ptr<CompactionState>>& parts, Status s) {
  const Compaction& c = *parts.front()->compaction;
  ColumnFamilyData* const cfd = parts.front()->cfd;
  std::vector<FileMetaData> outputs;
  uint64_t bytes_written = 0, input_records = 0, output_records = 0;
  for (const auto& part : parts) {
    outputs.insert(outputs.end(), part->outputs.begin(), part->outputs.end());
    bytes_written += part->bytes_written;
    input_records += part->input_records;
    output_records += part->output_records;
  }
  // A family dropped meanwhile keeps nothing: its outputs are left to DeleteObsoleteFiles.
  if (s.ok() && cfd->dropped.load(std::memory_order_relaxed)) {
    s = Status::Aborted("column family was dropped", cfd->name);
  }
  if (s.ok()) {
    VersionEdit edit;
    edit.SetColumnFamily(cfd->id);
    c.AddInputDeletions(&edit);
    s = CheckOutputsWithinInputs(*cfd, c, outputs);
    for (const FileMetaData& f : outputs) edit.AddFile(c.output_level(), f);
    if (s.ok()) s = versions_->LogAndApply(&edit);
  }
  for (const auto& part : parts) {
    for (uint64_t number : part->created) pending_outputs_.erase(number);
  }
  c.MarkBeingCompacted(false);
  if (s.ok()) {
    num_compactions_++;
    compaction_read_bytes_ += c.InputBytes();
    compaction_write_bytes_ += bytes_written;
    ColumnFamilyData::LevelCompactionStats& ls = cfd->LevelStats(c.output_level());
    ls.compactions++;
    // Read from the level above, and from the output level (all of it for a compaction in
    // place).
    const bool in_place = c.level() == c.output_level();
    for (const auto& f : c.inputs(0))
      (in_place ? ls.read_next_bytes : ls.read_level_bytes) += f->file_size;
    for (const auto& f : c.inputs(1)) ls.read_next_bytes += f->file_size;
    ls.write_bytes += bytes_written;
    if (stats_ != nullptr) {
      stats_->recordTick(COMPACT_READ_BYTES, c.InputBytes());
      stats_->recordTick(COMPACT_WRITE_BYTES, bytes_written);
    }
    InstallSuperVersion(cfd);
  }
  const CompactionState& first = *parts.front();
  if (s.ok()) {
    EventLog("compaction_finished", first.job)
        .Add("cf_name", cfd->name)
        .Add("compaction_time_micros", NowMicros() - first.start_micros)
        .Add("output_level", c.output_level())
        .Add("num_output_files", outputs.size())
        .Add("total_output_size", bytes_written)
        .Add("num_input_records", input_records)
        .Add("num_output_records", output_records)
        .Add("num_subcompactions", parts.size())
        .Add("lsm_state", LsmState(*cfd))
        .Write(info_log_.get());
  } else {
    LogError(info_log_.get(), "[{}] [JOB {}] Compaction failed: {}", cfd->name, first.job,
             s.ToString());
  }
  return s;
}

void DBImpl::LogCompactionStart(uint64_t job, const std::string& family, const Compaction& c,
                                double score) const {
  if (info_log_ == nullptr || !info_log_->Enabled(INFO_LEVEL)) return;
  EventLog event("compaction_started", job);
  event.Add("cf_name", family).Add("compaction_reason", CompactionReasonName(c.reason()));
  for (int which = 0; which < 2; which++) {
    std::vector<uint64_t> numbers;
    for (const auto& f : c.inputs(which)) numbers.push_back(f->number);
    if (which == 1 && numbers.empty()) continue;
    event.Add(fmt::format("files_L{}", which == 0 ? c.level() : c.output_level()), numbers);
    event.Add(fmt::format("bytes_L{}", which == 0 ? c.level() : c.output_level()),
              c.InputBytes(which));
  }
  event.Add("output_level", c.output_level())
      .Add("score", score)
      .Add("input_data_size", c.InputBytes())
      .Add("grandparent_files", c.grandparents().size())
      .Write(info_log_.get());
}

// ---------------------------------------------------------------- CompactRange

Status DBImpl::CompactRangeImpl(const CompactRangeOptions& options, ColumnFamilyData* cfd,
                                const Slice* begin, const Slice* end) {
  const Options& family_options = cfd->options;
  if (begin != nullptr && end != nullptr && family_options.comparator->Compare(*begin, *end) > 0) {
    return Status::InvalidArgument("CompactRange: begin is after end");
  }
  switch (options.bottommost_level_compaction) {
    case BottommostLevelCompaction::kSkip:
    case BottommostLevelCompaction::kIfHaveCompactionFilter:
    case BottommostLevelCompaction::kForce:
    case BottommostLevelCompaction::kForceOptimized:
      break;
    default:
      return Status::InvalidArgument("CompactRange: unknown bottommost_level_compaction");
  }
  if (options.max_subcompactions > kMaxSubcompactions) {
    return Status::InvalidArgument(
        fmt::format("CompactRange: max_subcompactions must be in [0, {}]", kMaxSubcompactions));
  }
  Status s = FlushImpl(FlushOptions(), {cfd});
  if (!s.ok()) return s;
  MutexLock l(&mutex_);
  // Take compaction over from the background threads.
  // Background threads start no new compaction while this waits (NeedsCompaction).
  manual_compactions_waiting_++;
  while (manual_compaction_ || !running_compactions_.empty()) bg_done_cv_.Wait();
  manual_compactions_waiting_--;
  manual_compaction_ = true;
  if (cfd->dropped.load(std::memory_order_relaxed)) {
    s = Status::InvalidArgument("column family was dropped", cfd->name);
  }
  const uint64_t first_new_number = versions_->next_file_number();
  const uint32_t subcompactions = options.max_subcompactions > 0
                                      ? options.max_subcompactions
                                      : family_options.max_subcompactions;
  // The deepest level this compacts into: with dynamic level sizes the last level; otherwise
  // the deepest level holding data, and at least L1 (L0 always goes down).
  int bottom = family_options.num_levels - 1;
  if (s.ok() && !family_options.level_compaction_dynamic_level_bytes) {
    bottom = 1;
    auto v = versions_->current(cfd->id);
    for (int level = 1; level < v->num_levels(); level++) {
      if (!v->files(level).empty()) bottom = level;
    }
  }
  // A step releases mutex_ while it works; a drop of the family meanwhile ends the call.
  auto family_live = [&]() REQUIRES(mutex_) {
    if (s.ok() && cfd->dropped.load(std::memory_order_relaxed)) {
      s = Status::InvalidArgument("column family was dropped", cfd->name);
    }
    return s.ok();
  };
  for (int level = 0; level < bottom && family_live(); level++) {
    std::unique_ptr<Compaction> c =
        RangeCompaction(cfd->config(), versions_->current(cfd->id), level, begin, end);
    if (c == nullptr) continue;
    s = RunCompaction(cfd, c.get(), subcompactions);
    if (!s.ok() && !cfd->dropped.load(std::memory_order_relaxed)) SetBackgroundErrorLocked(s);
  }
  // Rewrite the bottom level's files in the range in place: every one that was there before
  // this step (kForce), or before this call (kForceOptimized: not the outputs of the steps
  // above). Each compaction takes a run of consecutive files; its outputs are newer than the
  // cut-off, so the next one takes the next run.
  const BottommostLevelCompaction bottommost = options.bottommost_level_compaction;
  if (bottommost == BottommostLevelCompaction::kForce ||
      bottommost == BottommostLevelCompaction::kForceOptimized) {
    const uint64_t cut_off = bottommost == BottommostLevelCompaction::kForce
                                 ? versions_->next_file_number()
                                 : first_new_number;
    while (family_live()) {
      std::unique_ptr<Compaction> c = InPlaceCompaction(cfd->config(), versions_->current(cfd->id),
                                                        bottom, begin, end, cut_off);
      if (c == nullptr) break;
      s = RunCompaction(cfd, c.get(), subcompactions);
      if (!s.ok() && !cfd->dropped.load(std::memory_order_relaxed)) SetBackgroundErrorLocked(s);
    }
  }
  manual_compaction_ = false;
  bg_done_cv_.SignalAll();
  bg_work_cv_.SignalAll();
  return s;
}

}  // namespace shale
