// DB::Open, recovery and DestroyDB.
//
// Open reads CURRENT and the MANIFEST (VersionSet::Recover), then replays every NNNNNN.log
// numbered at or above the MANIFEST's log number, in order, into a memtable — writing it out
// as an L0 table whenever it fills and at the end (unless avoid_flush_during_recovery), so
// that the replayed logs can be dropped once the MANIFEST records the new log number. Each log
// is read to its end or first problem, and the WAL recovery mode decides:
//   - a torn or zeroed tail is dropped (tolerate-corrupted-tail, point-in-time) or fails Open
//     (absolute-consistency). A log that was synced more than once ends in zeros after a crash
//     (its zero-filled space, see CreateLog), except in absolute-consistency mode;
//   - a damaged record fails Open (tolerate, absolute) or ends replay there (point-in-time);
//   - a read error always fails Open;
//   - a log whose header (LogLink) names a sequence the log before it lacks ends replay
//     before it: memtable switches do not sync the old log, so that log lost unsynced records
//     in the crash, and every later log holds only unsynced writes made after them. A log with
//     no WAL write of its own carries its header's sequence on to the next header.
// When anything was dropped and the recovered data stays in the memtable
// (avoid_flush_during_recovery), the surviving records are copied into the new log, which is
// synced before the old logs are deleted, so a later crash can never replay records that were
// dropped, nor records that followed a dropped one. Records already applied (from a copy cut
// short by a crash) are recognized by their sequence numbers and skipped. When nothing was
// dropped and the recovered data stays in the memtable, the replayed logs (kept until that
// memtable is flushed) are synced, so that their unsynced tails cannot be lost in a later crash
// that keeps newer synced writes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <random>
#include <set>

#include "memtable/memtable.h"
#include "src/base/async_read.h"
#include "src/base/filename.h"
#include "src/base/info_log.h"
#include "src/db/db_impl.h"
#include "src/db/options_log.h"
#include "src/db/subcompaction.h"
#include "src/db/write_batch_internal.h"
#include "src/util/invariants.h"
#include "src/util/logging.h"
#include "wal/log_reader.h"

namespace shale {
namespace {

// Zeros a synced WAL keeps written ahead of its records (FileOptions::zero_fill_ahead): one
// extra write of this size per half as many log bytes.
constexpr uint64_t kWalZeroFillBytes = 1 << 20;

// Upper bounds that keep Open from failing on allocation or thread creation.
constexpr size_t kMaxWriteBufferSize = size_t{64} << 30;
constexpr int kMaxBackgroundJobs = 64;

std::string NewIdentity() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  return fmt::format("{:016x}{:016x}\n", gen(), gen());
}

// How one log in the replay set follows the one before it. A log started by a memtable switch
// begins with a header: an empty batch whose sequence is the last one written to the previous
// log. Logs are synced lazily, oldest first, so when the previous log (in the replay set) ends
// below that sequence it lost records in the crash, and this log and every later one hold
// only unsynced writes made after them: the history ends before this log.
struct LogLink {
  bool has_previous = false;         // in: a log before this one was replayed
  SequenceNumber previous_last = 0;  // in: the last sequence found in that log
  SequenceNumber log_last = 0;       // out: the last sequence in this log, header included
  bool previous_incomplete = false;  // out: the header names a sequence the previous log lacks
};

// Replays one log: calls apply(batch, first_seq) for each record not yet applied.
// *last_seq carries the highest applied sequence across logs.
// A record naming a family known(id) refuses fails the open (InvalidArgument).
template <typename Apply>
log::Reader::End ReplayLog(FileSystem* fs, const std::string& name,
                           const std::function<bool(uint32_t)>& known, LogLink* link,
                           SequenceNumber* last_seq, uint64_t* records, Status* problem,
                           Apply&& apply) {
  *records = 0;
  link->log_last = 0;
  link->previous_incomplete = false;
  std::unique_ptr<SequentialFile> file;
  Status s = fs->NewSequentialFile(name, FileOptions(), &file);
  if (!s.ok()) {
    *problem = s;
    return log::Reader::End::kIOError;
  }
  log::Reader reader(std::move(file), name);
  std::string scratch;
  Slice record;
  SequenceNumber& log_last = link->log_last;  // sequences only grow within one log
  while (reader.ReadRecord(&record, &scratch)) {
    ++*records;
    auto corrupt = [&](const std::string& what) {
      *problem = Status::Corruption(
          fmt::format("{}: offset {}: {}", name, reader.last_record_offset(), what));
      return log::Reader::End::kCorruption;
    };
    WriteBatch batch;
    s = WriteBatchInternal::SetContents(&batch, record);
    if (s.ok()) s = WriteBatchInternal::Validate(&batch, known);
    if (s.IsInvalidArgument()) {
      // A well-formed record of a column family this DB does not hold: not damage, and not
      // something any recovery mode may drop (later records would go with it). Open fails.
      *problem = Status::InvalidArgument(
          fmt::format("{}: offset {}", name, reader.last_record_offset()), s.ToString());
      return log::Reader::End::kIOError;
    }
    if (!s.ok()) return corrupt(s.ToString());
    const uint32_t count = batch.Count();
    if (count == 0) {
      // The header (first record only; empty batches are not logged otherwise). Its sequence
      // counts as this log's own: a log with no other record passes it on.
      if (*records == 1) {
        const SequenceNumber header = WriteBatchInternal::Sequence(&batch);
        if (link->has_previous && header > link->previous_last) {
          link->previous_incomplete = true;
          return log::Reader::End::kClean;
        }
        log_last = std::max(log_last, header);
      }
      continue;
    }
    const SequenceNumber first = WriteBatchInternal::Sequence(&batch);
    const SequenceNumber last = first + count - 1;
    if (first == 0 || last < first || last > kMaxSequenceNumber) {
      return corrupt("invalid sequence number");
    }
    if (first <= log_last) return corrupt("sequence number goes back");
    log_last = last;
    if (last <= *last_seq) continue;  // applied from an earlier copy of this record
    if (first <= *last_seq) return corrupt("sequence numbers overlap earlier records");
    apply(batch, first);
    *last_seq = last;
  }
  *problem = reader.status();
  return reader.end();
}

}  // namespace

