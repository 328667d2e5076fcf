// DBImpl: the DB behind the public interface: write path (group commit into WAL + memtable,
// memtable switches and write stalls), read path (a SuperVersion of memtables and table files
// at a snapshot sequence), background flush and compaction, snapshots, properties, shutdown.
// Open and recovery live in db_open.cc; flush and compaction jobs in db_background.cc.
//
// Thread safety: the public methods are thread-safe (see shale/db.h). Writes are serialized by
// the WriteThread: only the current group leader touches log_ and mem_ and allocates sequence
// numbers. Readers never take mutex_: they load the published SuperVersion and last_sequence_.
// mutex_ guards the immutable memtables, the VersionSet, snapshots, background state and the
// background error; background threads release it while they do file IO.
#pragma once

#include <atomic>
#include <deque>
#include <list>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "shale/db.h"
#include "shale/file_system.h"
#include "shale/merge_operator.h"
#include "shale/statistics.h"
#include "src/base/dbformat.h"
#include "src/db/super_version.h"
#include "src/db/table_cache.h"
#include "src/db/version_set.h"
#include "src/db/write_thread.h"
#include "src/util/invariants.h"
#include "src/util/mutex.h"
#include "table/table_builder.h"
#include "wal/log_writer.h"

namespace shale {

class MemTable;
class Compaction;

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string dbname);
  ~DBImpl() override;

  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status Merge(const WriteOptions& options, const Slice& key, const Slice& operand) override;
  Status Write(const WriteOptions& options, WriteBatch* batch) override;

  using DB::Get;
  Status Get(const ReadOptions& options, const Slice& key, PinnableSlice* value) override;
  using DB::MultiGet;
  void MultiGet(const ReadOptions& options, size_t n, const Slice* keys, PinnableSlice* values,
                Status* statuses, bool sorted_input) override;
  Status GetMergeOperands(const ReadOptions& options, const Slice& key, PinnableSlice* operands,
                          GetMergeOperandsOptions* opts, int* number_of_operands) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;

  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;

  Status Flush(const FlushOptions& options) override;
  Status CompactRange(const CompactRangeOptions& options, const Slice* begin,
                      const Slice* end) override;
  Status WaitForCompact() override;
  Status SyncWAL() override;
  Status Resume() override;
  Status Close() override;
  bool GetProperty(const Slice& property, std::string* value) override;

  // Open-time work (db_open.cc). REQUIRES: called once, before the DB is shared.
  Status OpenImpl();

 private:
  class SnapshotImpl;

  // Recovery helpers (db_open.cc).
  Status LockAndCheckExistence(bool* is_new);
  Status RecoverLogs(VersionEdit* edit) REQUIRES(mutex_);
  // Deletes the tables a failed recovery wrote for edit before any MANIFEST record named
  // them, so that refused or failing opens do not pile up orphans.
  void DiscardUnloggedTables(const VersionEdit& edit) REQUIRES(mutex_);
  // Starts a new WAL with a fresh file number; later writes go to it. With sync_previous, the
  // current log is synced first.
  Status CreateLog(bool sync_previous) REQUIRES(mutex_);

  // ---- Memtables, flush, compaction (db_background.cc) ----
  // Leader only: switches a full memtable, or waits while L0 or the immutable memtables are
  // backed up (write stalls). Returns the background error, if any.
  Status MakeRoomForWrite() EXCLUDES(mutex_);
  // Turns mem_ into an immutable memtable and starts a new WAL and memtable.
  Status SwitchMemtable() REQUIRES(mutex_);
  // A new memtable holding one reference for the caller.
  MemTable* NewMemTable() const;
  // Publishes a SuperVersion of the current memtables and Version.
  void InstallSuperVersion() REQUIRES(mutex_);
  std::shared_ptr<SuperVersion> GetSuperVersion() const EXCLUDES(sv_mutex_) {
    MutexLock l(&sv_mutex_);
    return super_version_;
  }
  // IOError if a thread cannot be started (those started keep running until CloseImpl).
  [[nodiscard]] Status StartBackgroundThreads();
  void BackgroundThread() EXCLUDES(mutex_);
  // Writes the oldest immutable memtable as an L0 table and records it.
  void BackgroundFlush() REQUIRES(mutex_);
  // Writes mem as an L0 table (mutex released meanwhile); adds the file to edit.
  Status WriteLevel0Table(MemTable* mem, VersionEdit* edit) REQUIRES(mutex_);
  bool NeedsCompaction() const REQUIRES(mutex_);
  void BackgroundCompaction() REQUIRES(mutex_);
  Status RunCompaction(Compaction* c) REQUIRES(mutex_);
  // Deletes files no live Version, pending output or live WAL needs.
  void DeleteObsoleteFiles() REQUIRES(mutex_);
  // Sequence numbers of live snapshots, ascending.
  std::vector<SequenceNumber> SnapshotSequences() const REQUIRES(mutex_);
  TableBuilderOptions BuilderOptions() const;

  Status WriteImpl(const WriteOptions& options, WriteBatch* batch);
  // Encodes the group's batches as one WAL record payload starting at first_seq.
  void BuildGroupRecord(const WriteThread::Group& group, SequenceNumber first_seq,
                        std::string* record) const;
  // Sequence to read at: the snapshot's, or the latest published. InvalidArgument for a
  // snapshot of another DB.
  Status ReadSequence(const ReadOptions& options, SequenceNumber* seq) const;
  Status CheckOpen() const;
  // Reads key at seq from sv, which the caller loaded before it read seq (see Get).
  Status GetImpl(const ReadOptions& options, const SuperVersion& sv, SequenceNumber seq,
                 const Slice& key, PinnableSlice* value);
  // Enters the read-only state after a failed WAL write or sync, flush or compaction.
  void SetBackgroundError(const Status& s) EXCLUDES(mutex_);
  void SetBackgroundErrorLocked(const Status& s) REQUIRES(mutex_);
  // Runs fn as an exclusive writer (no write group is in flight meanwhile).
  template <typename Fn>
  Status WithWritesStopped(Fn&& fn);
  Status CloseImpl();

  const std::string dbname_;
  const Options options_;
  const std::shared_ptr<FileSystem> fs_;
  Statistics* const stats_;
  const InternalKeyComparator icmp_;

  std::string async_path_;  // set by Open: "io_uring", or "sync (why)"
  std::unique_ptr<FileLock> db_lock_;
  std::unique_ptr<Directory> db_dir_;
  std::shared_ptr<Cache> block_cache_;
  std::unique_ptr<TableCache> table_cache_;
  WriteThread write_thread_;

  // Owned by the write leader (or the opening / closing thread); switched under mutex_ too.
  std::unique_ptr<log::Writer> log_;
  uint64_t log_number_ = 0;
  // Sequence numbers handed out so far (leader only); >= last_sequence_.
  SequenceNumber last_allocated_sequence_ = 0;
  // Every write with a sequence <= this is applied and visible to readers.
  std::atomic<SequenceNumber> last_sequence_{0};

  // The mutable memtable (the DB holds one reference). Changed by the write leader under
  // mutex_; read without the lock only by the leader.
  MemTable* mem_ = nullptr;
  // The WAL that was current when mem_ became the mutable memtable: mem_'s data is in logs
  // numbered >= this.
  uint64_t mem_log_number_ = 0;
  struct Immutable {
    MemTable* mem;        // one reference held here
    uint64_t log_number;  // first WAL holding its data
  };
  std::deque<Immutable> imm_ GUARDED_BY(mutex_);  // newest at the front
  // The published SuperVersion. Its own small lock (held for a pointer copy) keeps readers
  // off mutex_.
  mutable Mutex sv_mutex_;
  std::shared_ptr<SuperVersion> super_version_ GUARDED_BY(sv_mutex_);

  std::atomic<bool> closed_{false};
  std::atomic<bool> read_only_{false};

  mutable Mutex mutex_;
  std::unique_ptr<VersionSet> versions_ GUARDED_BY(mutex_);
  Status bg_error_ GUARDED_BY(mutex_);
  std::list<std::unique_ptr<SnapshotImpl>> snapshots_ GUARDED_BY(mutex_);
  // The snapshots handed out and not released, for reads to check the one they are given
  // without dereferencing it (a released or foreign pointer is refused). Its own small lock
  // keeps snapshot reads off mutex_; never held together with mutex_.
  mutable Mutex snapshot_mu_;
  std::unordered_set<const Snapshot*> live_snapshots_ GUARDED_BY(snapshot_mu_);
  // Iterators not yet destroyed: Close refuses while any is alive.
  std::atomic<int64_t> live_iterators_{0};

  // Background work.
  std::vector<std::thread> bg_threads_;
  CondVar bg_work_cv_{&mutex_};  // work may be available, or shutting down
  CondVar bg_done_cv_{&mutex_};  // a background job finished
  bool shutting_down_ GUARDED_BY(mutex_) = false;
  std::atomic<bool> shutdown_requested_{false};  // read by running jobs without the mutex
  std::vector<std::string> compact_pointers_ GUARDED_BY(mutex_);  // per level
  bool flush_running_ GUARDED_BY(mutex_) = false;
  bool compaction_running_ GUARDED_BY(mutex_) = false;
  bool manual_compaction_ GUARDED_BY(mutex_) = false;      // CompactRange owns compaction
  std::set<uint64_t> pending_outputs_ GUARDED_BY(mutex_);  // table files being written
  uint64_t stall_count_l0_slowdown_ GUARDED_BY(mutex_) = 0;
  uint64_t stall_count_l0_stop_ GUARDED_BY(mutex_) = 0;
  uint64_t stall_count_memtable_ GUARDED_BY(mutex_) = 0;
  const char* stall_reason_ GUARDED_BY(mutex_) = "none";
  uint64_t flush_bytes_ GUARDED_BY(mutex_) = 0;
  uint64_t compaction_read_bytes_ GUARDED_BY(mutex_) = 0;
  uint64_t compaction_write_bytes_ GUARDED_BY(mutex_) = 0;
  uint64_t num_compactions_ GUARDED_BY(mutex_) = 0;
  uint64_t num_flushes_ GUARDED_BY(mutex_) = 0;
};

// A snapshot: a sequence number. Owned by DBImpl::snapshots_; DBImpl::live_snapshots_ tells
// which pointers are its own.
class DBImpl::SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber seq) : seq_(seq) {}
  SequenceNumber GetSequenceNumber() const override { return seq_; }

  std::list<std::unique_ptr<SnapshotImpl>>::iterator position;

 private:
  const SequenceNumber seq_;
};

template <typename Fn>
Status DBImpl::WithWritesStopped(Fn&& fn) {
  WriteThread::Writer w(WriteOptions(), nullptr, /*exclusive=*/true);
  bool leader = write_thread_.JoinBatchGroup(&w);
  SHALE_ASSERT(leader);  // an exclusive writer is never taken into another group
  (void)leader;
  WriteThread::Group group;
  write_thread_.BuildBatchGroup(&w, &group);
  Status s = fn();
  write_thread_.ExitAsBatchGroupLeader(group, s);
  return s;
}

}  // namespace shale
