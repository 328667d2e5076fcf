// DB::Open, recovery and DestroyDB.
//
// Recovery replays every NNNNNN.log in number order into a fresh memtable. Each log is read to
// its end or first problem, and the WAL recovery mode decides:
//   - a torn or zeroed tail is dropped (tolerate-corrupted-tail, point-in-time) or fails Open
//     (absolute-consistency);
//   - a damaged record fails Open (tolerate, absolute) or ends replay there (point-in-time);
//   - a read error always fails Open.
// When anything was dropped, the surviving records are copied into the new log, which is
// synced before the old logs are deleted, so a later crash can never replay records that were
// dropped, nor records that followed a dropped one. Records already applied (from a copy cut
// short by a crash) are recognized by their sequence numbers and skipped.
#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "memtable/memtable.h"
#include "src/db/db_impl.h"
#include "src/db/filename.h"
#include "src/db/write_batch_internal.h"
#include "wal/log_reader.h"

namespace shale {
namespace {

Status ValidateOptions(const Options& o) {
  auto bad = [](const char* field, const std::string& why) {
    return Status::InvalidArgument(fmt::format("Options::{} {}", field, why));
  };
  if (o.comparator == nullptr) return bad("comparator", "must not be null");
  if (o.write_buffer_size == 0) return bad("write_buffer_size", "must be > 0");
  if (o.max_write_buffer_number < 2) return bad("max_write_buffer_number", "must be >= 2");
  if (o.max_write_batch_group_size_bytes == 0) {
    return bad("max_write_batch_group_size_bytes", "must be > 0");
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
  if (!(o.max_bytes_for_level_multiplier >= 1)) {
    return bad("max_bytes_for_level_multiplier", "must be >= 1");
  }
  if (o.max_background_jobs < 1) return bad("max_background_jobs", "must be >= 1");
  if (o.max_open_files != -1 && o.max_open_files < 1) {
    return bad("max_open_files", "must be -1 (unbounded) or >= 1");
  }
  if (o.compression != CompressionType::kNoCompression &&
      o.compression != CompressionType::kZSTD) {
    return bad("compression", "is not a known compression type");
  }
  if (o.block_size == 0 || o.block_size > (size_t{1} << 30)) {
    return bad("block_size", "must be in [1, 1 GiB]");
  }
  if (o.block_restart_interval < 1) return bad("block_restart_interval", "must be >= 1");
  if (!(o.bloom_bits_per_key >= 0 && o.bloom_bits_per_key <= 100)) {
    return bad("bloom_bits_per_key", "must be in [0, 100]");
  }
  return Status::OK();
}

std::string NewIdentity() {
  std::random_device rd;
  std::mt19937_64 gen((uint64_t{rd()} << 32) ^ rd());
  return fmt::format("{:016x}{:016x}\n", gen(), gen());
}

// Replays one log: calls apply(batch, first_seq) for each record not yet applied.
// *last_seq carries the highest applied sequence across logs.
template <typename Apply>
log::Reader::End ReplayLog(FileSystem* fs, const std::string& name, SequenceNumber* last_seq,
                           uint64_t* records, Status* problem, Apply&& apply) {
  *records = 0;
  std::unique_ptr<SequentialFile> file;
  Status s = fs->NewSequentialFile(name, FileOptions(), &file);
  if (!s.ok()) {
    *problem = s;
    return log::Reader::End::kIOError;
  }
  log::Reader reader(std::move(file), name);
  std::string scratch;
  Slice record;
  SequenceNumber log_last = 0;  // sequences only grow within one log
  while (reader.ReadRecord(&record, &scratch)) {
    ++*records;
    auto corrupt = [&](const std::string& what) {
      *problem = Status::Corruption(
          fmt::format("{}: offset {}: {}", name, reader.last_record_offset(), what));
      return log::Reader::End::kCorruption;
    };
    WriteBatch batch;
    s = WriteBatchInternal::SetContents(&batch, record);
    if (s.ok()) s = WriteBatchInternal::Validate(&batch);
    if (!s.ok()) return corrupt(s.ToString());
    const uint32_t count = batch.Count();
    if (count == 0) continue;
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

Status DB::Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db) {
  db->reset();
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  auto impl = std::make_unique<DBImpl>(options, path);
  s = impl->OpenImpl();
  if (s.ok()) *db = std::move(impl);
  return s;
}

Status DBImpl::OpenImpl() {
  mem_ = new MemTable(icmp_);  // owned through its reference count
  mem_->Ref();
  Status s = LockAndCheckExistence();
  if (s.ok()) s = RecoverLogs();
  if (!s.ok()) closed_.store(true);  // the destructor still releases what was taken
  return s;
}

Status DBImpl::LockAndCheckExistence() {
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

  s = fs_->FileExists(IdentityFileName(dbname_));
  if (s.ok()) {
    if (options_.error_if_exists) {
      return Status::InvalidArgument(dbname_, "exists (error_if_exists is true)");
    }
    return Status::OK();
  }
  if (!s.IsNotFound()) return s;
  if (!options_.create_if_missing) {
    return Status::InvalidArgument(dbname_, "is not a shale DB (create_if_missing is false)");
  }
  s = WriteStringToFile(fs_.get(), NewIdentity(), IdentityFileName(dbname_), /*sync=*/true);
  if (s.ok()) s = db_dir_->Fsync();
  return s;
}

Status DBImpl::CreateLog(uint64_t number) {
  std::unique_ptr<WritableFile> file;
  Status s = fs_->NewWritableFile(LogFileName(dbname_, number), FileOptions(), &file);
  if (s.ok()) s = db_dir_->Fsync();
  if (!s.ok()) return s;
  if (log_ != nullptr) log_->Close().PermitUncheckedError();  // its errors are already known
  log_ = std::make_unique<log::Writer>(std::move(file));
  log_number_ = number;
  return Status::OK();
}

Status DBImpl::RecoverLogs() {
  std::vector<std::string> children;
  Status s = fs_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  std::vector<uint64_t> logs;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kLog) logs.push_back(number);
  }
  std::sort(logs.begin(), logs.end());
  const uint64_t new_log = logs.empty() ? 1 : logs.back() + 1;

  // Pass 1: apply to the memtable and decide how far replay goes.
  SequenceNumber last_seq = 0;
  size_t replayed_logs = 0;  // logs [0, replayed_logs) are replayed (the last maybe partly)
  bool dropped = false;
  std::vector<uint64_t> empty_logs;  // clean and without records: nothing to keep
  const WALRecoveryMode mode = options_.wal_recovery_mode;
  for (uint64_t number : logs) {
    Status problem;
    uint64_t records = 0;
    const std::string name = LogFileName(dbname_, number);
    auto end = ReplayLog(fs_.get(), name, &last_seq, &records, &problem,
                         [this](const WriteBatch& batch, SequenceNumber first) {
                           Status ins = WriteBatchInternal::InsertInto(&batch, first, mem_);
                           assert(ins.ok());  // validated by ReplayLog
                           ins.PermitUncheckedError();
                         });
    replayed_logs++;
    using End = log::Reader::End;
    if (end == End::kClean) {
      if (records == 0) empty_logs.push_back(number);
      continue;
    }
    if (end == End::kIOError || mode == WALRecoveryMode::kAbsoluteConsistency) return problem;
    if (end == End::kCorruption) {
      if (mode == WALRecoveryMode::kTolerateCorruptedTailRecords) return problem;
      dropped = true;  // point in time: the history ends here
      break;
    }
    dropped = true;  // a torn or zeroed tail, dropped
  }
  if (replayed_logs < logs.size()) dropped = true;
  last_allocated_sequence_ = last_seq;
  last_sequence_.store(last_seq, std::memory_order_release);

  s = CreateLog(new_log);
  if (!s.ok()) return s;
  if (!dropped) {
    for (uint64_t number : empty_logs) {
      s = fs_->DeleteFile(LogFileName(dbname_, number));
      if (!s.ok()) return s;
    }
    return empty_logs.empty() ? s : db_dir_->Fsync();
  }

  // Pass 2: copy the surviving records into the new log, make it durable, then drop the old
  // logs. The files have not changed, so the same records survive.
  SequenceNumber copied_seq = 0;
  for (size_t i = 0; i < replayed_logs && s.ok(); i++) {
    Status problem;
    uint64_t records = 0;
    ReplayLog(fs_.get(), LogFileName(dbname_, logs[i]), &copied_seq, &records, &problem,
              [this, &s](const WriteBatch& batch, SequenceNumber first) {
                if (!s.ok()) return;
                WriteBatch copy = batch;
                WriteBatchInternal::SetSequence(&copy, first);
                s = log_->AddRecord(WriteBatchInternal::Contents(&copy));
              });
  }
  if (s.ok() && copied_seq != last_seq) {
    // The same bytes read twice gave different records: the device returns unstable data.
    s = Status::Corruption("WAL read back differently during recovery", dbname_);
  }
  if (s.ok()) s = log_->Sync();
  if (s.ok()) s = db_dir_->Fsync();
  for (size_t i = 0; i < logs.size() && s.ok(); i++) {
    s = fs_->DeleteFile(LogFileName(dbname_, logs[i]));
  }
  if (s.ok()) s = db_dir_->Fsync();
  return s;
}

Status DestroyDB(const std::string& path, const Options& options) {
  std::shared_ptr<FileSystem> fs = options.file_system ? options.file_system : FileSystem::Default();
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
  lock.reset();
  fs->DeleteFile(LockFileName(path)).PermitUncheckedError();
  fs->DeleteDir(path).PermitUncheckedError();  // fails harmlessly if foreign files remain
  return result;
}

}  // namespace shale