Status ValidateOptions(const Options& o) {
  auto bad = [](const char* field, const std::string& why) {
    return Status::InvalidArgument(fmt::format("Options::{} {}", field, why));
  };
  if (o.comparator == nullptr) return bad("comparator", "must not be null");
  if (o.write_buffer_size == 0 || o.write_buffer_size > kMaxWriteBufferSize) {
    return bad("write_buffer_size", "must be in [1, 64 GiB]");
  }
  if (!(o.memtable_bloom_size_ratio >= 0 && o.memtable_bloom_size_ratio <= 0.25)) {
    return bad("memtable_bloom_size_ratio", "must be in [0, 0.25]");
  }
  if (o.max_write_buffer_number < 2) return bad("max_write_buffer_number", "must be >= 2");
  if (o.info_log_level >= NUM_INFO_LOG_LEVELS) {
    return bad("info_log_level", "is not a known level");
  }
  if (o.keep_log_file_num < 1) return bad("keep_log_file_num", "must be >= 1");
  if (o.max_write_batch_group_size_bytes == 0) {
    return bad("max_write_batch_group_size_bytes", "must be > 0");
  }
  if (o.write_thread_max_yield_usec > 1000000) {
    return bad("write_thread_max_yield_usec", "must be <= 1000000");
  }
  if (o.num_levels < 2 || o.num_levels > 64) return bad("num_levels", "must be in [2, 64]");
  if (o.level0_file_num_compaction_trigger < 1) {
    return bad("level0_file_num_compaction_trigger", "must be >= 1");
  }
  if (o.level0_slowdown_writes_trigger < o.level0_file_num_compaction_trigger) {
    return bad("level0_slowdown_writes_trigger", "must be >= level0_file_num_compaction_trigger");
  }
  if (o.level0_stop_writes_trigger < o.level0_slowdown_writes_trigger) {
    return bad("level0_stop_writes_trigger", "must be >= level0_slowdown_writes_trigger");
  }
  if (o.target_file_size_base == 0) return bad("target_file_size_base", "must be > 0");
  if (o.max_bytes_for_level_base == 0) return bad("max_bytes_for_level_base", "must be > 0");
  if (o.soft_pending_compaction_bytes_limit > 0 && o.hard_pending_compaction_bytes_limit > 0 &&
      o.hard_pending_compaction_bytes_limit < o.soft_pending_compaction_bytes_limit) {
    return bad("hard_pending_compaction_bytes_limit",
               "must be >= soft_pending_compaction_bytes_limit (or 0)");
  }
  if (o.delayed_write_rate == 0) return bad("delayed_write_rate", "must be > 0");
  if (o.compaction_pri != CompactionPri::kMinOverlappingRatio &&
      o.compaction_pri != CompactionPri::kRoundRobin) {
    return bad("compaction_pri", "must be kMinOverlappingRatio or kRoundRobin");
  }
  if (!(o.max_bytes_for_level_multiplier >= 1)) {
    return bad("max_bytes_for_level_multiplier", "must be >= 1");
  }
  if (o.max_background_jobs < 1 || o.max_background_jobs > kMaxBackgroundJobs) {
    return bad("max_background_jobs", "must be in [1, 64]");
  }
  if (o.max_background_compactions != -1 &&
      (o.max_background_compactions < 1 || o.max_background_compactions > kMaxBackgroundJobs)) {
    return bad("max_background_compactions", "must be -1 (from max_background_jobs) or in [1, 64]");
  }
  if (o.max_subcompactions < 1 || o.max_subcompactions > kMaxSubcompactions) {
    return bad("max_subcompactions", "must be in [1, 64]");
  }
  if (o.max_open_files != -1 && o.max_open_files < 1) {
    return bad("max_open_files", "must be -1 (unbounded) or >= 1");
  }
  if (o.compression != CompressionType::kNoCompression && o.compression != CompressionType::kZSTD) {
    return bad("compression", "is not a known compression type");
  }
  if (o.block_size == 0 || o.block_size > (size_t{1} << 30)) {
    return bad("block_size", "must be in [1, 1 GiB]");
  }
  if (o.block_restart_interval < 1) return bad("block_restart_interval", "must be >= 1");
  if (o.format_version != 1 && o.format_version != 3)
    return bad("format_version", "must be 1 or 3");
  if (!(o.bloom_bits_per_key >= 0 && o.bloom_bits_per_key <= 100)) {
    return bad("bloom_bits_per_key", "must be in [0, 100]");
  }
  return Status::OK();
}

