// Memtable switches, write stalls, background threads, flush, obsolete-file deletion, and the
// calls that wait for background work (Flush, WaitForCompact). The compaction jobs themselves
// are in db_compaction.cc.
//
// Background threads (one more than the compactions that may run at once) share one loop: a
// flush of the oldest immutable memtable takes priority (one at a time, so one thread is always
// free for it); otherwise a compaction runs when some level's score reaches 1 and fewer than
// CompactionLimit() run, on inputs no running compaction holds. Jobs hold mutex_ only to pick
// work and to install results; file IO happens with it released.
#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <system_error>
#include <utility>

#include "memtable/memtable.h"
#include "src/base/filename.h"
#include "src/db/builder.h"
#include "src/db/compaction.h"
#include "src/db/compaction_picker.h"
#include "src/db/db_impl.h"
#include "src/util/clock.h"
#include "src/util/event_log.h"
#include "src/util/invariants.h"
#include "src/util/test_hook.h"

namespace shale {

TableBuilderOptions DBImpl::BuilderOptions(const ColumnFamilyData& cfd) {
  const Options& options = cfd.options;
  TableBuilderOptions o;
  o.comparator = &cfd.icmp;
  o.block_size = options.block_size;
  o.block_restart_interval = options.block_restart_interval;
  o.bloom_bits_per_key = options.bloom_bits_per_key;
  o.compression = options.compression;
  if (options.merge_operator) o.merge_operator_name = options.merge_operator->Name();
  o.prefix_extractor = options.prefix_extractor.get();  // the family's options outlive jobs
  o.whole_key_filtering = options.whole_key_filtering;
  o.format_version = options.format_version;
  return o;
}

namespace {

// The slowdowns and stops a family's L0 file count and pending compaction bytes call for.
struct FamilyStall {
  bool l0_stop = false;
  bool pending_stop = false;
  bool l0_slow = false;
  bool pending_slow = false;
  bool any() const { return l0_stop || pending_stop || l0_slow || pending_slow; }
};

FamilyStall StallOf(const ColumnFamilyData& cfd) {
  const Options& o = cfd.options;
  // L0's triggers and the pending-bytes limits say that compaction is behind. With automatic
  // compactions off nothing brings them down (a bulk load, then CompactRange), so they do not
  // apply: waiting would never end, and CompactRange would queue behind the stalled writer.
  if (o.disable_auto_compactions) return FamilyStall{};
  const size_t l0 = cfd.l0_files;
  const uint64_t pending = cfd.pending_compaction_bytes;
  const uint64_t soft = o.soft_pending_compaction_bytes_limit;
  const uint64_t hard = o.hard_pending_compaction_bytes_limit;
  FamilyStall st;
  st.l0_stop = l0 >= static_cast<size_t>(o.level0_stop_writes_trigger);
  st.pending_stop = hard > 0 && pending >= hard;
  st.l0_slow = l0 >= static_cast<size_t>(o.level0_slowdown_writes_trigger);
  st.pending_slow = soft > 0 && pending >= soft;
  return st;
}

}  // namespace

void DBImpl::InstallSuperVersion(ColumnFamilyData* cfd) {
  // A SuperVersion's memtables are ordered newest first, as reads need them: by the first WAL
  // holding their data, each immutable memtable is older than the one before it, and the
  // mutable memtable is newer than all of them. (A memtable that becomes mutable gets a log
  // created just before, and log numbers only grow; recovery may give mem an older, replayed
  // log, but only while there are no immutable memtables.)
  if constexpr (kInvariantChecks) {
    for (size_t i = 0; i < cfd->imm.size(); i++) {
      const uint64_t newer = i == 0 ? cfd->mem_log_number : cfd->imm[i - 1].log_number;
      SHALE_ASSERT(cfd->imm[i].log_number < newer);
    }
  }
  std::vector<MemTable*> imm;
  for (const ColumnFamilyData::Immutable& i : cfd->imm) imm.push_back(i.mem);
  std::shared_ptr<Version> current = versions_->current(cfd->id);
  cfd->pending_compaction_bytes = EstimatePendingCompactionBytes(cfd->config(), *current);
  cfd->l0_files = current->files(0).size();
  cfd->stall_possible.store(StallOf(*cfd).any(), std::memory_order_relaxed);
  auto sv = std::make_shared<SuperVersion>(cfd->shared_from_this(), cfd->mem, std::move(imm),
                                           std::move(current));
  // The old one is released here, outside sv_mutex: its destructor may free memtables.
  cfd->SwapSuperVersion(std::move(sv)).reset();
}

void DBImpl::ReleaseSuperVersion(ColumnFamilyData* cfd) { cfd->SwapSuperVersion(nullptr).reset(); }

// ---------------------------------------------------------------- write path

Status DBImpl::SwitchMemtables(const std::vector<ColumnFamilyData*>& families) {
  if (families.empty()) return Status::OK();
  Status s = CreateLog(/*keep_previous=*/true);
  if (!s.ok()) return s;
  // An atomic flush's partner, switched because another family filled, keeps its pool as it
  // was (it may be written as much); every other family's pool follows its memtable's fill.
  const bool partners = options_.atomic_flush &&
                        std::any_of(families.begin(), families.end(),
                                    [](ColumnFamilyData* f) { return f->MemTableFull(*f->mem); });
  for (ColumnFamilyData* cfd : families) {
    if (!partners || cfd->MemTableFull(*cfd->mem)) cfd->RetainMemtableBlocksIfFull();
    cfd->imm.push_front(ColumnFamilyData::Immutable{cfd->mem, cfd->mem_log_number});
    cfd->mem = cfd->NewMemTable();
    cfd->mem_log_number = log_number_;
    InstallSuperVersion(cfd);
  }
  // A family holding nothing unflushed needs none of the older logs: it starts in the new one
  // (only the leader inserts, so its memtable stays empty meanwhile).
  for (const auto& [id, other] : families_) {
    if (other->imm.empty() && other->mem->num_entries() == 0) {
      other->mem_log_number = log_number_;
    }
  }
  bg_work_cv_.SignalAll();
  return Status::OK();
}

// What MakeRoomForWrite acts on: the worst condition over the families, and which family.
struct DBImpl::StallState {
  ColumnFamilyData* l0_stop = nullptr;
  ColumnFamilyData* pending_stop = nullptr;
  ColumnFamilyData* l0_slow = nullptr;
  ColumnFamilyData* pending_slow = nullptr;
  ColumnFamilyData* memtable_limit = nullptr;  // full, with no room for another immutable one
  std::vector<ColumnFamilyData*> full;         // memtables to switch
};

DBImpl::StallState DBImpl::ComputeStall() {
  StallState st;
  for (const auto& [id, cfd_ptr] : families_) {
    ColumnFamilyData* cfd = cfd_ptr.get();
    const Options& o = cfd->options;
    const FamilyStall f = StallOf(*cfd);
    if (st.l0_stop == nullptr && f.l0_stop) st.l0_stop = cfd;
    if (st.pending_stop == nullptr && f.pending_stop) st.pending_stop = cfd;
    if (st.l0_slow == nullptr && f.l0_slow) st.l0_slow = cfd;
    if (st.pending_slow == nullptr && f.pending_slow) st.pending_slow = cfd;
    if (cfd->MemTableFull(*cfd->mem)) {
      if (cfd->imm.size() + 1 >= static_cast<size_t>(o.max_write_buffer_number)) {
        if (st.memtable_limit == nullptr) st.memtable_limit = cfd;
      } else {
        st.full.push_back(cfd);
      }
    }
  }
  if (families_.size() > 1 && !closed_logs_.empty() &&
      closed_log_bytes_ + log_->FileSize() > MaxTotalWalSize()) {
    // The WALs are past their bound: switch the families whose memtable holds records of the
    // oldest live one, so that their flushes let it go. (Immutable memtables are flushed
    // anyway; a family with no room for another waits for that, as a full one does.)
    const uint64_t oldest = closed_logs_.front().number;
    for (const auto& [id, cfd] : families_) {
      if (cfd->mem->num_entries() == 0 || cfd->mem_log_number > oldest) continue;
      if (cfd->imm.size() + 1 >= static_cast<size_t>(cfd->options.max_write_buffer_number)) {
        continue;
      }
      if (std::find(st.full.begin(), st.full.end(), cfd.get()) == st.full.end()) {
        st.full.push_back(cfd.get());
      }
    }
  }
  if (options_.atomic_flush && !st.full.empty()) {
    // Every family holding data switches with the full ones, or none does.
    st.full.clear();
    for (const auto& [id, cfd] : families_) {
      if (cfd->mem->num_entries() == 0) continue;
      if (cfd->imm.size() + 1 >= static_cast<size_t>(cfd->options.max_write_buffer_number)) {
        st.memtable_limit = cfd.get();
        st.full.clear();
        break;
      }
      st.full.push_back(cfd.get());
    }
  }
  return st;
}

uint64_t DBImpl::MaxTotalWalSize() const {
  if (options_.max_total_wal_size > 0) return options_.max_total_wal_size;
  uint64_t memtables = 0;
  for (const auto& [id, cfd] : families_) {
    memtables += static_cast<uint64_t>(cfd->options.write_buffer_size) *
                 static_cast<uint64_t>(cfd->options.max_write_buffer_number);
  }
  return 4 * memtables;
}

bool DBImpl::RoomWithoutLock() const {
  // Close sets shutdown_requested_ before it drains the write slot, and an error sets
  // read_only_ before it is reported: a group that leads after either takes the locked path,
  // which refuses it.
  if (shutdown_requested_.load() || read_only_.load(std::memory_order_acquire)) return false;
  if (many_families_.load(std::memory_order_relaxed) ||
      write_stall_active_.load(std::memory_order_relaxed)) {
    return false;
  }
  // Families change, and memtables switch, only with writes stopped or by this leader.
  const ColumnFamilyData& cfd = *default_cfd_;
  return !cfd.stall_possible.load(std::memory_order_relaxed) && !cfd.MemTableFull(*cfd.mem);
}

void DBImpl::NoteStallLocked(const char* reason, const std::string& family) {
  if (std::string_view(reason) != stall_reason_ || family != stall_family_) {
    if (std::string_view(reason) == "none") {
      LogInfo(info_log_.get(), "[{}] Writes no longer stalled ({} ended)", stall_family_,
              stall_reason_);
    } else {
      LogWarn(info_log_.get(), "[{}] Stalling writes: {}", family, reason);
    }
  }
  stall_reason_ = reason;
  stall_family_ = family;
}

Status DBImpl::MakeRoomForWrite(uint64_t group_bytes, const WriteThread::Writer* leader) {
  // Most groups find room: they leave without mutex_, which background work holds while it
  // installs results.
  if (RoomWithoutLock()) return Status::OK();
  MutexLock l(&mutex_);
  bool delayed = false;
  bool earlier_groups_done = !write_thread_.pipelined();
  while (true) {
    if (!bg_error_.ok()) {
      return Status::IOError("DB is read-only after an earlier error; call Resume()",
                             bg_error_.ToString());
    }
    if (shutting_down_) return Status::Aborted("the DB is closing");
    const StallState st = ComputeStall();
    const bool stop = st.l0_stop != nullptr || st.pending_stop != nullptr;
    ColumnFamilyData* slow = st.l0_slow != nullptr ? st.l0_slow : st.pending_slow;
    if (!delayed && !stop && slow != nullptr) {
      // Slow down: the group's bytes pass at delayed_write_rate (WriteDelay).
      delayed = true;
      write_stall_active_.store(true, std::memory_order_relaxed);
      NoteStallLocked(
          st.l0_slow != nullptr ? "level0-slowdown" : "pending-compaction-bytes-slowdown",
          slow->name);
      const uint64_t sleep = write_delay_.Delay(group_bytes, NowMicros());
      if (sleep > 0) {
        write_thread_.LeaderStalls();
        (st.l0_slow != nullptr ? slow->stall_count_l0_slowdown
                               : slow->stall_count_pending_slowdown)++;
        const uint64_t start = NowMicros();
        mutex_.Unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(sleep));
        mutex_.Lock();
        if (stats_ != nullptr) stats_->recordTick(STALL_MICROS, NowMicros() - start);
      }
      continue;
    }
    if (slow == nullptr) write_delay_.Reset();
    if (stop || st.memtable_limit != nullptr) {
      write_stall_active_.store(true, std::memory_order_relaxed);
    }
    if (st.l0_stop != nullptr) {
      NoteStallLocked("level0-stop", st.l0_stop->name);
      st.l0_stop->stall_count_l0_stop++;
    } else if (st.pending_stop != nullptr) {
      NoteStallLocked("pending-compaction-bytes-stop", st.pending_stop->name);
      st.pending_stop->stall_count_pending_stop++;
    } else if (st.memtable_limit != nullptr) {
      NoteStallLocked("memtable-limit", st.memtable_limit->name);
      st.memtable_limit->stall_count_memtable++;
    } else if (!earlier_groups_done && !st.full.empty()) {
      // Pipelined: earlier groups may still insert into the memtables about to be switched
      // (their records are in the log about to be closed). Once they are finished no other
      // group starts before this one's (the leader holds the WAL stage): decide again.
      mutex_.Unlock();
      write_thread_.WaitForEarlierGroups(leader);
      mutex_.Lock();
      earlier_groups_done = true;
      continue;
    } else {
      if (!delayed) {
        NoteStallLocked("none", std::string());
        write_stall_active_.store(false, std::memory_order_relaxed);
      }
      Status s = SwitchMemtables(st.full);
      if (!s.ok()) SetBackgroundErrorLocked(s);
      return s;
    }
    // Stop: wait for a flush or compaction to make room.
    write_thread_.LeaderStalls();
    const uint64_t start = NowMicros();
    bg_work_cv_.SignalAll();
    bg_done_cv_.Wait();
    if (stats_ != nullptr) stats_->recordTick(STALL_MICROS, NowMicros() - start);
  }
}

