// DBImpl: the DB behind the public interface: write path (group commit into WAL + memtable,
// memtable switches and write stalls), read path (a SuperVersion of memtables and table files
// at a snapshot sequence), background flush and compaction, snapshots, properties, shutdown.
// One class, defined by concept across files: db_impl.cc (construction, background errors,
// Resume, Close), db_write.cc (the write path), db_read.cc (reads, iterators, snapshots),
// db_properties.cc (GetProperty), db_open.cc (Open and recovery), db_background.cc (memtable
// switches, write stalls, background threads, flush), db_compaction.cc (compaction jobs).
//
// Column families: one ColumnFamilyData per live family (src/db/column_family.h), each with
// its memtables, SuperVersion and compaction state; one WAL, one sequence, one write thread and
// one set of background threads for all. The calls without a handle act on the default family.
//
// Thread safety: the public methods are thread-safe (see shale/db.h). Writes are serialized by
// the WriteThread: only the current group leader touches log_ and the families' mutable
// memtables and allocates sequence numbers. Reads (Get, MultiGet, GetMergeOperands,
// iterators) never take mutex_: they load the family's published SuperVersion and
// last_sequence_; GetSnapshot and ReleaseSnapshot take it. mutex_ guards the families'
// immutable memtables and bookkeeping, the VersionSet, snapshots, background state and the
// background error; background threads release it while they do file IO. Families are created
// and dropped with writes stopped and mutex_ held.
#pragma once

#include <atomic>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/file_system.h"
#include "shale/logger.h"
#include "shale/merge_operator.h"
#include "shale/statistics.h"
#include "src/base/dbformat.h"
#include "src/base/filename.h"
#include "src/db/column_family.h"
#include "src/db/super_version.h"
#include "src/db/table_cache.h"
#include "src/db/version_set.h"
#include "src/db/write_delay.h"
#include "src/db/write_thread.h"
#include "src/util/invariants.h"
#include "src/util/mutex.h"
#include "src/util/test_hook.h"
#include "table/table_builder.h"
#include "wal/log_writer.h"