Status DB::Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db) {
  db->reset();
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  auto impl = std::make_unique<DBImpl>(options, path);
  s = impl->OpenImpl();
  if (s.ok()) *db = std::move(impl);
  return s;
}

Status DB::Open(const DBOptions& db_options, const std::string& path,
                const std::vector<ColumnFamilyDescriptor>& column_families,
                std::vector<std::unique_ptr<ColumnFamilyHandle>>* handles,
                std::unique_ptr<DB>* db) {
  handles->clear();
  db->reset();
  const ColumnFamilyDescriptor* default_family = nullptr;
  std::map<std::string, ColumnFamilyOptions> others;
  for (const ColumnFamilyDescriptor& d : column_families) {
    if (d.name.empty()) return Status::InvalidArgument("empty column family name");
    if (d.name == kDefaultColumnFamilyName ? default_family != nullptr
                                           : !others.emplace(d.name, d.options).second) {
      return Status::InvalidArgument("column family named twice", d.name);
    }
    if (d.name == kDefaultColumnFamilyName) default_family = &d;
    Status s = ValidateOptions(Options(db_options, d.options));
    if (!s.ok()) return Status::InvalidArgument("column family " + d.name, s.ToString());
  }
  if (default_family == nullptr) {
    return Status::InvalidArgument("the column families to open leave out the default family");
  }
  const Options options(db_options, default_family->options);
  auto impl = std::make_unique<DBImpl>(options, path);
  Status s = impl->OpenImpl(others);
  if (!s.ok()) return s;
  for (const ColumnFamilyDescriptor& d : column_families) {
    handles->push_back(impl->NewFamilyHandle(d.name));
    SHALE_ASSERT(handles->back() != nullptr);  // OpenImpl opened every one
  }
  *db = std::move(impl);
  return Status::OK();
}

Status DB::ListColumnFamilies(const DBOptions& db_options, const std::string& path,
                              std::vector<std::string>* column_families) {
  column_families->clear();
  const std::shared_ptr<FileSystem> fs =
      db_options.file_system ? db_options.file_system : FileSystem::Default();
  Status s = fs->FileExists(CurrentFileName(path));
  if (s.IsNotFound()) return Status::NotFound(path, "holds no DB (no CURRENT file)");
  if (!s.ok()) return s;
  return VersionSet::ListColumnFamilies(fs.get(), path, column_families);
}

Status DBImpl::OpenImpl(const std::map<std::string, ColumnFamilyOptions>& families) {
  // Which path MultiGet's block reads take (shale.io.async-path).
  Status why;
  if (AsyncReader* r = ThreadAsyncReader(fs_, &why); r != nullptr) {
    async_path_ = r->Name();
  } else if (options_.require_io_uring) {
    return Status::NotSupported("io_uring is required (require_io_uring) but unavailable",
                                why.ToString());
  } else {
    async_path_ = "sync (asynchronous reads unavailable: " + why.ToString() + ")";
    if (stats_ != nullptr) stats_->recordTick(ASYNC_READ_FALLBACK);
  }
  bool is_new = false;
  Status s = LockAndCheckExistence(&is_new);
  if (s.ok()) {
    StartInfoLog();
    LogInfo(info_log_.get(), "{} DB {}", is_new ? "Creating" : "Recovering", dbname_);
    s = RecoverFamilies(is_new, families);
  }
  if (!s.ok()) {
    LogError(info_log_.get(), "Open failed: {}", s.ToString());
    if (info_log_ != nullptr) info_log_->Flush();
    closed_.store(true);  // the destructor still releases what was taken
    return s;
  }
  {
    MutexLock l(&mutex_);
    for (const auto& [id, cfd] : families_) {
      LogFamilyOptions(info_log_.get(), cfd->name, cfd->options);
    }
    LogInfo(info_log_.get(),
            "DB opened: {} column families, last sequence {}, next file number {}, WAL {:06}.log",
            families_.size(), versions_->last_sequence(), versions_->next_file_number(),
            log_number_);
  }
  if (info_log_ != nullptr) info_log_->Flush();
  s = StartBackgroundThreads();
  if (!s.ok()) CloseImpl().PermitUncheckedError();  // joins the threads that did start
  return s;
}

