// DBImpl: the DB behind the public interface: write path (group commit into WAL + memtable),
// read path (snapshot sequence + memtable lookups), snapshots, properties and shutdown.
// Open and recovery live in db_open.cc.
//
// Thread safety: the public methods are thread-safe (see shale/db.h). Writes are serialized by
// the WriteThread: only the current group leader touches log_ and allocates sequence numbers.
// Readers never lock: they read the published last_sequence_ and the memtable, which supports
// concurrent readers. mutex_ guards the snapshot list and the background error.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <string>

#include "shale/db.h"
#include "shale/file_system.h"
#include "shale/merge_operator.h"
#include "shale/statistics.h"
#include "src/db/dbformat.h"
#include "src/db/write_thread.h"
#include "src/util/mutex.h"
#include "wal/log_writer.h"

namespace shale {

class MemTable;

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
  Status LockAndCheckExistence();
  Status RecoverLogs();
  Status CreateLog(uint64_t number);

  Status WriteImpl(const WriteOptions& options, WriteBatch* batch);
  // Encodes the group's batches as one WAL record payload starting at first_seq.
  void BuildGroupRecord(const WriteThread::Group& group, SequenceNumber first_seq,
                        std::string* record) const;
  // Sequence to read at: the snapshot's, or the latest published. InvalidArgument for a
  // snapshot of another DB.
  Status ReadSequence(const ReadOptions& options, SequenceNumber* seq) const;
  Status CheckOpen() const;
  Status GetImpl(SequenceNumber seq, const Slice& key, PinnableSlice* value);
  // Enters the read-only state after a failed WAL write or sync.
  void SetBackgroundError(const Status& s) EXCLUDES(mutex_);
  // Runs fn as an exclusive writer (no write group is in flight meanwhile).
  template <typename Fn>
  Status WithWritesStopped(Fn&& fn);
  Status CloseImpl();

  const std::string dbname_;
  const Options options_;
  const std::shared_ptr<FileSystem> fs_;
  Statistics* const stats_;
  const InternalKeyComparator icmp_;

  std::unique_ptr<FileLock> db_lock_;
  std::unique_ptr<Directory> db_dir_;
  WriteThread write_thread_;

  // Owned by the write leader (or the opening / closing thread).
  std::unique_ptr<log::Writer> log_;
  uint64_t log_number_ = 0;
  // Sequence numbers handed out so far (leader only); >= last_sequence_.
  SequenceNumber last_allocated_sequence_ = 0;
  // Every write with a sequence <= this is applied and visible to readers.
  std::atomic<SequenceNumber> last_sequence_{0};

  // The memtable (one ref held by the DB). Constant between Open and Close.
  MemTable* mem_ = nullptr;

  std::atomic<bool> closed_{false};
  std::atomic<bool> read_only_{false};

  mutable Mutex mutex_;
  Status bg_error_ GUARDED_BY(mutex_);
  std::list<std::unique_ptr<SnapshotImpl>> snapshots_ GUARDED_BY(mutex_);
};

}  // namespace shale
