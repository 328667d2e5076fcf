// DBImpl's life: construction, background errors and Resume, Close. The rest of the class is
// defined by concept in db_write.cc, db_read.cc, db_properties.cc, db_open.cc,
// db_background.cc and db_compaction.cc (see db_impl.h).
#include "src/db/db_impl.h"

#include "memtable/memtable.h"
#include "src/db/super_version.h"
#include "src/util/logging.h"

namespace shale {

namespace {

// The block cache of a DB that names none: 32 MiB in a CLOCK cache whose table is sized for
// blocks of block_size, but at least 4 KiB (smaller blocks use part of the capacity rather
// than a larger table).
std::shared_ptr<Cache> DefaultBlockCache(const Options& options) {
  return HyperClockCacheOptions(32 << 20, std::max<size_t>(options.block_size, 4096))
      .MakeSharedCache();
}

}  // namespace

DBImpl::DBImpl(const Options& options, std::string dbname)
    : dbname_(std::move(dbname)),
      options_(options),
      fs_(options.file_system ? options.file_system : FileSystem::Default()),
      stats_(options.statistics.get()),
      block_cache_(options.block_cache ? options.block_cache : DefaultBlockCache(options)),
      default_cfd_(NewFamilyData(0, kDefaultColumnFamilyName, options)),
      default_family_(std::make_unique<ColumnFamilyHandleImpl>(this, default_cfd_)),
      write_thread_(options.max_write_batch_group_size_bytes,
                    std::chrono::microseconds(options.enable_write_thread_adaptive_yield
                                                  ? options.write_thread_max_yield_usec
                                                  : 0),
                    /*first_ticket=*/1, options.enable_pipelined_write),
      write_delay_(std::max<uint64_t>(options.delayed_write_rate, 1)) {
  MutexLock l(&mutex_);
  PublishFamilies(FamilyMap{{0, default_cfd_}});
}

std::shared_ptr<ColumnFamilyData> DBImpl::NewFamilyData(
    uint32_t id, const std::string& name, const ColumnFamilyOptions& cf_options) const {
  const Options family_options(options_, cf_options);
  std::shared_ptr<Cache> cache =
      family_options.block_cache ? family_options.block_cache : block_cache_;
  return std::make_shared<ColumnFamilyData>(id, name, family_options, dbname_, fs_.get(),
                                            std::move(cache), stats_);
}

DBImpl::~DBImpl() { CloseImpl().PermitUncheckedError(); }

Status DBImpl::CheckOpen() const {
  if (closed_.load(std::memory_order_relaxed)) return Status::Aborted("DB is closed");
  return Status::OK();
}

Status DBImpl::NoSuperVersion(const ColumnFamilyData& cfd) const {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  return Status::InvalidArgument("column family was dropped", cfd.name);
}

void DBImpl::SetBackgroundError(const Status& s) {
  MutexLock l(&mutex_);
  SetBackgroundErrorLocked(s);
}

void DBImpl::SetBackgroundErrorLocked(const Status& s) {
  if (bg_error_.ok()) {
    LogError(info_log_.get(), "Background error, the DB is read-only until Resume: {}",
             s.ToString());
    bg_error_ = s;
  }
  read_only_.store(true, std::memory_order_release);
  bg_done_cv_.SignalAll();  // stalled writers and waiters see the error
}

Status DBImpl::Resume() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  return WithWritesStopped([this]() -> Status {
    if (!read_only_.load()) return Status::OK();
    MutexLock l(&mutex_);
    // The old log may end in a partial record, and its unsynced tail may already be lost
    // (a failed fsync is not retried as if it could succeed). Later writes go to a fresh log,
    // and everything acknowledged before is flushed to a table first, so that no later
    // synced write can survive a crash that loses an earlier one.
    Status r = CreateLog(/*keep_previous=*/false);
    if (!r.ok()) return r;
    for (const auto& [id, cfd] : families_) {
      const uint64_t old_log = cfd->mem_log_number;
      // Also when the memtable was empty (the failed write was its log's first): the old log
      // leaves the set that recovery replays, or a partial record at its end would fail every
      // later open in absolute consistency mode, and a write whose fsync failed would come
      // back.
      cfd->mem_log_number = log_number_;
      if (cfd->mem->num_entries() > 0) {
        cfd->RetainMemtableBlocksIfFull();
        cfd->imm.push_front(ColumnFamilyData::Immutable{cfd->mem, old_log});
        cfd->mem = cfd->NewMemTable();
        InstallSuperVersion(cfd.get());
      }
    }
    // The memtables are written here, all families in one MANIFEST record: flushed one at a
    // time, a crash between two could leave one family's tables holding writes that the old
    // log, whose unsynced tail may be lost, no longer has for another.
    while (flush_running_) bg_done_cv_.Wait();  // a flush that started before the error
    bg_error_ = Status::OK();
    flush_running_ = true;
    BackgroundAtomicFlush();
    flush_running_ = false;
    bg_done_cv_.SignalAll();
    bg_work_cv_.SignalAll();
    if (!bg_error_.ok()) return Status::IOError("Resume: flush failed", bg_error_.ToString());
    // Where nothing was flushed to move it on: everything before the fresh log is in tables.
    std::vector<VersionEdit> edits = AdvanceIdleLogNumbers(/*except=*/UINT32_MAX);
    if (!edits.empty()) {
      std::vector<VersionEdit*> pointers;
      for (VersionEdit& e : edits) pointers.push_back(&e);
      r = versions_->LogAndApply(pointers);
      if (!r.ok()) {
        SetBackgroundErrorLocked(r);
        return r;
      }
      DeleteObsoleteFiles();
    }
    read_only_.store(false, std::memory_order_release);
    LogInfo(info_log_.get(), "Resumed after a background error: writes accepted again");
    return Status::OK();
  });
}