Status DBImpl::RecoverFamilies(bool is_new,
                               const std::map<std::string, ColumnFamilyOptions>& families) {
  // Every family the MANIFEST holds must be opened: a missing one would have its WAL records
  // skipped and its files deleted as obsolete.
  std::vector<std::string> existing;
  if (!is_new) {
    Status s = VersionSet::ListColumnFamilies(fs_.get(), dbname_, &existing);
    if (!s.ok()) return s;
    std::vector<std::string> not_opened;
    for (const std::string& name : existing) {
      if (name != kDefaultColumnFamilyName && !families.contains(name)) {
        not_opened.push_back(name);
      }
    }
    if (!not_opened.empty()) {
      return Status::InvalidArgument(
          dbname_, fmt::format("column families not opened: {}", fmt::join(not_opened, ", ")));
    }
  }
  std::vector<std::string> missing;
  for (const auto& [name, options] : families) {
    if (std::find(existing.begin(), existing.end(), name) == existing.end()) {
      missing.push_back(name);
    }
  }
  if (!missing.empty() && !options_.create_missing_column_families) {
    return Status::InvalidArgument(
        dbname_, fmt::format("column families not found: {} (create_missing_column_families "
                             "is false)",
                             fmt::join(missing, ", ")));
  }

  MutexLock l(&mutex_);
  versions_ =
      std::make_unique<VersionSet>(dbname_, &options_, fs_.get(), default_cfd_->table_cache.get(),
                                   &default_cfd_->icmp, db_dir_.get());
  FamilyMap opened = {{0, default_cfd_}};
  Status s;
  if (is_new) {
    s = versions_->CreateNew();
  } else {
    s = versions_->Recover([&](const FamilyInfo& info, FamilyConfig* config) {
      auto cfd = NewFamilyData(info.id, info.name, families.at(info.name));
      *config = cfd->config();
      opened.emplace(info.id, std::move(cfd));
      return Status::OK();
    });
  }
  if (!s.ok()) return s;
  for (const auto& [id, cfd] : opened) cfd->mem = cfd->NewMemTable();
  PublishFamilies(opened);
  RecoveryEdits edits;
  s = RecoverLogs(&edits);
  if (!s.ok()) return s;
  // Families the descriptors name and the MANIFEST does not: created now, starting in the new
  // WAL.
  for (const std::string& name : missing) {
    uint32_t id = versions_->max_column_family() + 1;
    auto cfd = NewFamilyData(id, name, families.at(name));
    s = versions_->CreateColumnFamily(name, cfd->config(), log_number_, &id);
    if (!s.ok()) return s;
    cfd->mem = cfd->NewMemTable();
    cfd->mem_log_number = log_number_;
    opened.emplace(id, std::move(cfd));
  }
  PublishFamilies(opened);
  for (const auto& [id, cfd] : opened) InstallSuperVersion(cfd.get());
  DeleteObsoleteFiles();
  return Status::OK();
}

void DBImpl::StartInfoLog() {
  if (options_.info_log != nullptr) {
    info_log_ = options_.info_log;
  } else {
    InfoLogOptions o;
    o.fs = fs_;
    o.dbname = dbname_;
    o.db_log_dir = options_.db_log_dir;
    o.level = options_.info_log_level;
    o.max_log_file_size = options_.max_log_file_size;
    o.log_file_time_to_roll = options_.log_file_time_to_roll;
    o.keep_log_file_num = options_.keep_log_file_num;
    FileLogger::Open(std::move(o), &info_log_).PermitUncheckedError();  // none: no LOG
  }
  LogHeader(info_log_.get(), "shale version {}", SHALE_VERSION_STRING);
  LogHeader(info_log_.get(), "DB path: {}", dbname_);
  LogDBOptions(info_log_.get(), options_);
}

Status DBImpl::LockAndCheckExistence(bool* is_new) {
  *is_new = false;
  if (options_.create_if_missing) {
    Status s = fs_->CreateDirIfMissing(dbname_);
    if (!s.ok()) return s;
  } else if (fs_->FileExists(dbname_).IsNotFound()) {
    return Status::InvalidArgument(dbname_, "does not exist (create_if_missing is false)");
  }
  Status s = fs_->LockFile(LockFileName(dbname_), &db_lock_);
  if (!s.ok()) return s;
  s = fs_->NewDirectory(dbname_, &db_dir_);
  if (!s.ok()) return s;

  s = fs_->FileExists(CurrentFileName(dbname_));
  if (s.ok()) {
    if (options_.error_if_exists) {
      return Status::InvalidArgument(dbname_, "exists (error_if_exists is true)");
    }
    return Status::OK();
  }
  if (!s.IsNotFound()) return s;
  // No CURRENT. Creation writes IDENTITY, then a MANIFEST, then CURRENT, and only then logs
  // and tables: without logs or tables, no write was ever acknowledged here and an interrupted
  // creation can simply start over. With them, CURRENT was lost: that is damage.
  std::vector<std::string> children;
  s = fs_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  bool has_identity = false;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    if (type == FileType::kLog || type == FileType::kTable) {
      return Status::Corruption(dbname_, "holds logs or tables but no CURRENT file");
    }
    has_identity = has_identity || type == FileType::kIdentity;
  }
  if (!options_.create_if_missing) {
    return Status::InvalidArgument(dbname_, "is not a shale DB (create_if_missing is false)");
  }
  if (!has_identity) {
    s = WriteStringToFile(fs_.get(), NewIdentity(), IdentityFileName(dbname_), /*sync=*/true);
    if (s.ok()) s = db_dir_->Fsync();
  }
  *is_new = s.ok();
  return s;
}