// ---------------------------------------------------------------- background threads

Status DBImpl::StartBackgroundThreads() {
  try {
    for (int i = 0; i < 1 + MaxCompactions(); i++) {
      bg_threads_.emplace_back([this] { BackgroundThread(); });
    }
    if (options_.stats_dump_period_sec > 0 && info_log_ != nullptr) {
      bg_threads_.emplace_back([this] { StatsDumpThread(); });
    }
  } catch (const std::system_error& e) {  // out of threads (ulimit -u, memory)
    return Status::IOError("cannot start background threads", e.what());
  }
  return Status::OK();
}

bool DBImpl::NeedsCompaction() const {
  if (manual_compaction_ || manual_compactions_waiting_ > 0) return false;
  for (const auto& [id, cfd] : families_) {
    if (NeedsCompaction(*cfd)) return true;
  }
  return false;
}

bool DBImpl::NeedsCompaction(const ColumnFamilyData& cfd) const {
  return !cfd.options.disable_auto_compactions &&
         (MaxCompactionScore(cfd.config(), *versions_->current(cfd.id)) >= 1 ||
          ReadCompactionDue(cfd));
}

bool DBImpl::ReadCompactionDue(const ColumnFamilyData& cfd) const {
  // Only a ReadSampler sets the flag, and iterators get one only while the option is on.
  return cfd.read_compaction_due && cfd.imm.empty();
}

