// DB: an open shale database. The entry point of the public API.
//
//   std::unique_ptr<shale::DB> db;
//   shale::Options options;
//   options.create_if_missing = true;
//   shale::Status s = shale::DB::Open(options, "/tmp/testdb", &db);
//   if (s.ok()) s = db->Put(shale::WriteOptions(), "key", "value");
//
// Errors:
//   - InvalidArgument: invalid Options; Merge without Options::merge_operator; a key over
//     kMaxKeySize or a value over kMaxValueSize; a snapshot from another DB; sync with disableWAL.
//   - IOError: the directory is locked by another opener (LOCK), or the file system failed.
//   - Corruption: damaged files, naming the file and offset.
//   - Aborted: the DB was closed; every call after Close() returns this.
//   - IOError after a failed WAL write or sync: the DB is read-only until Resume() or reopen.
//   - NotSupported: a feature this build does not provide.
//   - InvalidArgument for a column family handle that is null where one is required, belongs to
//     another DB, or names a family this DB does not hold.
//
// Thread safety: all methods may be called concurrently from any thread. Close() may race
// writes (Put, Delete, Merge, Write, SingleDelete, DeleteRange), point reads (Get, MultiGet,
// GetMergeOperands, KeyMayExist), Flush, SyncWAL, Resume and another Close(): each either
// completes as if before the close (a write is then in the WAL, recovered by the next Open) or
// returns Aborted. It may also race NewIterator(s) and GetSnapshot: each either hands out
// what Close() then counts (Close refuses, Aborted, and the DB stays open) or refuses itself
// (an iterator whose status() is Aborted, NewIterators Aborted, GetSnapshot null; a MultiGet
// over several families without a snapshot is Aborted too). An iterator still being made
// counts, so a NewIterator that ends refused may still make a racing Close() refuse; a Close()
// that refuses makes these calls refuse while it runs; of two racing Close() calls the second
// returns Aborted ("another Close is in progress") even if the first then refuses. Nothing may
// race destruction.
//
// Lifetime: iterators, and PinnableSlices filled by Get, MultiGet or GetMergeOperands, may
// point into the DB's memtables and block cache; destroy the iterators and Reset() the slices
// before the DB is destroyed (a block cache passed in Options outlives it only if the caller
// keeps its own reference).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shale/column_family.h"
#include "shale/iterator.h"
#include "shale/options.h"
#include "shale/pinnable_slice.h"
#include "shale/slice.h"
#include "shale/snapshot.h"
#include "shale/status.h"
#include "shale/write_batch.h"

namespace shale {

struct GetMergeOperandsOptions {
  // Room in the operands array passed to GetMergeOperands.
  int expected_max_number_of_operands = 0;
  // Called with each operand, newest first; returning false stops the collection there (the
  // operands seen so far, the newest ones, are returned).
  std::function<bool(Slice)> continue_cb;
};

// A key range [start, limit) (RocksDB's Range); the slices must outlive the call.
struct Range {
  Slice start;
  Slice limit;
  Range() = default;
  Range(const Slice& s, const Slice& l) : start(s), limit(l) {}
};

// What GetApproximateSizes counts.
struct SizeApproximationOptions {
  bool include_memtables = false;
  bool include_files = true;
};

class DB {
 public:
  // Size limits, enforced on every write.
  static constexpr size_t kMaxKeySize = size_t{8} << 20;    // 8 MiB
  static constexpr size_t kMaxValueSize = size_t{1} << 30;  // 1 GiB

  // Opens (or with create_if_missing creates) the DB in directory path.
  static Status Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db);
  // Opens the DB with the families column_families names, each with its options, and returns
  // one handle per descriptor in the same order. InvalidArgument when the list leaves out the
  // default family, names one twice, or names a family the DB does not hold.
  static Status Open(const DBOptions& db_options, const std::string& path,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<std::unique_ptr<ColumnFamilyHandle>>* handles,
                     std::unique_ptr<DB>* db);
  // The names of the families of the (closed or open) DB in path; NotFound when path holds no
  // DB.
  static Status ListColumnFamilies(const DBOptions& db_options, const std::string& path,
                                   std::vector<std::string>* column_families);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Closes the DB if Close() was not called (errors are then dropped).
  virtual ~DB() = default;