Status DBImpl::CreateLog(bool keep_previous) {
  const SequenceNumber previous_last = keep_previous ? log_last_sequence_ : 0;
  if (keep_previous && log_ != nullptr) {
    // The previous log is not synced here: its bytes go to the OS now (a process crash keeps
    // them) and reach the device only if a later WAL sync needs them (SyncClosedLogs).
    Status s = log_->file()->Flush();
    if (!s.ok()) return s;
  }
  const uint64_t number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  FileOptions file_options;
  // A synced log keeps zeros written ahead of its records, so a group's fdatasync is data-only
  // (no size change to commit). After a crash the log then ends in zeros, which absolute
  // consistency would refuse as a zeroed tail: that mode's logs only append.
  // For the same reason only those logs copy their records into a shared mapping of the file
  // (no system call per write group).
  if (options_.wal_recovery_mode != WALRecoveryMode::kAbsoluteConsistency) {
    file_options.zero_fill_ahead = kWalZeroFillBytes;
    file_options.mmap_appends = true;
  }
  Status s = fs_->NewWritableFile(LogFileName(dbname_, number), file_options, &file);
  if (s.ok()) s = db_dir_->Fsync();
  if (!s.ok()) return s;
  auto writer = std::make_unique<log::Writer>(std::move(file));
  if (previous_last > 0) {
    // The header: an empty batch whose sequence is the previous log's last (wal/README.md).
    WriteBatch header;
    WriteBatchInternal::SetSequence(&header, previous_last);
    s = writer->AddRecord(WriteBatchInternal::Contents(&header));
    if (!s.ok()) return s;  // the caller stops writes; Resume retires both logs
  }
  if (log_ != nullptr) {
    // It stays on disk until every family has flushed past it (DeleteObsoleteFiles).
    closed_logs_.push_back(ClosedLog{log_number_, log_->FileSize()});
    closed_log_bytes_ += closed_logs_.back().bytes;
    if (keep_previous) {
      unsynced_logs_.push_back(UnsyncedLog{log_number_, std::move(log_)});
      UpdateHasUnsyncedLogs();
    } else {
      log_->Close().PermitUncheckedError();  // its errors are already known
    }
  }
  log_ = std::move(writer);
  log_number_ = number;
  // A log that gets no WAL write (only disableWAL writes reach its memtable) passes the
  // previous log's last sequence on to the next header, so the chain has no gap.
  log_last_sequence_ = previous_last;
  return Status::OK();
}

Status DBImpl::SyncClosedLogs() {
  // After a flush that is syncing closed logs (SyncClosedLogsBefore), which may have taken
  // the ones this write must follow.
  MutexLock sync_lock(&closed_log_sync_mu_);
  std::vector<UnsyncedLog> logs;
  {
    MutexLock l(&mutex_);
    // A sync of closed logs failed before (the history may end in them): nothing synced after
    // it may be acknowledged.
    if (!bg_error_.ok()) {
      return Status::IOError("DB is read-only after an earlier error", bg_error_.ToString());
    }
    logs.swap(unsynced_logs_);
    UpdateHasUnsyncedLogs();
  }
  // Oldest first. A log whose memtable was flushed meanwhile may be deleted already: syncing
  // its open file is harmless.
  Status s;
  for (UnsyncedLog& log : logs) {
    s = log.writer->Sync();
    if (!s.ok()) break;
  }
  if (!s.ok()) {
    // Before a flush waiting on closed_log_sync_mu_ goes on as if these logs were durable.
    MutexLock l(&mutex_);
    SetBackgroundErrorLocked(s);
  }
  return s;
}

Status DBImpl::SyncClosedLogsBefore(uint64_t number) {
  if (families_.size() <= 1) return Status::OK();
  mutex_.Unlock();
  Status s;
  {
    // Also waits for a synced write's SyncClosedLogs in progress, which may hold logs this
    // flush needs durable.
    MutexLock sync_lock(&closed_log_sync_mu_);
    std::vector<UnsyncedLog> logs;
    {
      MutexLock l(&mutex_);
      if (!bg_error_.ok()) {
        s = Status::IOError("DB is read-only after an earlier error", bg_error_.ToString());
      } else {
        auto end = std::find_if(unsynced_logs_.begin(), unsynced_logs_.end(),
                                [number](const UnsyncedLog& log) { return log.number >= number; });
        std::move(unsynced_logs_.begin(), end, std::back_inserter(logs));
        unsynced_logs_.erase(unsynced_logs_.begin(), end);
        // has_unsynced_logs_ stays set until they are synced, so that a synced write comes
        // to wait on closed_log_sync_mu_ meanwhile.
        flush_syncing_logs_ = !logs.empty();
        UpdateHasUnsyncedLogs();
      }
    }
    for (UnsyncedLog& log : logs) {
      if (s.ok()) s = log.writer->Sync();
      log.writer->Close().PermitUncheckedError();  // synced, or the DB turns read-only below
    }
    MutexLock l(&mutex_);
    flush_syncing_logs_ = false;
    // Set before a synced write waiting on closed_log_sync_mu_ goes on.
    if (!s.ok()) SetBackgroundErrorLocked(s);
    UpdateHasUnsyncedLogs();
  }
  mutex_.Lock();
  return s;
}