Status DBImpl::Close() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  // One of two racing Closes goes on; the other is told so (the DB may yet stay open, if the
  // first refuses). From here on NewIterator and GetSnapshot refuse. A NewIterator that
  // counted its iterator before it read closing_ is seen below: both sides are sequentially
  // consistent, so at least one sees the other.
  if (closing_.exchange(true)) return Status::Aborted("another Close is in progress");
  {
    MutexLock l(&mutex_);
    if (!snapshots_.empty()) s = Status::Aborted("cannot close a DB with unreleased snapshots");
  }
  if (s.ok() && live_iterators_.load() > 0) {
    s = Status::Aborted("cannot close a DB with live iterators");
  }
  if (!s.ok()) {
    closing_.store(false);
    return s;
  }
  closed_.store(true);
  return CloseImpl();
}

// Idempotent: also releases what a failed Open had taken.
Status DBImpl::CloseImpl() {
  closed_.store(true);
  shutdown_requested_.store(true);
  {
    MutexLock l(&mutex_);
    shutting_down_ = true;
    bg_work_cv_.SignalAll();
    bg_done_cv_.SignalAll();
    stats_cv_.SignalAll();
  }
  // Write groups already past their checks finish before the log and the memtables go; every
  // later group is refused by MakeRoomForWrite (shutting_down_), a stalled one wakes to it, and
  // so is every later exclusive section (Flush, SyncWAL, Resume, family changes).
  WithWritesStopped([] { return Status::OK(); }).PermitUncheckedError();
  SHALE_TEST_HOOK("DBImpl::CloseImpl:AfterDrain");
  for (std::thread& t : bg_threads_) t.join();
  bg_threads_.clear();
  Status s;
  if (log_ != nullptr) {
    s = log_->Close();
    log_.reset();
  }
  std::vector<UnsyncedLog> kept;
  {
    MutexLock l(&mutex_);
    kept.swap(unsynced_logs_);
  }
  for (UnsyncedLog& log : kept) {
    Status c = log.writer->Close();
    if (s.ok() && !c.ok()) s = c;
  }
  // The families' memtables go now; their table caches with the last reference to each
  // family (handles the caller still holds keep theirs).
  const std::shared_ptr<const FamilyMap> families = Families();
  for (const auto& [id, cfd] : *families) ReleaseSuperVersion(cfd.get());
  {
    MutexLock l(&mutex_);
    for (const auto& [id, cfd] : *families) {
      for (const ColumnFamilyData::Immutable& i : cfd->imm) i.mem->Unref();
      cfd->imm.clear();
      if (cfd->mem != nullptr) cfd->mem->Unref();
      cfd->mem = nullptr;
    }
    snapshots_.clear();
    versions_.reset();
  }
  {
    MutexLock l(&snapshot_mu_);
    live_snapshots_.clear();
  }
  db_dir_.reset();
  if (info_log_ != nullptr && db_lock_ != nullptr) {  // once (CloseImpl is idempotent)
    LogInfo(info_log_.get(), "DB closed: {}", s.ok() ? "OK" : s.ToString());
    // A LOG of the DB's own is closed with it (before the lock goes, so that the next Open's
    // renaming of it is not raced by this one); an application's logger stays as it is.
    if (options_.info_log == nullptr) {
      info_log_->Close().PermitUncheckedError();
    } else {
      info_log_->Flush();
    }
  }
  db_lock_.reset();
  return s;
}

}  // namespace shale