void DBImpl::RequestReadCompaction(ColumnFamilyData* cfd) {
  MutexLock l(&mutex_);
  cfd->read_compaction_due = true;
  bg_work_cv_.SignalAll();
}

int DBImpl::MaxCompactions() const {
  if (options_.max_background_compactions > 0) return options_.max_background_compactions;
  const int jobs = options_.max_background_jobs;
  return std::max(1, jobs - std::max(1, jobs / 4));
}

size_t DBImpl::CompactionLimit() const {
  const int max = MaxCompactions();
  return static_cast<size_t>(max > 1 && CompactionBehind() ? max : 1);
}

bool DBImpl::CompactionBehind() const {
  for (const auto& [id, cfd] : families_) {
    if (CompactionBehind(*cfd)) return true;
  }
  return false;
}

bool DBImpl::CompactionBehind(const ColumnFamilyData& cfd) const {
  const Options& options = cfd.options;
  const Version& v = *versions_->current(cfd.id);
  const int64_t trigger = options.level0_file_num_compaction_trigger;
  const int64_t slowdown = options.level0_slowdown_writes_trigger;
  if (static_cast<int64_t>(v.files(0).size()) >=
      std::min(2 * trigger, trigger + (slowdown - trigger) / 4)) {
    return true;
  }
  // Debt large next to the data at rest (the deepest level), or well on its way to the soft
  // limit.
  uint64_t bottom = 0;
  for (int level = v.num_levels() - 1; level > 0 && bottom == 0; level--) {
    bottom = v.NumLevelBytes(level);
  }
  uint64_t threshold = std::max(bottom / 8, 2 * options.max_bytes_for_level_base);
  if (options.soft_pending_compaction_bytes_limit > 0) {
    threshold = std::min(threshold, options.soft_pending_compaction_bytes_limit / 4);
  }
  return cfd.pending_compaction_bytes > 0 && cfd.pending_compaction_bytes >= threshold;
}