// What RecoverLogs learns on the way, step by step. Thread safety: local to the recovering
// thread, which holds mutex_.
struct DBImpl::LogRecovery {
  std::vector<uint64_t> logs;  // numbered at or above the MANIFEST's log number, ascending
  // What pass 1 read from each replayed log (logs[0, replayed.size()), the last maybe partly),
  // so that pass 2 can tell whether it read the same.
  struct Replayed {
    uint64_t records;
    SequenceNumber last_seq;  // after this log
    log::Reader::End end;
  };
  std::vector<Replayed> replayed;
  SequenceNumber last_seq = 0;  // the highest sequence pass 1 applied
  bool dropped = false;         // pass 1 left records or logs out
};

Status DBImpl::RecoverLogs(RecoveryEdits* edits) {
  LogRecovery r;
  Status s = FindLogsToReplayLocked(&r);
  if (!s.ok()) return s;
  // Pass 1: apply to the memtables (flushing them when full) and decide how far replay goes.
  s = ReplayLogsLocked(&r, edits);
  if (!s.ok()) return s;
  const SequenceNumber last_seq = std::max(r.last_seq, versions_->last_sequence());
  last_allocated_sequence_ = last_seq;
  last_sequence_.store(last_seq, std::memory_order_release);
  versions_->SetLastSequence(last_seq);

  s = CreateLog(/*keep_previous=*/false);
  if (!s.ok()) {
    DiscardUnloggedTables(*edits);
    return s;
  }
  for (const auto& [id, cfd] : families_) cfd->mem_log_number = log_number_;
  // One of three endings: the recovered data goes to L0 and the replayed logs go (the
  // default); or the data stays in the memtables (avoid_flush_during_recovery) and so do the
  // replayed logs, synced; unless pass 1 left records out: then the survivors are copied into
  // the new log (pass 2) and the old logs go.
  if (!options_.avoid_flush_during_recovery) return FlushRecoveredLocked(edits);
  if (!r.dropped) return KeepReplayedLogsLocked(r);
  return CopySurvivingRecordsLocked(r, edits);
}

Status DBImpl::FindLogsToReplayLocked(LogRecovery* r) {
  std::vector<std::string> children;
  Status s = fs_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  std::set<uint64_t> tables_on_disk;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type) || type == FileType::kInfoLog) continue;
    versions_->MarkFileNumberUsed(number);  // (an info log's number is a time, not a file's)
    if (type == FileType::kLog && number >= versions_->log_number()) r->logs.push_back(number);
    if (type == FileType::kTable) tables_on_disk.insert(number);
  }
  std::sort(r->logs.begin(), r->logs.end());
  for (const FamilyInfo& family : versions_->Families()) {
    auto v = versions_->current(family.id);
    for (int level = 0; level < v->num_levels(); level++) {
      for (const auto& f : v->files(level)) {
        if (tables_on_disk.count(f->number) == 0) {
          return Status::Corruption(dbname_, fmt::format("table file {:06}.sst listed in the "
                                                         "MANIFEST is missing",
                                                         f->number));
        }
      }
    }
  }
  return Status::OK();
}

bool DBImpl::ReplaysInto(uint32_t id, uint64_t log_number) const {
  // A family the MANIFEST no longer holds was dropped (ids are never reused), and a family's
  // records in logs below its log number are in its tables already.
  return versions_->HasFamily(id) && log_number >= versions_->log_number(id);
}