  // ---- Column families ----
  // The default family's handle, owned by the DB.
  virtual ColumnFamilyHandle* DefaultColumnFamily() const = 0;
  // Creates a family named name (InvalidArgument when one exists, or the name is empty, or the
  // options are invalid), recorded in the MANIFEST before it returns.
  virtual Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                                    std::unique_ptr<ColumnFamilyHandle>* handle) = 0;
  Status CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                              std::vector<std::unique_ptr<ColumnFamilyHandle>>* handles);
  // Drops a family (see shale/column_family.h). InvalidArgument for the default family, which
  // cannot be dropped, and for a family dropped already.
  virtual Status DropColumnFamily(ColumnFamilyHandle* column_family) = 0;
  Status DropColumnFamilies(const std::vector<ColumnFamilyHandle*>& column_families);
  // Destroys a handle Open or CreateColumnFamily returned (as resetting it does), after
  // checking it is one of this DB's. InvalidArgument (the handle is destroyed all the same)
  // for another DB's.
  virtual Status DestroyColumnFamilyHandle(std::unique_ptr<ColumnFamilyHandle> column_family) = 0;

  virtual Status Put(const WriteOptions& options, const Slice& key, const Slice& value) = 0;
  virtual Status Delete(const WriteOptions& options, const Slice& key) = 0;
  virtual Status Merge(const WriteOptions& options, const Slice& key, const Slice& operand) = 0;
  // The same in one family.
  virtual Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, const Slice& value) = 0;
  virtual Status Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                        const Slice& key) = 0;
  virtual Status Merge(const WriteOptions& options, ColumnFamilyHandle* column_family,
                       const Slice& key, const Slice& operand) = 0;
  // Deletes key where its value was written by one Put since the key's last SingleDelete (or
  // ever), with no Merge and no other Put since: compaction then drops the deletion and that
  // value together when they meet, instead of carrying a tombstone down to the last level.
  // Reads see the key as deleted, as after Delete. Misuse (a SingleDelete after two Puts of
  // the key, or after a Merge) is not detected: reads see the key deleted at first, and once
  // a compaction has dropped the deletion with the newest value, an older value of the key
  // may show again (docs/architecture.md, "SingleDelete"). Use Delete when unsure.
  virtual Status SingleDelete(const WriteOptions& options, const Slice& key) = 0;
  virtual Status SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                              const Slice& key) = 0;
  // Deletes every key in [begin_key, end_key) by the family's comparator, with one record (a
  // range tombstone) however many keys the range holds; reads see those keys as deleted, as
  // after Delete of each. begin_key == end_key deletes nothing (OK); end_key before begin_key is
  // InvalidArgument, also inside a batch, which is then refused whole before anything is
  // written.
  virtual Status DeleteRange(const WriteOptions& options, ColumnFamilyHandle* column_family,
                             const Slice& begin_key, const Slice& end_key) = 0;
  virtual Status DeleteRange(const WriteOptions& options, const Slice& begin_key,
                             const Slice& end_key) = 0;
  // Applies batch atomically. The batch is not modified.
  virtual Status Write(const WriteOptions& options, WriteBatch* batch) = 0;

  // NotFound when the key has no value. The PinnableSlice form pins the memory that holds the
  // value (no copy) until value->Reset().
  virtual Status Get(const ReadOptions& options, const Slice& key, PinnableSlice* value) = 0;
  Status Get(const ReadOptions& options, const Slice& key, std::string* value);
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, PinnableSlice* value) = 0;
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             std::string* value);

  // Looks up n keys at once; statuses[i] and values[i] answer keys[i]. sorted_input says keys
  // are already in comparator order.
  virtual void MultiGet(const ReadOptions& options, size_t n, const Slice* keys,
                        PinnableSlice* values, Status* statuses, bool sorted_input = false) = 0;
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values);
  // All n keys in one family.
  virtual void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family, size_t n,
                        const Slice* keys, PinnableSlice* values, Status* statuses,
                        bool sorted_input = false) = 0;
  // keys[i] in column_families[i] (the two vectors are as long); one snapshot for all.
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<ColumnFamilyHandle*>& column_families,
                               const std::vector<Slice>& keys, std::vector<std::string>* values);

  // The merge operands of key, oldest first, in operands[0..*number_of_operands); a base value
  // counts as the first operand. Incomplete (with *number_of_operands = the count needed) when
  // more than opts->expected_max_number_of_operands exist.
  virtual Status GetMergeOperands(const ReadOptions& options, const Slice& key,
                                  PinnableSlice* operands, GetMergeOperandsOptions* opts,
                                  int* number_of_operands) = 0;
  virtual Status GetMergeOperands(const ReadOptions& options, ColumnFamilyHandle* column_family,
                                  const Slice& key, PinnableSlice* operands,
                                  GetMergeOperandsOptions* opts, int* number_of_operands) = 0;

  // false only when key certainly has no value: a memtable holds its deletion, or no memtable
  // holds it and the filter of every table on its path rules it out. Nothing is read from
  // files (a table whose reader is not open yet counts as may-hold). When a memtable holds
  // its value and value_found is given, *value gets it and *value_found is true; otherwise
  // *value_found is false. Errors (a closed DB, a bad handle or snapshot) answer true: Get
  // reports them.
  virtual bool KeyMayExist(const ReadOptions& options, ColumnFamilyHandle* column_family,
                           const Slice& key, std::string* value, bool* value_found = nullptr) = 0;
  bool KeyMayExist(const ReadOptions& options, const Slice& key, std::string* value,
                   bool* value_found = nullptr);

  // Approximate bytes the keys of each range [start, limit) take, in sizes[0..n): in table
  // files (include_files: whole files inside a range, and for a file a range cuts, the bytes
  // between the two ends' data blocks, from its index) and in the memtables (include_memtables:
  // the entries' key and value bytes). InvalidArgument when neither is included or a range's
  // limit is before its start, or for a bad handle; IOError or Corruption from opening a table.
  virtual Status GetApproximateSizes(const SizeApproximationOptions& options,
                                     ColumnFamilyHandle* column_family, const Range* ranges, int n,
                                     uint64_t* sizes) = 0;
  // The default family's, files only.
  Status GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes);
  // Entries (every version and deletion) the family's memtables hold with keys in range, and
  // their key and value bytes; zeros for a bad handle or a range whose limit is before its
  // start. Exact: the memtables are walked over the range.
  virtual void GetApproximateMemTableStats(ColumnFamilyHandle* column_family, const Range& range,
                                           uint64_t* count, uint64_t* size) = 0;
  void GetApproximateMemTableStats(const Range& range, uint64_t* count, uint64_t* size);

  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) = 0;
  // An iterator over one family (an iterator with an error status for a bad handle).
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                                ColumnFamilyHandle* column_family) = 0;
  // One iterator per family, all reading at one sequence (options.snapshot's, or the latest
  // when the call starts).
  virtual Status NewIterators(const ReadOptions& options,
                              const std::vector<ColumnFamilyHandle*>& column_families,
                              std::vector<std::unique_ptr<Iterator>>* iterators) = 0;

  // The DB owns the snapshot; release it with ReleaseSnapshot before closing the DB. Reads
  // given a released snapshot, or another DB's, return InvalidArgument, and releasing one twice,
  // or another DB's, does nothing, unless a newer snapshot of this DB happens to reuse the
  // released one's address (then the pointer means that snapshot).
  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  virtual Status Flush(const FlushOptions& options) = 0;
  virtual Status Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) = 0;
  virtual Status Flush(const FlushOptions& options,
                       const std::vector<ColumnFamilyHandle*>& column_families) = 0;
  // Compacts the key range [*begin, *end] (null: unbounded) down the levels, each level into the
  // next: L0 into L1 and on down to the deepest level that holds data (with
  // level_compaction_dynamic_level_bytes: L0 into the base level and on down to the last level,
  // num_levels - 1). Then options.bottommost_level_compaction says whether that deepest level's
  // files in the range are rewritten in place. Flushes the memtable first. Runs alone: no
  // background compaction runs while it does. InvalidArgument if begin is after end.
  virtual Status CompactRange(const CompactRangeOptions& options, const Slice* begin,
                              const Slice* end) = 0;
  virtual Status CompactRange(const CompactRangeOptions& options, ColumnFamilyHandle* column_family,
                              const Slice* begin, const Slice* end) = 0;
  // Waits until no flush or compaction is pending or running.
  virtual Status WaitForCompact() = 0;
  // Makes every write acknowledged so far durable.
  virtual Status SyncWAL() = 0;
  // Leaves the read-only state entered after a background or WAL error, if the cause is gone.
  virtual Status Resume() = 0;
  // Waits for the writes in flight and background work, releases files and the LOCK. Later
  // calls return Aborted.
  // Refuses (Aborted, the DB stays open) while snapshots are unreleased or iterators alive.
  virtual Status Close() = 0;

  // "shale.stats", "shale.num-files-at-level<N>", "shale.cur-size-all-mem-tables",
  // "shale.memtable-block-pool-bytes" (memory a family keeps from its flushed memtables for its
  // next ones), "shale.estimate-pending-compaction-bytes", ...
  virtual bool GetProperty(const Slice& property, std::string* value) = 0;
  // A family's property; false also for a bad handle.
  virtual bool GetProperty(ColumnFamilyHandle* column_family, const Slice& property,
                           std::string* value) = 0;
};

// Deletes the DB in path and its files. The DB must not be open.
Status DestroyDB(const std::string& path, const Options& options);

}  // namespace shale