void DBImpl::StatsDumpThread() {
  const auto period = std::chrono::seconds(options_.stats_dump_period_sec);
  auto next = std::chrono::steady_clock::now() + period;
  MutexLock l(&mutex_);
  while (!shutting_down_) {
    const auto now = std::chrono::steady_clock::now();
    if (now < next) {
      stats_cv_.WaitFor(std::chrono::duration_cast<std::chrono::microseconds>(next - now) +
                        std::chrono::microseconds(1));
      continue;
    }
    next = now + period;
    mutex_.Unlock();
    const std::shared_ptr<const FamilyMap> families = Families();
    for (const auto& [id, cfd] : *families) {
      const std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();
      if (sv == nullptr) continue;  // dropped
      LogInfo(info_log_.get(), "------- DUMPING STATS -------\n{}", StatsProperty(*sv));
    }
    info_log_->Flush();
    mutex_.Lock();
  }
}

void DBImpl::BackgroundThread() {
  MutexLock l(&mutex_);
  while (!shutting_down_) {
    std::shared_ptr<ColumnFamilyData> flush;
    if (!flush_running_ && bg_error_.ok() && (flush = PickFlush()) != nullptr) {
      flush_running_ = true;
      if (options_.atomic_flush) {
        BackgroundAtomicFlush();
      } else {
        BackgroundFlush(flush);
      }
      flush_running_ = false;
      bg_done_cv_.SignalAll();
      bg_work_cv_.SignalAll();
      continue;
    }
    if (bg_error_.ok() && running_compactions_.size() < CompactionLimit() && NeedsCompaction() &&
        BackgroundCompaction()) {
      bg_done_cv_.SignalAll();
      bg_work_cv_.SignalAll();
      continue;
    }
    bg_work_cv_.Wait();
  }
}