Status DBImpl::ReplayLogsLocked(LogRecovery* r, RecoveryEdits* edits) {
  const bool flush = !options_.avoid_flush_during_recovery;
  const WALRecoveryMode mode = options_.wal_recovery_mode;
  const FamilyMap& families = families_;
  Status flush_status;
  // Merge operands replayed without a merge operator would be flushed into tables stamped
  // with none, which no later open with the real operator could read: refuse the open instead,
  // before they reach the memtable (tables pass 1 wrote before are deleted), so that opening
  // with the operator still works.
  Status refused;
  LogLink link;
  // Ids up to the largest ever handed out name a family, live or dropped.
  const uint32_t max_family = versions_->max_column_family();
  const std::function<bool(uint32_t)> known = [max_family](uint32_t id) {
    return id <= max_family;
  };
  for (uint64_t number : r->logs) {
    Status problem;
    uint64_t records = 0;
    const std::string name = LogFileName(dbname_, number);
    const std::function<MemTable*(uint32_t)> mem_of = [&](uint32_t id) -> MemTable* {
      mutex_.AssertHeld();  // RecoverLogs holds it throughout
      return ReplaysInto(id, number) ? families.at(id)->mem : nullptr;
    };
    auto end = ReplayLog(fs_.get(), name, known, &link, &r->last_seq, &records, &problem,
                         [&](const WriteBatch& batch, SequenceNumber first) {
                           mutex_.AssertHeld();  // RecoverLogs holds it throughout
                           if (!refused.ok()) return;
                           refused = CheckReplayedMerges(batch, number, name);
                           if (!refused.ok()) return;
                           Status ins = WriteBatchInternal::InsertInto(&batch, first, mem_of);
                           SHALE_ASSERT(ins.ok());  // validated by ReplayLog
                           ins.PermitUncheckedError();
                           if (!flush || !flush_status.ok()) return;
                           for (const auto& [id, cfd] : families) {
                             if (flush_status.ok() && cfd->MemTableFull(*cfd->mem)) {
                               VersionEdit& edit = (*edits)[id];
                               edit.SetColumnFamily(id);
                               flush_status = WriteLevel0Table(cfd.get(), cfd->mem, &edit);
                               cfd->mem->Unref();
                               cfd->mem = cfd->NewMemTable();
                             }
                           }
                         });
    // Failing here, pass 1's tables are named by no MANIFEST record: delete them.
    auto fail = [&](const Status& why) {
      mutex_.AssertHeld();  // RecoverLogs holds it throughout
      DiscardUnloggedTables(*edits);
      return why;
    };
    if (!refused.ok()) return fail(refused);
    if (!flush_status.ok()) return fail(flush_status);
    // The previous log lost records its successors' header names: the history ends there (in
    // every mode, as for unsynced records dropped at a log's clean end).
    if (link.previous_incomplete) break;
    r->replayed.push_back({records, r->last_seq, end});
    link.has_previous = true;
    link.previous_last = link.log_last;
    using End = log::Reader::End;
    if (end == End::kClean) continue;
    if (end == End::kIOError || mode == WALRecoveryMode::kAbsoluteConsistency) {
      return fail(problem);
    }
    if (end == End::kCorruption) {
      if (mode == WALRecoveryMode::kTolerateCorruptedTailRecords) return fail(problem);
      r->dropped = true;  // point in time: the history ends here
      break;
    }
    r->dropped = true;  // a torn or zeroed tail, dropped
  }
  if (r->replayed.size() < r->logs.size()) r->dropped = true;
  return Status::OK();
}

Status DBImpl::CheckReplayedMerges(const WriteBatch& batch, uint64_t log_number,
                                   const std::string& log_name) const {
  if (!WriteBatchInternal::HasMerge(&batch)) return Status::OK();
  class Finder : public RecordHandler {
   public:
    explicit Finder(const std::function<bool(uint32_t)>& lacks) : lacks_(lacks) {}
    Status Record(uint32_t id, ValueType type, const Slice&, const Slice*) override {
      return type == kTypeMerge && lacks_(id) ? Status::Aborted("") : Status::OK();
    }

   private:
    const std::function<bool(uint32_t)>& lacks_;
  };
  const std::function<bool(uint32_t)> lacks = [&](uint32_t id) {
    mutex_.AssertHeld();  // RecoverLogs holds it throughout
    return ReplaysInto(id, log_number) && !families_.at(id)->options.merge_operator;
  };
  Finder finder(lacks);
  if (batch.Iterate(&finder).IsAborted()) {
    return Status::InvalidArgument(log_name, "holds merge operands: open with the merge_operator");
  }
  return Status::OK();
}

Status DBImpl::ApplyRecoveryEditsLocked(RecoveryEdits* edits) {
  // Everything replayed is in tables or the new log now: no family needs the old logs.
  std::vector<VersionEdit*> pointers;
  for (const auto& [id, cfd] : families_) {
    VersionEdit& edit = (*edits)[id];
    edit.SetColumnFamily(id);
    edit.SetLogNumber(log_number_);
    pointers.push_back(&edit);
  }
  Status s = versions_->LogAndApply(pointers);
  for (const auto& [id, edit] : *edits) {
    for (const auto& [level, f] : edit.new_files()) pending_outputs_.erase(f.number);
  }
  return s;
}

Status DBImpl::FlushRecoveredLocked(RecoveryEdits* edits) {
  for (const auto& [id, cfd] : families_) {
    if (cfd->mem->num_entries() == 0) continue;
    VersionEdit& edit = (*edits)[id];
    edit.SetColumnFamily(id);
    Status s = WriteLevel0Table(cfd.get(), cfd->mem, &edit);
    if (!s.ok()) {
      DiscardUnloggedTables(*edits);
      return s;
    }
    cfd->RetainMemtableBlocksIfFull();  // short of full: the family may stay idle
    cfd->mem->Unref();
    cfd->mem = cfd->NewMemTable();
  }
  return ApplyRecoveryEditsLocked(edits);
}