namespace shale {

class MemTable;
class Compaction;
class ColumnFamilyData;
struct MultiGetKey;

// InvalidArgument naming the first bad field of o (db_open.cc).
[[nodiscard]] Status ValidateOptions(const Options& o);

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string dbname);
  ~DBImpl() override;

  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status SingleDelete(const WriteOptions& options, const Slice& key) override;
  Status DeleteRange(const WriteOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& begin_key, const Slice& end_key) override;
  Status DeleteRange(const WriteOptions& options, const Slice& begin_key,
                     const Slice& end_key) override;
  bool KeyMayExist(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
                   std::string* value, bool* value_found) override;
  Status GetApproximateSizes(const SizeApproximationOptions& options,
                             ColumnFamilyHandle* column_family, const Range* ranges, int n,
                             uint64_t* sizes) override;
  void GetApproximateMemTableStats(ColumnFamilyHandle* column_family, const Range& range,
                                   uint64_t* count, uint64_t* size) override;
  Status SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key) override;
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

  // ---- Column families (db_column_family.cc) ----
  ColumnFamilyHandle* DefaultColumnFamily() const override;
  Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                            std::unique_ptr<ColumnFamilyHandle>* handle) override;
  Status DropColumnFamily(ColumnFamilyHandle* column_family) override;
  Status DestroyColumnFamilyHandle(std::unique_ptr<ColumnFamilyHandle> column_family) override;
  Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             const Slice& value) override;
  Status Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                const Slice& key) override;
  Status Merge(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
               const Slice& operand) override;
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             PinnableSlice* value) override;
  void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family, size_t n,
                const Slice* keys, PinnableSlice* values, Status* statuses,
                bool sorted_input) override;
  Status GetMergeOperands(const ReadOptions& options, ColumnFamilyHandle* column_family,
                          const Slice& key, PinnableSlice* operands, GetMergeOperandsOptions* opts,
                          int* number_of_operands) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                        ColumnFamilyHandle* column_family) override;
  Status NewIterators(const ReadOptions& options,
                      const std::vector<ColumnFamilyHandle*>& column_families,
                      std::vector<std::unique_ptr<Iterator>>* iterators) override;
  Status Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) override;
  Status Flush(const FlushOptions& options,
               const std::vector<ColumnFamilyHandle*>& column_families) override;
  Status CompactRange(const CompactRangeOptions& options, ColumnFamilyHandle* column_family,
                      const Slice* begin, const Slice* end) override;
  bool GetProperty(ColumnFamilyHandle* column_family, const Slice& property,
                   std::string* value) override;
  // A new handle of a live family named name (null: none), for DB::Open's caller.
  std::unique_ptr<ColumnFamilyHandle> NewFamilyHandle(const std::string& name) const;

  // Open-time work (db_open.cc). REQUIRES: called once, before the DB is shared. families: the
  // options of every family to open other than the default one, by name.
  Status OpenImpl(const std::map<std::string, ColumnFamilyOptions>& families = {});

 private:
  class SnapshotImpl;

  using FamilyMap = std::map<uint32_t, std::shared_ptr<ColumnFamilyData>>;
  // The live families (see family_map_).
  std::shared_ptr<const FamilyMap> Families() const EXCLUDES(family_map_mu_) {
    MutexLock l(&family_map_mu_);
    return family_map_;
  }
  // Makes families the live set: families_ and the published family_map_.
  void PublishFamilies(FamilyMap families) REQUIRES(mutex_) EXCLUDES(family_map_mu_) {
    auto published = std::make_shared<const FamilyMap>(families);
    many_families_.store(families.size() > 1, std::memory_order_relaxed);
    families_ = std::move(families);
    MutexLock l(&family_map_mu_);
    family_map_ = std::move(published);
  }
  // A new family object named name with id, options the DB's with cf_options.
  std::shared_ptr<ColumnFamilyData> NewFamilyData(uint32_t id, const std::string& name,
                                                  const ColumnFamilyOptions& cf_options) const;
  // The family of a handle CheckFamily accepted.
  static ColumnFamilyData* FamilyOf(ColumnFamilyHandle* column_family);

  // Recovery helpers (db_open.cc).
  Status LockAndCheckExistence(bool* is_new);
  // Sets info_log_ (the options' logger, or a LOG file started now; none if that fails) and
  // writes the header: the version, the path, the DB's options.
  void StartInfoLog();
  // Recovers the VersionSet and the WALs with every family the MANIFEST holds (each must be
  // in families, by name, or the open fails naming those that are not) and creates those of
  // families it does not hold (with create_missing_column_families; otherwise the open fails
  // naming them).
  Status RecoverFamilies(bool is_new, const std::map<std::string, ColumnFamilyOptions>& families);
  // Whether family id's records in WAL log_number are replayed: the family is live and had
  // not flushed past that log.
  bool ReplaysInto(uint32_t id, uint64_t log_number) const REQUIRES(mutex_);
  // InvalidArgument when batch (from WAL log_number) holds a Merge record that is replayed into
  // a family without a merge operator.
  Status CheckReplayedMerges(const WriteBatch& batch, uint64_t log_number,
                             const std::string& log_name) const REQUIRES(mutex_);
  // Replays the WALs into the families' memtables (flushing them as they fill) and starts a
  // new WAL; see db_open.cc. edits: per family id, the edit the recovery builds.
  using RecoveryEdits = std::map<uint32_t, VersionEdit>;
  Status RecoverLogs(RecoveryEdits* edits) REQUIRES(mutex_);
  // RecoverLogs' steps, in order. LogRecovery (db_open.cc) is what they learn on the way.
  struct LogRecovery;
  // Lists the logs to replay (into r->logs, ascending); Corruption if a table the MANIFEST
  // names is missing.
  Status FindLogsToReplayLocked(LogRecovery* r) REQUIRES(mutex_);
  // Pass 1: replays r->logs into the families' memtables as far as the recovery mode allows.
  // On failure, deletes the tables it wrote.
  Status ReplayLogsLocked(LogRecovery* r, RecoveryEdits* edits) REQUIRES(mutex_);
  // The recovered data goes to L0, and the MANIFEST stops naming the replayed logs.
  Status FlushRecoveredLocked(RecoveryEdits* edits) REQUIRES(mutex_);
  // Nothing was dropped and the recovered data stays in the memtables: syncs the replayed
  // logs, which stay until the memtables are flushed.
  Status KeepReplayedLogsLocked(const LogRecovery& r) REQUIRES(mutex_);
  // Pass 2: something was dropped and the recovered data stays in the memtables: copies the
  // surviving records into the new log, syncs it, and the MANIFEST stops naming the replayed
  // logs.
  Status CopySurvivingRecordsLocked(const LogRecovery& r, RecoveryEdits* edits) REQUIRES(mutex_);
  // Logs every family's edit as one MANIFEST record, each with log number log_number_.
  Status ApplyRecoveryEditsLocked(RecoveryEdits* edits) REQUIRES(mutex_);
  // Deletes the tables a failed recovery wrote for edits before any MANIFEST record named
  // them, so that refused or failing opens do not pile up orphans.
  void DiscardUnloggedTables(const RecoveryEdits& edits) REQUIRES(mutex_);
  // Starts a new WAL with a fresh file number; later writes go to it. With keep_previous, the
  // current log is handed to the OS and kept open, unsynced, in unsynced_logs_ (a memtable
  // switch), and the new log starts with a header naming the previous log's last sequence;
  // otherwise the current log is closed (recovery, Resume: the logs before are durable or
  // retired).
  Status CreateLog(bool keep_previous) REQUIRES(mutex_);
  // Syncs the logs in unsynced_logs_, oldest first, before a sync of log_: a synced write never
  // outlives an earlier unsynced one. Leader or writes stopped.
  Status SyncClosedLogs() EXCLUDES(mutex_, closed_log_sync_mu_);
  // With more than one family: syncs the closed logs numbered below number before a flush
  // records a memtable whose data is in them, so that no family's tables hold writes that a
  // crash could take from the others' logs (mutex_ released meanwhile).
  Status SyncClosedLogsBefore(uint64_t number) REQUIRES(mutex_) EXCLUDES(closed_log_sync_mu_);

  // ---- Memtables, write stalls, background threads, flush (db_background.cc) ----
  // Leader only: switches full memtables, or waits while some family's L0 or immutable
  // memtables are backed up (write stalls). Returns the background error, if any. Before a
  // switch, waits for the groups before leader's to finish (pipelined writes).
  Status MakeRoomForWrite(uint64_t group_bytes, const WriteThread::Writer* leader) EXCLUDES(mutex_);
  // The worst write stall any family calls for now (l0/pending: the families' L0 file count
  // and pending compaction bytes, with the family that sets each), and the memtables to switch:
  // full ones, and past max_total_wal_size those holding the oldest live WAL. Leader only (it
  // reads log_'s size).
  struct StallState;
  StallState ComputeStall() REQUIRES(mutex_);
  // MakeRoomForWrite's check without mutex_, for the leader of a write group: true when the
  // locked path would find nothing to do (one family, its memtable not full, no slowdown or
  // stop reachable or in force, no error, not closing). The memtable's fill is read live; L0
  // grows only through a flush of a switched memtable, and every switch takes the locked path
  // (ComputeStall), so a stall flag read late lets through groups that fit in the memtable,
  // never an unbounded L0.
  bool RoomWithoutLock() const;
  // Starts one new WAL, and turns the mutable memtable of each of families into an immutable
  // one with a new memtable after it. Families whose memtables hold nothing move on to the new
  // WAL.
  Status SwitchMemtables(const std::vector<ColumnFamilyData*>& families) REQUIRES(mutex_);
  // Publishes a SuperVersion of cfd's current memtables and Version.
  void InstallSuperVersion(ColumnFamilyData* cfd) REQUIRES(mutex_);
  // Drops cfd's published SuperVersion (which shares cfd back): at drop and Close.
  void ReleaseSuperVersion(ColumnFamilyData* cfd);
  // IOError if a thread cannot be started (those started keep running until CloseImpl).
  [[nodiscard]] Status StartBackgroundThreads();
  void BackgroundThread() EXCLUDES(mutex_);
  // Writes every family's shale.stats to the info log each stats_dump_period_sec until the DB
  // closes (one thread, started with the background threads when there is an info log).
  void StatsDumpThread() EXCLUDES(mutex_);
  // The family to flush next: of those with immutable memtables and no flush running, the one
  // whose oldest memtable started in the oldest WAL (null: none).
  std::shared_ptr<ColumnFamilyData> PickFlush() const REQUIRES(mutex_);
  // Writes cfd's oldest immutable memtable as an L0 table and records it.
  void BackgroundFlush(const std::shared_ptr<ColumnFamilyData>& cfd) REQUIRES(mutex_);
  // atomic_flush: writes every immutable memtable of every family as L0 tables and records
  // them all in one MANIFEST record.
  void BackgroundAtomicFlush() REQUIRES(mutex_);
  // Writes mem as an L0 table of cfd without the versions no reader can see (mutex released
  // meanwhile); adds the file to edit.
  // *job_id (if given): the number the info log gives this flush.
  Status WriteLevel0Table(ColumnFamilyData* cfd, MemTable* mem, VersionEdit* edit,
                          uint64_t* job_id = nullptr) REQUIRES(mutex_);
  // Info log helpers: an output table's table_file_creation event, and a family's files per
  // level (lsm_state).
  void LogTableFileCreation(uint64_t job, const std::string& family, int level,
                            const FileMetaData& f) const;
  std::vector<int> LsmState(const ColumnFamilyData& cfd) const REQUIRES(mutex_);
  // Sets stall_reason_ and stall_family_, saying in the info log when they change.
  void NoteStallLocked(const char* reason, const std::string& family) REQUIRES(mutex_);
  // The compaction_started event: c's input files and bytes per level.
  void LogCompactionStart(uint64_t job, const std::string& family, const Compaction& c,
                          double score) const;
  // Edits that move the log number of every live family other than except on to
  // OldestLogNumber() where that is past what the MANIFEST records (nothing in the WALs
  // between is theirs), for logging with except's edit.
  std::vector<VersionEdit> AdvanceIdleLogNumbers(uint32_t except) const REQUIRES(mutex_);
  bool NeedsCompaction() const REQUIRES(mutex_);
  bool NeedsCompaction(const ColumnFamilyData& cfd) const REQUIRES(mutex_);
  // cfd may have a read-triggered compaction to run: a seek exhausted one of its files'
  // allowed seeks, and no memtable waits for flush (writes are then likely to bring
  // compactions of their own).
  bool ReadCompactionDue(const ColumnFamilyData& cfd) const REQUIRES(mutex_);
  // Called by an iterator's ReadSampler when a file of cfd has exhausted its allowed seeks.
  void RequestReadCompaction(ColumnFamilyData* cfd) EXCLUDES(mutex_);
  // Compactions that may run at once (Options::max_background_compactions, or derived from
  // max_background_jobs), and how many may run now: all of them while compaction is behind
  // (CompactionBehind), otherwise one.
  int MaxCompactions() const;
  size_t CompactionLimit() const REQUIRES(mutex_);
  // Some family's L0 or pending compaction bytes passed the point where compactions run in
  // parallel (see Options::max_background_compactions).
  bool CompactionBehind() const REQUIRES(mutex_);
  bool CompactionBehind(const ColumnFamilyData& cfd) const REQUIRES(mutex_);
  // Deletes files no live Version, pending output or live WAL needs.
  void DeleteObsoleteFiles() REQUIRES(mutex_);
  // DeleteObsoleteFiles at the end of a flush, with flush_finishing_ set meanwhile.
  void DeleteFlushedFiles() REQUIRES(mutex_);
  // Writes the info log's buffered lines out with mutex_ released (a flush's or compaction's
  // lines reach the LOG file when it ends, without a write(2) under the mutex).
  void FlushInfoLogUnlocked() REQUIRES(mutex_);
  static TableBuilderOptions BuilderOptions(const ColumnFamilyData& cfd);
  // How flush and compaction open the table files they write (Options::bytes_per_sync).
  FileOptions TableFileOptions() const {
    FileOptions o;
    o.bytes_per_sync = options_.bytes_per_sync;
    return o;
  }

  // ---- Compaction jobs (db_compaction.cc) ----
  // Runs the compaction the picker chooses for the family with the highest score; its failure
  // becomes the background error. False when there was none to run (every due level's inputs
  // are busy).
  bool BackgroundCompaction() REQUIRES(mutex_);
  // Runs c on cfd's files (mutex released for the file IO) and installs its result, split into
  // up to max_subcompactions parts (subcompactions) run on threads of their own.
  Status RunCompaction(ColumnFamilyData* cfd, Compaction* c, uint32_t max_subcompactions)
      REQUIRES(mutex_);
  // RunCompaction's steps. CompactionState (db_compaction.cc) is the work in progress of one
  // compaction, or of one part of it (a subcompaction); the steps that exclude mutex_ run
  // while RunCompaction has released it, one thread per CompactionState.
  struct CompactionState;
  // Runs each part on a thread of its own (the first on the caller's).
  void RunSubcompactions(const std::vector<std::unique_ptr<CompactionState>>& parts)
      EXCLUDES(mutex_);
  // One input and nothing to merge it with: records it one level down, unchanged.
  Status MoveFileDownLocked(ColumnFamilyData* cfd, Compaction* c) REQUIRES(mutex_);
  // Merges the inputs into output tables, cut at the output size between user keys.
  Status WriteCompactionOutputs(CompactionState* state) EXCLUDES(mutex_);
  // Decides the gathered entries of one user key and adds the survivors to the output, which
  // is finished when it reached the output file size.
  Status WriteKeyEntries(CompactionState* state) EXCLUDES(mutex_);
  // Takes a file number (a pending output) and creates the table file, to start at first_key
  // (empty: an output of range tombstones only, whose bounds they give).
  Status OpenCompactionOutput(CompactionState* state, const std::string& first_key)
      EXCLUDES(mutex_);
  // Finishes, syncs and closes the open output and records it (when that succeeded). The output
  // takes the part's range tombstones up to next_key, the first user key of the next output
  // (null: the part's end).
  Status FinishCompactionOutput(CompactionState* state, const Slice* next_key) EXCLUDES(mutex_);
  // Reads the range tombstones of the compaction's inputs into state->tombstones, clipped to
  // the part.
  Status GatherRangeTombstones(CompactionState* state) EXCLUDES(mutex_);
  // Whether state's tombstones hide every entry f holds within the part from every reader.
  static bool CoveredByTombstones(const CompactionState& state, const FileMetaData& f);
  // The index of the first of state's tombstone fragments the next output would take.
  static size_t TombstonesFrom(const CompactionState& state);
  // With s ok, replaces the inputs by the outputs of every part (in key order) in a new
  // Version; then releases the pending outputs and the inputs, and counts the work. Returns s,
  // or the outputs' range check's or the MANIFEST write's error.
  Status InstallCompactionResultsLocked(const std::vector<std::unique_ptr<CompactionState>>& parts,
                                        Status s) REQUIRES(mutex_);
  // Corruption when an output holds a user key outside the inputs' recorded range.
  static Status CheckOutputsWithinInputs(const ColumnFamilyData& cfd, const Compaction& c,
                                         const std::vector<FileMetaData>& outputs);
  // Sequence numbers of live snapshots, ascending.
  std::vector<SequenceNumber> SnapshotSequences() const REQUIRES(mutex_);

  // ---- Write path (db_write.cc) ----
  Status WriteImpl(const WriteOptions& options, WriteBatch* batch);
  // Encodes the group's batches as one WAL record payload starting at first_seq.
  void BuildGroupRecord(const WriteThread::Group& group, SequenceNumber first_seq,
                        std::string* record) const;
  // Leader only: appends the group's record to the WAL, synced when a member asked. On failure
  // the sequence numbers up to last_seq are spent and the DB turns read-only.
  inline Status WriteGroupToLog(const WriteThread::Group& group, SequenceNumber first_seq,
                                SequenceNumber last_seq) EXCLUDES(mutex_);
  // Leader only: inserts the group into the families' memtables and publishes its sequence
  // numbers to readers.
  inline void InsertGroup(const WriteThread::Group& group, SequenceNumber first_seq,
                          SequenceNumber last_seq);

  // ---- Read path (db_read.cc) ----
  // Sequence to read at: the snapshot's, or the latest published. InvalidArgument for a
  // snapshot of another DB.
  Status ReadSequence(const ReadOptions& options, SequenceNumber* seq) const;
  Status CheckOpen() const;
  // Why cfd has no SuperVersion: Aborted when the DB closed after the caller's CheckOpen,
  // otherwise InvalidArgument (the family was dropped).
  Status NoSuperVersion(const ColumnFamilyData& cfd) const;
  // OK when column_family is a handle of this DB naming a family it holds; InvalidArgument
  // otherwise (null, another DB's, a dropped family).
  Status CheckFamily(const ColumnFamilyHandle* column_family) const;
  // The write-path check of a batch: every record names a live family, and a Merge record's
  // family has a merge operator (InvalidArgument otherwise).
  Status CheckBatchFamilies(const WriteBatch* batch) const;
  // The reads and iterators of one family.
  Status GetImpl(const ReadOptions& options, ColumnFamilyData* cfd, const Slice& key,
                 PinnableSlice* value);
  void MultiGetImpl(const ReadOptions& options, ColumnFamilyData* cfd, size_t n, const Slice* keys,
                    PinnableSlice* values, Status* statuses, bool sorted_input);
  Status GetMergeOperandsImpl(const ReadOptions& options, ColumnFamilyData* cfd, const Slice& key,
                              PinnableSlice* operands, GetMergeOperandsOptions* opts,
                              int* number_of_operands);
  std::unique_ptr<Iterator> NewIteratorImpl(const ReadOptions& options, ColumnFamilyData* cfd);
  Status FlushImpl(const FlushOptions& options, const std::vector<ColumnFamilyData*>& families);
  Status CompactRangeImpl(const CompactRangeOptions& options, ColumnFamilyData* cfd,
                          const Slice* begin, const Slice* end);
  bool GetPropertyImpl(ColumnFamilyData* cfd, const Slice& property, std::string* value);
  // Reads key at seq from sv, which the caller loaded before it read seq (see Get).
  Status GetAt(const ReadOptions& options, const SuperVersion& sv, SequenceNumber seq,
               const Slice& key, PinnableSlice* value);
  // MultiGet's table step: the keys no memtable resolved, from sv's table files (blocks read
  // concurrently when options.async_io and the thread has an asynchronous reader).
  void MultiGetFromTables(const ReadOptions& options, const SuperVersion& sv,
                          const std::vector<MultiGetKey*>& keys);

  // ---- Properties (db_properties.cc) ----
  // The readers of the properties with a fixed name, which GetProperty looks up in a table;
  // sv is the one SuperVersion the call loaded.
  std::string ActiveMemTableSizeProperty(const SuperVersion& sv) const;
  std::string AllMemTablesSizeProperty(const SuperVersion& sv) const;
  std::string MemTableBlockPoolProperty(const SuperVersion& sv) const;
  std::string NumImmutableMemTablesProperty(const SuperVersion& sv) const;
  std::string ActiveMemTableEntriesProperty(const SuperVersion& sv) const;
  std::string ActiveMemTableDeletesProperty(const SuperVersion& sv) const;
  std::string LatestSequenceProperty(const SuperVersion& sv) const;
  std::string NumSnapshotsProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  std::string EstimateNumKeysProperty(const SuperVersion& sv) const;
  std::string AsyncPathProperty(const SuperVersion& sv) const;
  std::string BackgroundErrorsProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  std::string WriteStallProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  std::string PendingCompactionBytesProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  std::string RunningCompactionsProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  std::string RunningFlushesProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  std::string StatsProperty(const SuperVersion& sv) const EXCLUDES(mutex_);
  // shale.num-files-at-level<level_text>: false unless level_text is the number of a level.
  bool NumFilesAtLevelProperty(const SuperVersion& sv, std::string_view level_text,
                               std::string* value) const;

  // Enters the read-only state after a failed WAL write or sync, flush or compaction.
  void SetBackgroundError(const Status& s) EXCLUDES(mutex_);
  void SetBackgroundErrorLocked(const Status& s) REQUIRES(mutex_);
  // Runs fn as an exclusive writer (no write group is in flight meanwhile).
  template <typename Fn>
  Status WithWritesStopped(Fn&& fn);
  Status CloseImpl();

  const std::string dbname_;
  // The DB's options, and the default family's.
  const Options options_;
  const std::shared_ptr<FileSystem> fs_;
  Statistics* const stats_;
  // The info log (null: none). Set by OpenImpl before any other thread runs, then unchanged.
  std::shared_ptr<Logger> info_log_;
  // Numbers the flushes and compactions the info log reports ("job").
  std::atomic<uint64_t> next_job_id_{1};
  // The block cache of every family whose options name none.
  std::shared_ptr<Cache> block_cache_;
  // The default family (never dropped) and DefaultColumnFamily(): made by the constructor.
  std::shared_ptr<ColumnFamilyData> default_cfd_;
  std::unique_ptr<ColumnFamilyHandle> default_family_;
  // The live families by id, replaced whole (never changed in place) under mutex_ with writes
  // stopped: by Open, CreateColumnFamily and DropColumnFamily. The write path loads it to
  // check and insert batches; background work under mutex_.
  mutable Mutex family_map_mu_;
  std::shared_ptr<const FamilyMap> family_map_ GUARDED_BY(family_map_mu_);

  std::string async_path_;  // set by Open: "io_uring", or "sync (why)"
  std::unique_ptr<FileLock> db_lock_;
  std::unique_ptr<Directory> db_dir_;
  WriteThread write_thread_;

  // Owned by the write leader (or the opening / closing thread); switched under mutex_ too.
  std::unique_ptr<log::Writer> log_;
  uint64_t log_number_ = 0;
  // The last sequence number written to log_ (0: none yet); the next log's header carries it.
  SequenceNumber log_last_sequence_ = 0;
  // Logs a memtable switch closed without syncing them, oldest first, still open: a later WAL
  // sync syncs them first (SyncClosedLogs); once their memtables are in tables they are dropped
  // unsynced (DeleteObsoleteFiles), so their bytes need never reach the device.
  struct UnsyncedLog {
    uint64_t number;
    std::unique_ptr<log::Writer> writer;
  };
  std::vector<UnsyncedLog> unsynced_logs_ GUARDED_BY(mutex_);
  // Every live WAL before log_ (closed by a memtable switch, or kept by recovery), oldest
  // first, with its size; dropped by DeleteObsoleteFiles once no family needs it. Their bytes
  // plus log_'s are what max_total_wal_size bounds.
  struct ClosedLog {
    uint64_t number;
    uint64_t bytes;
  };
  std::deque<ClosedLog> closed_logs_ GUARDED_BY(mutex_);
  uint64_t closed_log_bytes_ GUARDED_BY(mutex_) = 0;
  // The live WALs' bytes past which families holding the oldest one are switched
  // (DBOptions::max_total_wal_size, or its default).
  uint64_t MaxTotalWalSize() const REQUIRES(mutex_);
  // Held while closed logs taken from unsynced_logs_ are synced (SyncClosedLogs,
  // SyncClosedLogsBefore), so that a synced write never passes logs being synced. Taken
  // before mutex_, never while holding it.
  Mutex closed_log_sync_mu_ ACQUIRED_BEFORE(mutex_);
  // Logs a flush took from unsynced_logs_ are being synced (SyncClosedLogsBefore).
  bool flush_syncing_logs_ GUARDED_BY(mutex_) = false;
  // Read by the leader: a synced write must first sync closed logs (SyncClosedLogs), or wait
  // for a flush syncing them.
  std::atomic<bool> has_unsynced_logs_{false};
  void UpdateHasUnsyncedLogs() REQUIRES(mutex_) {
    has_unsynced_logs_.store(!unsynced_logs_.empty() || flush_syncing_logs_,
                             std::memory_order_relaxed);
  }
  // Sequence numbers handed out so far (leader only); >= last_sequence_.
  SequenceNumber last_allocated_sequence_ = 0;
  // Every write with a sequence <= this is applied and visible to readers.
  std::atomic<SequenceNumber> last_sequence_{0};

  std::atomic<bool> closed_{false};
  // Set by Close() before it counts iterators and snapshots, cleared if it then refuses:
  // NewIterator and GetSnapshot refuse while it is set, so none escapes the count.
  std::atomic<bool> closing_{false};
  std::atomic<bool> read_only_{false};

  mutable Mutex mutex_;
  // The live families (as family_map_), for the work done under mutex_.
  FamilyMap families_ GUARDED_BY(mutex_);
  // Dropped families still held (by handles, SuperVersions): their table caches close the
  // readers of tables DeleteObsoleteFiles deletes.
  std::vector<std::weak_ptr<ColumnFamilyData>> dropped_families_ GUARDED_BY(mutex_);
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
  // Seeds the iterators' ReadSamplers (each samples other seeks).
  std::atomic<uint64_t> iterator_seed_{0};

  // Background work.
  std::vector<std::thread> bg_threads_;
  CondVar bg_work_cv_{&mutex_};  // work may be available, or shutting down
  CondVar bg_done_cv_{&mutex_};  // a background job finished
  CondVar stats_cv_{&mutex_};    // shutting down (StatsDumpThread's wait)
  bool shutting_down_ GUARDED_BY(mutex_) = false;
  std::atomic<bool> shutdown_requested_{false};    // read by running jobs without the mutex
  bool flush_running_ GUARDED_BY(mutex_) = false;  // one flush at a time
  // A flush has installed its result and is deleting the files it freed (DeleteFlushedFiles).
  bool flush_finishing_ GUARDED_BY(mutex_) = false;
  // Compactions writing outputs (trivial moves finish under mutex_ and are never listed).
  struct RunningCompaction {
    const Compaction* compaction;
    uint32_t family;
  };
  std::vector<RunningCompaction> running_compactions_ GUARDED_BY(mutex_);
  bool manual_compaction_ GUARDED_BY(mutex_) = false;      // CompactRange owns compaction
  int manual_compactions_waiting_ GUARDED_BY(mutex_) = 0;  // CompactRange calls waiting for it
  std::set<uint64_t> pending_outputs_ GUARDED_BY(mutex_);  // table files being written
  // Obsolete files claimed by a DeleteObsoleteFiles call (deleted outside the mutex), kept
  // until no call is running: a call that listed them too, even before they went, leaves them
  // alone.
  std::set<std::pair<FileType, uint64_t>> files_being_purged_ GUARDED_BY(mutex_);
  int purges_running_ GUARDED_BY(mutex_) = 0;
  WriteDelay write_delay_ GUARDED_BY(mutex_);  // paces slowed-down writes
  const char* stall_reason_ GUARDED_BY(mutex_) = "none";
  // Set while stall_reason_ is not "none" (a group was slowed or stopped): the next groups take
  // MakeRoomForWrite's locked path, which clears it (and resets write_delay_) once none is.
  std::atomic<bool> write_stall_active_{false};
  // More than the default family is live (set by PublishFamilies): the WAL bound across
  // families is checked under mutex_ only.
  std::atomic<bool> many_families_{false};
  std::string stall_family_ GUARDED_BY(mutex_);  // the family stall_reason_ is about
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
  SHALE_TEST_HOOK("DBImpl::WithWritesStopped:Enter");
  WriteThread::Writer w(WriteOptions(), nullptr, /*exclusive=*/true);
  bool leader = write_thread_.JoinBatchGroup(&w);
  SHALE_ASSERT(leader);  // an exclusive writer is never taken into another group
  (void)leader;
  WriteThread::Group group;
  write_thread_.BuildBatchGroup(&w, &group);
  // Pipelined: the groups still inserting are finished first.
  write_thread_.WaitForEarlierGroups(&w);
  Status s;
  {
    // Close sets shutting_down_ before it drains the writes through this slot: a section that
    // gets the slot after that finds the WAL, memtables or versions being released.
    MutexLock l(&mutex_);
    if (shutting_down_) s = Status::Aborted("the DB is closing");
  }
  if (s.ok()) s = fn();
  write_thread_.ExitAsBatchGroupLeader(group, s);
  return s;
}

}  // namespace shale