// ---------------------------------------------------------------- flush

Status DBImpl::WriteLevel0Table(ColumnFamilyData* cfd, MemTable* mem, VersionEdit* edit,
                                uint64_t* job_id) {
  FileMetaData meta;
  meta.number = versions_->NewFileNumber();
  pending_outputs_.insert(meta.number);
  const TableBuilderOptions options = BuilderOptions(*cfd);
  // Versions hidden from every reader are dropped: a snapshot taken from here on reads at a
  // sequence newer than all of mem's entries, so it needs only their newest.
  const std::vector<SequenceNumber> snapshots = SnapshotSequences();
  const FlushFilter filter{&snapshots};
  const uint64_t job = next_job_id_.fetch_add(1, std::memory_order_relaxed);
  if (job_id != nullptr) *job_id = job;
  Status s;
  {
    mutex_.Unlock();
    SHALE_TEST_HOOK("DBImpl::WriteLevel0Table:Unlocked");
    const uint64_t start = NowMicros();
    EventLog("flush_started", job)
        .Add("cf_name", cfd->name)
        .Add("num_entries", mem->num_entries())
        .Add("memory_usage", mem->ApproximateMemoryUsage())
        .Write(info_log_.get());
    std::unique_ptr<InternalIterator> iter = mem->NewIterator();
    const auto tombstones = mem->RangeTombstones();
    s = BuildTable(dbname_, fs_.get(), TableFileOptions(), options, iter.get(), &meta, &filter,
                   cfd->options.rate_limiter.get(), stats_, tombstones.get());
    if (s.ok() && meta.file_size > 0) {
      LogTableFileCreation(job, cfd->name, 0, meta);
    } else if (!s.ok()) {
      LogError(info_log_.get(), "[{}] [JOB {}] Flush failed: {}", cfd->name, job, s.ToString());
    }
    LogInfo(info_log_.get(), "[{}] [JOB {}] Level-0 flush table #{}: {} bytes in {} us {}",
            cfd->name, job, meta.number, meta.file_size, NowMicros() - start,
            s.ok() ? "OK" : s.ToString());
    mutex_.Lock();
  }
  if (s.ok() && meta.file_size > 0) {
    edit->AddFile(0, meta);
    flush_bytes_ += meta.file_size;
    if (stats_ != nullptr) stats_->recordTick(FLUSH_WRITE_BYTES, meta.file_size);
    // The file stays protected until the edit is applied: the caller then removes the
    // numbers of edit's new files from pending_outputs_.
  } else {
    pending_outputs_.erase(meta.number);
  }
  return s;
}

void DBImpl::LogTableFileCreation(uint64_t job, const std::string& family, int level,
                                  const FileMetaData& f) const {
  EventLog("table_file_creation", job)
      .Add("cf_name", family)
      .Add("level", level)
      .Add("file_number", f.number)
      .Add("file_size", f.file_size)
      .Add("smallest_seqno", f.smallest_seqno)
      .Add("largest_seqno", f.largest_seqno)
      .Add("num_range_deletions", f.num_range_deletions)
      .Write(info_log_.get());
}

std::vector<int> DBImpl::LsmState(const ColumnFamilyData& cfd) const {
  std::vector<int> files;
  const auto v = versions_->current(cfd.id);
  for (int level = 0; level < v->num_levels(); level++) {
    files.push_back(static_cast<int>(v->files(level).size()));
  }
  return files;
}