Status DBImpl::KeepReplayedLogsLocked(const LogRecovery& r) {
  // The recovered data stays in the memtables; its logs stay until they are flushed. They may
  // end in writes that were never synced: make them durable before any new write, or a crash
  // could keep a later synced write (in the new log) and lose these, a hole in the history.
  for (uint64_t number : r.logs) {
    std::unique_ptr<WritableFile> file;
    Status s = fs_->ReopenWritableFile(LogFileName(dbname_, number), FileOptions(), &file);
    if (s.ok()) s = file->Sync();
    if (s.ok()) s = file->Close();
    uint64_t bytes = 0;
    if (s.ok()) s = fs_->GetFileSize(LogFileName(dbname_, number), &bytes);
    if (!s.ok()) return s;
    closed_logs_.push_back(ClosedLog{number, bytes});
    closed_log_bytes_ += bytes;
  }
  if (!r.logs.empty()) {
    // Each family's data is in the logs from its own log number on.
    for (const auto& [id, cfd] : families_) {
      cfd->mem_log_number = std::max(r.logs.front(), versions_->log_number(id));
    }
  }
  return Status::OK();
}

Status DBImpl::CopySurvivingRecordsLocked(const LogRecovery& r, RecoveryEdits* edits) {
  // Pass 2: copy the surviving records into the new log, make it durable, then drop the old
  // logs. The files have not changed, so the same records must survive: a log that cannot be
  // read again, or reads differently (a device returning unstable data), fails the open
  // before the MANIFEST stops naming the old logs. Only records pass 1 applied are copied (not
  // those of dropped families, nor those a family has in its tables already), each run of them
  // as a record of its own with its own sequence numbers.
  Status s;
  SequenceNumber copied_seq = 0;
  LogLink link;
  const uint32_t max_family = versions_->max_column_family();
  const std::function<bool(uint32_t)> known = [max_family](uint32_t id) {
    return id <= max_family;
  };
  for (size_t i = 0; i < r.replayed.size() && s.ok(); i++) {
    Status problem;
    uint64_t records = 0;
    const uint64_t number = r.logs[i];
    const std::string name = LogFileName(dbname_, number);
    const std::function<bool(uint32_t)> keep = [&](uint32_t id) {
      mutex_.AssertHeld();  // RecoverLogs holds it throughout
      return ReplaysInto(id, number);
    };
    const auto end =
        ReplayLog(fs_.get(), name, known, &link, &copied_seq, &records, &problem,
                  [&](const WriteBatch& batch, SequenceNumber first) {
                    if (!s.ok()) return;
                    for (WriteBatch& run : WriteBatchInternal::KeptRuns(&batch, first, keep)) {
                      s = log_->AddRecord(WriteBatchInternal::Contents(&run));
                      if (!s.ok()) return;
                    }
                  });
    if (!s.ok()) break;
    if (end == log::Reader::End::kIOError) {
      s = problem;
    } else if (end != r.replayed[i].end || records != r.replayed[i].records ||
               copied_seq != r.replayed[i].last_seq || link.previous_incomplete) {
      s = Status::Corruption("WAL read back differently during recovery", name);
    }
    link.has_previous = true;
    link.previous_last = link.log_last;
  }
  if (s.ok()) s = log_->Sync();
  if (s.ok()) s = ApplyRecoveryEditsLocked(edits);
  return s;
}

void DBImpl::DiscardUnloggedTables(const RecoveryEdits& edits) {
  for (const auto& [id, edit] : edits) {
    for (const auto& [level, f] : edit.new_files()) {
      pending_outputs_.erase(f.number);
      // Best effort: a table left behind is deleted as obsolete by the next successful open.
      fs_->DeleteFile(TableFileName(dbname_, f.number)).PermitUncheckedError();
    }
  }
}

Status DestroyDB(const std::string& path, const Options& options) {
  std::shared_ptr<FileSystem> fs =
      options.file_system ? options.file_system : FileSystem::Default();
  std::vector<std::string> children;
  Status s = fs->GetChildren(path, &children);
  if (!s.ok()) return s.IsNotFound() ? Status::OK() : s;  // nothing to destroy
  std::unique_ptr<FileLock> lock;
  s = fs->LockFile(LockFileName(path), &lock);
  if (!s.ok()) return s;  // open elsewhere
  Status result;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type != FileType::kLock) {
      Status del = fs->DeleteFile(path + "/" + name);
      if (result.ok() && !del.ok()) result = del;
    }
  }
  if (!options.db_log_dir.empty()) {
    // The DB's info logs kept elsewhere (others' logs in that directory stay).
    const std::string log_name = InfoLogName(path, options.db_log_dir);
    std::vector<std::string> logs;
    if (fs->GetChildren(options.db_log_dir, &logs).ok()) {
      for (const std::string& name : logs) {
        uint64_t micros;
        if (ParseInfoLogName(name, log_name, &micros)) {
          fs->DeleteFile(options.db_log_dir + "/" + name).PermitUncheckedError();
        }
      }
    }
  }
  lock.reset();
  fs->DeleteFile(LockFileName(path)).PermitUncheckedError();
  fs->DeleteDir(path).PermitUncheckedError();  // fails harmlessly if foreign files remain
  return result;
}

}  // namespace shale
