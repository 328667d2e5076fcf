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
#include <system_error>
#include <utility>

#include "memtable/memtable.h"
#include "src/base/filename.h"
#include "src/db/builder.h"
#include "src/db/compaction.h"
#include "src/db/compaction_picker.h"
#include "src/db/db_impl.h"
#include "src/util/clock.h"
#include "src/util/invariants.h"

namespace shale {

TableBuilderOptions DBImpl::BuilderOptions() const {
  TableBuilderOptions o;
  o.comparator = &icmp_;
  o.block_size = options_.block_size;
  o.block_restart_interval = options_.block_restart_interval;
  o.bloom_bits_per_key = options_.bloom_bits_per_key;
  o.compression = options_.compression;
  if (options_.merge_operator) o.merge_operator_name = options_.merge_operator->Name();
  return o;
}

MemTable* DBImpl::NewMemTable() const {
  auto* m = new MemTable(icmp_, MemTable::ArenaBlockSizeFor(options_.write_buffer_size),
                         static_cast<size_t>(static_cast<double>(options_.write_buffer_size) *
                                             options_.memtable_bloom_size_ratio));
  m->Ref();  // the caller's reference; the memtable frees itself on the last Unref
  return m;
}

void DBImpl::InstallSuperVersion() {
  // A SuperVersion's memtables are ordered newest first, as reads need them: by the first WAL
  // holding their data, each immutable memtable is older than the one before it, and the
  // mutable memtable is newer than all of them. (A memtable that becomes mutable gets a log
  // created just before, and log numbers only grow; recovery may give mem_ an older, replayed
  // log, but only while there are no immutable memtables.)
  if constexpr (kInvariantChecks) {
    for (size_t i = 0; i < imm_.size(); i++) {
      const uint64_t newer = i == 0 ? mem_log_number_ : imm_[i - 1].log_number;
      SHALE_ASSERT(imm_[i].log_number < newer);
    }
  }
  std::vector<MemTable*> imm;
  for (const Immutable& i : imm_) imm.push_back(i.mem);
  auto sv = std::make_shared<SuperVersion>(mem_, std::move(imm), versions_->current());
  pending_compaction_bytes_ = EstimatePendingCompactionBytes(*versions_, *versions_->current());
  {
    MutexLock l(&sv_mutex_);
    sv.swap(super_version_);
  }
  // The old one (sv now) is released outside the lock: its destructor may free memtables.
}

// ---------------------------------------------------------------- write path

Status DBImpl::SwitchMemtable() {
  const uint64_t old_log = mem_log_number_;
  Status s = CreateLog(/*keep_previous=*/true);
  if (!s.ok()) return s;
  imm_.push_front(Immutable{mem_, old_log});
  mem_ = NewMemTable();
  mem_log_number_ = log_number_;
  InstallSuperVersion();
  bg_work_cv_.SignalAll();
  return Status::OK();
}

Status DBImpl::MakeRoomForWrite(uint64_t group_bytes) {
  MutexLock l(&mutex_);
  bool delayed = false;
  while (true) {
    if (!bg_error_.ok()) {
      return Status::IOError("DB is read-only after an earlier error; call Resume()",
                             bg_error_.ToString());
    }
    if (shutting_down_) return Status::Aborted("the DB is closing");
    // L0's triggers and the pending-bytes limits say that compaction is behind. With automatic
    // compactions off nothing brings them down (a bulk load, then CompactRange), so they do
    // not apply: waiting would never end, and CompactRange would queue behind the stalled
    // writer.
    const bool auto_compactions = !options_.disable_auto_compactions;
    const size_t l0 = auto_compactions ? versions_->current()->files(0).size() : 0;
    const uint64_t pending = auto_compactions ? pending_compaction_bytes_ : 0;
    const uint64_t soft = options_.soft_pending_compaction_bytes_limit;
    const uint64_t hard = options_.hard_pending_compaction_bytes_limit;
    const bool l0_stop = l0 >= static_cast<size_t>(options_.level0_stop_writes_trigger);
    const bool pending_stop = hard > 0 && pending >= hard;
    const bool l0_slow = l0 >= static_cast<size_t>(options_.level0_slowdown_writes_trigger);
    const bool pending_slow = soft > 0 && pending >= soft;
    const bool mem_full = mem_->ApproximateMemoryUsage() >= options_.write_buffer_size;
    if (!delayed && !l0_stop && !pending_stop && (l0_slow || pending_slow)) {
      // Slow down: the group's bytes pass at delayed_write_rate (WriteDelay).
      delayed = true;
      stall_reason_ = l0_slow ? "level0-slowdown" : "pending-compaction-bytes-slowdown";
      const uint64_t sleep = write_delay_.Delay(group_bytes, NowMicros());
      if (sleep > 0) {
        write_thread_.LeaderStalls();
        (l0_slow ? stall_count_l0_slowdown_ : stall_count_pending_slowdown_)++;
        const uint64_t start = NowMicros();
        mutex_.Unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(sleep));
        mutex_.Lock();
        if (stats_ != nullptr) stats_->recordTick(STALL_MICROS, NowMicros() - start);
      }
      continue;
    }
    if (!l0_slow && !pending_slow) write_delay_.Reset();
    if (l0_stop) {
      stall_reason_ = "level0-stop";
      stall_count_l0_stop_++;
    } else if (pending_stop) {
      stall_reason_ = "pending-compaction-bytes-stop";
      stall_count_pending_stop_++;
    } else if (mem_full &&
               imm_.size() + 1 >= static_cast<size_t>(options_.max_write_buffer_number)) {
      stall_reason_ = "memtable-limit";
      stall_count_memtable_++;
    } else {
      if (!delayed) stall_reason_ = "none";
      if (mem_full) {
        Status s = SwitchMemtable();
        if (!s.ok()) {
          SetBackgroundErrorLocked(s);
          return s;
        }
      }
      return Status::OK();
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
  } catch (const std::system_error& e) {  // out of threads (ulimit -u, memory)
    return Status::IOError("cannot start background threads", e.what());
  }
  return Status::OK();
}

bool DBImpl::NeedsCompaction() const {
  if (options_.disable_auto_compactions || manual_compaction_ || manual_compactions_waiting_ > 0) {
    return false;
  }
  return MaxCompactionScore(*versions_, *versions_->current()) >= 1;
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
  const Version& v = *versions_->current();
  const int64_t trigger = options_.level0_file_num_compaction_trigger;
  const int64_t slowdown = options_.level0_slowdown_writes_trigger;
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
  uint64_t threshold = std::max(bottom / 8, 2 * options_.max_bytes_for_level_base);
  if (options_.soft_pending_compaction_bytes_limit > 0) {
    threshold = std::min(threshold, options_.soft_pending_compaction_bytes_limit / 4);
  }
  return pending_compaction_bytes_ > 0 && pending_compaction_bytes_ >= threshold;
}

void DBImpl::BackgroundThread() {
  MutexLock l(&mutex_);
  while (!shutting_down_) {
    if (!flush_running_ && !imm_.empty() && bg_error_.ok()) {
      flush_running_ = true;
      BackgroundFlush();
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

Status DBImpl::WriteLevel0Table(MemTable* mem, VersionEdit* edit) {
  FileMetaData meta;
  meta.number = versions_->NewFileNumber();
  pending_outputs_.insert(meta.number);
  const TableBuilderOptions options = BuilderOptions();
  // Versions hidden from every reader are dropped: a snapshot taken from here on reads at a
  // sequence newer than all of mem's entries, so it needs only their newest.
  const std::vector<SequenceNumber> snapshots = SnapshotSequences();
  const FlushFilter filter{&snapshots};
  Status s;
  {
    mutex_.Unlock();
    std::unique_ptr<InternalIterator> iter = mem->NewIterator();
    s = BuildTable(dbname_, fs_.get(), options, iter.get(), &meta, &filter,
                   options_.rate_limiter.get(), stats_);
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

void DBImpl::BackgroundFlush() {
  if (imm_.empty()) return;
  const Immutable oldest = imm_.back();
  VersionEdit edit;
  Status s = WriteLevel0Table(oldest.mem, &edit);
  if (s.ok()) {
    // Every log before the next memtable's first log is now fully in tables.
    const uint64_t keep_from = imm_.size() > 1 ? imm_[imm_.size() - 2].log_number : mem_log_number_;
    edit.SetLogNumber(keep_from);
    versions_->SetLastSequence(
        std::max(versions_->last_sequence(), last_sequence_.load(std::memory_order_acquire)));
    s = versions_->LogAndApply(&edit);
  }
  for (const auto& [level, f] : edit.new_files()) pending_outputs_.erase(f.number);
  if (!s.ok()) {
    SetBackgroundErrorLocked(s);
    return;
  }
  imm_.pop_back();
  oldest.mem->Unref();
  num_flushes_++;
  if (stats_ != nullptr) stats_->recordTick(NUMBER_FLUSHES);
  InstallSuperVersion();
  DeleteObsoleteFiles();
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
  has_unsynced_logs_.store(!unsynced_logs_.empty(), std::memory_order_relaxed);
  std::vector<std::string> children;
  mutex_.Unlock();
  for (UnsyncedLog& log : retired) log.writer->Close().PermitUncheckedError();  // not needed
  Status s = fs_->GetChildren(dbname_, &children);
  std::vector<std::pair<FileType, uint64_t>> doomed;
  if (s.ok()) {
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (!ParseFileName(name, &number, &type)) continue;
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
  for (const auto& [type, number] : doomed) {
    if (type == FileType::kTable) table_cache_->Evict(number);
    const std::string name = type == FileType::kLog        ? LogFileName(dbname_, number)
                             : type == FileType::kTable    ? TableFileName(dbname_, number)
                             : type == FileType::kManifest ? ManifestFileName(dbname_, number)
                                                           : TempFileName(dbname_, number);
    fs_->DeleteFile(name).PermitUncheckedError();  // a leftover is retried next time
  }
  mutex_.Lock();
}

// ---------------------------------------------------------------- explicit calls

Status DBImpl::Flush(const FlushOptions& options) {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  s = WithWritesStopped([this]() -> Status {
    MutexLock l(&mutex_);
    if (!bg_error_.ok()) return Status::IOError("DB is read-only", bg_error_.ToString());
    if (mem_->num_entries() == 0) return Status::OK();
    // Like a full memtable, wait for room: max_write_buffer_number bounds memtables however
    // they are switched (a loop of Put and Flush without waiting would pile them up).
    while (bg_error_.ok() && !shutting_down_ &&
           imm_.size() + 1 >= static_cast<size_t>(options_.max_write_buffer_number)) {
      bg_work_cv_.SignalAll();
      bg_done_cv_.Wait();
    }
    if (!bg_error_.ok()) return Status::IOError("DB is read-only", bg_error_.ToString());
    if (shutting_down_) return Status::Aborted("the DB is closing");
    Status r = SwitchMemtable();
    if (!r.ok()) SetBackgroundErrorLocked(r);
    return r;
  });
  if (!s.ok() || !options.wait) return s;
  MutexLock l(&mutex_);
  while (!imm_.empty() && bg_error_.ok() && !shutting_down_) bg_done_cv_.Wait();
  return bg_error_.ok() ? Status::OK() : Status::IOError("flush failed", bg_error_.ToString());
}

Status DBImpl::WaitForCompact() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  MutexLock l(&mutex_);
  while (bg_error_.ok() && !shutting_down_ &&
         (flush_running_ || !running_compactions_.empty() || !imm_.empty() || NeedsCompaction())) {
    bg_work_cv_.SignalAll();
    bg_done_cv_.Wait();
  }
  return bg_error_.ok() ? Status::OK()
                        : Status::IOError("background work failed", bg_error_.ToString());
}

}  // namespace shale