std::shared_ptr<ColumnFamilyData> DBImpl::PickFlush() const {
  std::shared_ptr<ColumnFamilyData> pick;
  for (const auto& [id, cfd] : families_) {
    if (!cfd->imm.empty() &&
        (pick == nullptr || cfd->imm.back().log_number < pick->imm.back().log_number)) {
      pick = cfd;
    }
  }
  return pick;
}

std::vector<VersionEdit> DBImpl::AdvanceIdleLogNumbers(uint32_t except) const {
  std::vector<VersionEdit> edits;
  for (const auto& [id, cfd] : families_) {
    if (id == except || cfd->OldestLogNumber() <= versions_->log_number(id)) continue;
    VersionEdit& e = edits.emplace_back();
    e.SetColumnFamily(id);
    e.SetLogNumber(cfd->OldestLogNumber());
  }
  return edits;
}

void DBImpl::BackgroundFlush(const std::shared_ptr<ColumnFamilyData>& cfd) {
  if (cfd->imm.empty()) return;
  const ColumnFamilyData::Immutable oldest = cfd->imm.back();
  VersionEdit edit;
  edit.SetColumnFamily(cfd->id);
  uint64_t job = 0;
  Status s = WriteLevel0Table(cfd.get(), oldest.mem, &edit, &job);
  // The memtable's data is in the logs before the next memtable's first log.
  auto keep_from = [&]() REQUIRES(mutex_) {
    return cfd->imm.size() > 1 ? cfd->imm[cfd->imm.size() - 2].log_number : cfd->mem_log_number;
  };
  if (s.ok()) s = SyncClosedLogsBefore(keep_from());
  if (s.ok() && !cfd->dropped.load(std::memory_order_relaxed)) {
    // Every log before keep_from is now fully in tables, for this family; families with
    // nothing unflushed in them move on with it, in the same record.
    edit.SetLogNumber(keep_from());
    std::vector<VersionEdit> others = AdvanceIdleLogNumbers(cfd->id);
    std::vector<VersionEdit*> edits = {&edit};
    for (VersionEdit& e : others) edits.push_back(&e);
    versions_->SetLastSequence(
        std::max(versions_->last_sequence(), last_sequence_.load(std::memory_order_acquire)));
    s = versions_->LogAndApply(edits);
  }
  for (const auto& [level, f] : edit.new_files()) pending_outputs_.erase(f.number);
  // A family dropped while its memtable was written keeps nothing: the table is not recorded
  // (DeleteObsoleteFiles removes it), the memtable goes, and a failure writing it is no error
  // of the DB's.
  if (!s.ok() && !cfd->dropped.load(std::memory_order_relaxed)) {
    SetBackgroundErrorLocked(s);
    return;
  }
  SHALE_ASSERT(cfd->imm.back().mem == oldest.mem);
  cfd->imm.pop_back();
  oldest.mem->Unref();
  num_flushes_++;
  if (!cfd->dropped.load(std::memory_order_relaxed)) {
    EventLog("flush_finished", job)
        .Add("cf_name", cfd->name)
        .Add("lsm_state", LsmState(*cfd))
        .Add("immutable_memtables", cfd->imm.size())
        .Write(info_log_.get());
  }
  if (stats_ != nullptr) stats_->recordTick(NUMBER_FLUSHES);
  if (!cfd->dropped.load(std::memory_order_relaxed)) InstallSuperVersion(cfd.get());
  DeleteFlushedFiles();
  FlushInfoLogUnlocked();
}

void DBImpl::FlushInfoLogUnlocked() {
  if (info_log_ == nullptr) return;
  mutex_.Unlock();
  info_log_->Flush();
  mutex_.Lock();
}

void DBImpl::DeleteFlushedFiles() {
  // DeleteObsoleteFiles releases the mutex: a Flush waiting for this flush's memtables waits
  // on (flush_finishing_) until the logs they freed are gone.
  flush_finishing_ = true;
  DeleteObsoleteFiles();
  flush_finishing_ = false;
}

void DBImpl::BackgroundAtomicFlush() {
  // Every immutable memtable there is now, of every family: each family's are all it held up
  // to its last switch, and switches take every family holding data at once, so together they
  // are one prefix of the write history. Memtables switched while the tables are written are
  // newer (at the front of each list) and wait for the next flush.
  struct Part {
    std::shared_ptr<ColumnFamilyData> cfd;
    std::vector<MemTable*> mems;  // oldest first
    VersionEdit edit;
  };
  std::vector<Part> parts;
  for (const auto& [id, cfd] : families_) {
    if (cfd->imm.empty()) continue;
    Part& p = parts.emplace_back();
    p.cfd = cfd;
    for (auto it = cfd->imm.rbegin(); it != cfd->imm.rend(); ++it) p.mems.push_back(it->mem);
    p.edit.SetColumnFamily(id);
  }
  if (parts.empty()) return;
  Status s;
  for (Part& p : parts) {
    for (MemTable* mem : p.mems) {
      if (!s.ok() || p.cfd->dropped.load(std::memory_order_relaxed)) break;
      Status w = WriteLevel0Table(p.cfd.get(), mem, &p.edit);
      // A failure of a family dropped meanwhile is no error of the DB's.
      if (!w.ok() && !p.cfd->dropped.load(std::memory_order_relaxed)) s = w;
    }
  }
  std::vector<VersionEdit> others;
  if (s.ok()) s = SyncClosedLogsBefore(UINT64_MAX);
  if (s.ok()) {
    std::vector<VersionEdit*> edits;
    for (Part& p : parts) {
      ColumnFamilyData* cfd = p.cfd.get();
      if (cfd->dropped.load(std::memory_order_relaxed)) continue;
      // The memtables after the flushed ones hold the family's data from this log on.
      const size_t left = cfd->imm.size() - p.mems.size();
      p.edit.SetLogNumber(left > 0 ? cfd->imm[left - 1].log_number : cfd->mem_log_number);
      edits.push_back(&p.edit);
    }
    std::set<uint32_t> flushed;
    for (const Part& p : parts) flushed.insert(p.cfd->id);
    for (VersionEdit& e : AdvanceIdleLogNumbers(UINT32_MAX)) {
      if (!flushed.contains(e.column_family())) others.push_back(std::move(e));
    }
    for (VersionEdit& e : others) edits.push_back(&e);
    versions_->SetLastSequence(
        std::max(versions_->last_sequence(), last_sequence_.load(std::memory_order_acquire)));
    if (!edits.empty()) s = versions_->LogAndApply(edits);
  }
  for (const Part& p : parts) {
    for (const auto& [level, f] : p.edit.new_files()) pending_outputs_.erase(f.number);
  }
  if (!s.ok()) {
    SetBackgroundErrorLocked(s);
    return;
  }
  for (const Part& p : parts) {
    ColumnFamilyData* cfd = p.cfd.get();
    for (MemTable* mem : p.mems) {
      SHALE_ASSERT(cfd->imm.back().mem == mem);
      cfd->imm.pop_back();
      mem->Unref();
      num_flushes_++;
      if (stats_ != nullptr) stats_->recordTick(NUMBER_FLUSHES);
    }
    if (!cfd->dropped.load(std::memory_order_relaxed)) InstallSuperVersion(cfd);
  }
  DeleteFlushedFiles();
}

// ---------------------------------------------------------------- obsolete files

void DBImpl::DeleteObsoleteFiles() {
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  // Files numbered from here on are created after this snapshot of what is live (the listing
  // happens without the mutex): never touch them.
  const uint64_t newer_than_snapshot = versions_->next_file_number();
  const uint64_t min_log = versions_->log_number();
  const uint64_t manifest = versions_->manifest_file_number();
  // Unsynced logs whose memtables are in tables are dropped without a sync (closed below,
  // outside the mutex).
  std::vector<UnsyncedLog> retired;
  auto still_needed = std::find_if(unsynced_logs_.begin(), unsynced_logs_.end(),
                                   [&](const UnsyncedLog& l) { return l.number >= min_log; });
  std::move(unsynced_logs_.begin(), still_needed, std::back_inserter(retired));
  unsynced_logs_.erase(unsynced_logs_.begin(), still_needed);
  UpdateHasUnsyncedLogs();
  while (!closed_logs_.empty() && closed_logs_.front().number < min_log) {
    closed_log_bytes_ -= closed_logs_.front().bytes;
    closed_logs_.pop_front();
  }
  std::vector<std::string> children;
  // The families whose table caches may hold readers of deleted tables, for evicting them
  // outside the mutex: the live ones and the dropped ones still held.
  std::vector<std::shared_ptr<ColumnFamilyData>> families;
  for (const auto& [id, cfd] : families_) families.push_back(cfd);
  std::erase_if(dropped_families_,
                [](const std::weak_ptr<ColumnFamilyData>& w) { return w.expired(); });
  for (const auto& w : dropped_families_) {
    if (auto cfd = w.lock()) families.push_back(std::move(cfd));
  }
  purges_running_++;
  mutex_.Unlock();
  for (UnsyncedLog& log : retired) log.writer->Close().PermitUncheckedError();  // not needed
  Status s = fs_->GetChildren(dbname_, &children);
  std::vector<std::pair<FileType, uint64_t>> doomed;
  if (s.ok()) {
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (!ParseFileName(name, &number, &type) || type == FileType::kInfoLog) continue;
      if (number >= newer_than_snapshot) continue;
      bool keep = true;
      switch (type) {
        case FileType::kLog:
          keep = number >= min_log;
          break;
        case FileType::kTable:
          keep = live.count(number) > 0;
          break;
        case FileType::kManifest:
          keep = number >= manifest;
          break;
        case FileType::kTemp:
          keep = live.count(number) > 0;  // a CURRENT being written uses its MANIFEST's number
          break;
        default:
          break;
      }
      if (!keep) doomed.emplace_back(type, number);
    }
  }
  // Another call may have listed the same files and be deleting them: each file is deleted by
  // the call that claims it first.
  mutex_.Lock();
  size_t claimed = 0;
  for (const std::pair<FileType, uint64_t>& f : doomed) {
    if (files_being_purged_.insert(f).second) doomed[claimed++] = f;
  }
  doomed.resize(claimed);
  mutex_.Unlock();
  SHALE_TEST_HOOK("DBImpl::DeleteObsoleteFiles:Claimed");
  for (const auto& [type, number] : doomed) {
    if (type == FileType::kTable) {
      for (const auto& cfd : families) cfd->table_cache->Evict(number);
    }
    const std::string name = type == FileType::kLog        ? LogFileName(dbname_, number)
                             : type == FileType::kTable    ? TableFileName(dbname_, number)
                             : type == FileType::kManifest ? ManifestFileName(dbname_, number)
                                                           : TempFileName(dbname_, number);
    Status d = fs_->DeleteFile(name);  // a leftover is retried next time
    if (type == FileType::kTable) {
      EventLog("table_file_deletion", 0)
          .Add("file_number", number)
          .Add("status", d.ToString())
          .Write(info_log_.get());
    } else {
      LogInfo(info_log_.get(), "Deleted {}: {}", name, d.ToString());
    }
  }
  mutex_.Lock();
  if (--purges_running_ == 0) files_being_purged_.clear();
}

// ---------------------------------------------------------------- explicit calls

Status DBImpl::FlushImpl(const FlushOptions& options,
                         const std::vector<ColumnFamilyData*>& families) {
  Status s = WithWritesStopped([&]() -> Status {
    MutexLock l(&mutex_);
    std::vector<ColumnFamilyData*> switching;
    for (ColumnFamilyData* cfd : families) {
      if (cfd->dropped.load(std::memory_order_relaxed)) continue;
      if (cfd->mem->num_entries() == 0) {
        // Nothing to switch: a family flushed while idle keeps no memory for memtables to come.
        cfd->memtable_blocks->SetRetaining(false);
        continue;
      }
      // Like a full memtable, wait for room: max_write_buffer_number bounds memtables however
      // they are switched (a loop of Put and Flush without waiting would pile them up).
      while (bg_error_.ok() && !shutting_down_ &&
             cfd->imm.size() + 1 >= static_cast<size_t>(cfd->options.max_write_buffer_number)) {
        bg_work_cv_.SignalAll();
        bg_done_cv_.Wait();
      }
      switching.push_back(cfd);
    }
    if (!bg_error_.ok()) return Status::IOError("DB is read-only", bg_error_.ToString());
    if (shutting_down_) return Status::Aborted("the DB is closing");
    // One new WAL for all of them.
    Status r = SwitchMemtables(switching);
    if (!r.ok()) SetBackgroundErrorLocked(r);
    return r;
  });
  if (!s.ok() || !options.wait) return s;
  MutexLock l(&mutex_);
  auto flushing = [&] {
    for (ColumnFamilyData* cfd : families) {
      if (!cfd->imm.empty() && !cfd->dropped.load(std::memory_order_relaxed)) return true;
    }
    return false;
  };
  while ((flushing() || flush_finishing_) && bg_error_.ok()) {
    if (shutting_down_) return Status::Aborted("the DB is closing");
    bg_done_cv_.Wait();
  }
  return bg_error_.ok() ? Status::OK() : Status::IOError("flush failed", bg_error_.ToString());
}

Status DBImpl::WaitForCompact() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  MutexLock l(&mutex_);
  while (bg_error_.ok() && !shutting_down_ &&
         (flush_running_ || !running_compactions_.empty() || PickFlush() != nullptr ||
          NeedsCompaction())) {
    bg_work_cv_.SignalAll();
    bg_done_cv_.Wait();
  }
  return bg_error_.ok() ? Status::OK()
                        : Status::IOError("background work failed", bg_error_.ToString());
}

}  // namespace shale
