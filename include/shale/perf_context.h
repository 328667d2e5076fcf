// PerfContext: per-thread counts and timings of what this thread's DB calls did, for finding
// where one operation's time goes (Statistics, by contrast, sums all threads of a DB).
//
//   shale::SetPerfLevel(shale::PerfLevel::kEnableTime);
//   shale::get_perf_context()->Reset();
//   db->Get(ReadOptions(), key, &value);
//   std::string report = shale::get_perf_context()->ToString();
//
// The level is per thread and starts at kDisable, where recording costs one thread-local load
// per site. kEnableCount records counts; kEnableTimeExceptForMutex and above also time
// (steady clock, nanoseconds). Levels keep RocksDB's numbering, so db_bench's -perf_level means
// the same in both; shale does not time mutex waits on their own, so the three timing levels are
// one (a timed span includes any lock it takes).
//
// Work done on background threads (flush, compaction) lands in those threads' contexts, not the
// caller's. Thread safety: each thread has its own context; get_perf_context() must only be used
// by the thread that called it.
#pragma once

#include <cstdint>
#include <string>

namespace shale {

enum class PerfLevel : unsigned char {
  kUninitialized = 0,
  kDisable = 1,                             // nothing recorded (the default)
  kEnableCount = 2,                         // counts only
  kEnableTimeExceptForMutex = 3,            // counts and timings
  kEnableTimeAndCPUTimeExceptForMutex = 4,  // same as 3 in shale
  kEnableTime = 5,                          // same as 3 in shale
  kOutOfBounds = 6,                         // not a level: the first invalid value
};

// Sets / returns the calling thread's level. Values outside [kDisable, kEnableTime] are clamped.
void SetPerfLevel(PerfLevel level);
PerfLevel GetPerfLevel();

struct PerfContext {
  // ---- reads (Get, MultiGet, GetMergeOperands, iterators) ----
  uint64_t get_from_memtable_count = 0;        // memtables searched by point lookups
  uint64_t get_from_memtable_time = 0;         // ns in memtable lookups
  uint64_t get_from_output_files_time = 0;     // ns in table files (filters, index, blocks)
  uint64_t bloom_memtable_hit_count = 0;       // memtable Bloom filter: key may be there
  uint64_t bloom_memtable_miss_count = 0;      // memtable Bloom filter: key ruled out
  uint64_t bloom_sst_hit_count = 0;            // table filter: key may be there
  uint64_t bloom_sst_miss_count = 0;           // table filter: key ruled out
  uint64_t block_cache_hit_count = 0;          // data blocks found in the block cache
  uint64_t block_read_count = 0;               // blocks read from files (data, and index/filter
                                               // at table open)
  uint64_t block_read_byte = 0;                // bytes of those blocks
  uint64_t block_read_time = 0;                // ns in synchronous block reads and waits for
                                               // iterators' batched reads
  uint64_t index_block_read_count = 0;         // index blocks read (at table open)
  uint64_t filter_block_read_count = 0;        // filter blocks read (at table open)
  uint64_t multiget_async_read_count = 0;      // MultiGet data blocks read through the async path
  uint64_t iter_async_read_count = 0;          // iterator seeks' data blocks read in batches
  uint64_t iter_async_batch_count = 0;         // batches of those reads (one wait each)
  uint64_t internal_merge_count = 0;           // merge operands met by point lookups
  uint64_t get_read_bytes = 0;                 // value bytes returned by Get
  uint64_t multiget_read_bytes = 0;            // value bytes returned by MultiGet
  uint64_t get_merge_operands_read_bytes = 0;  // operand bytes returned by GetMergeOperands
  uint64_t iter_read_bytes = 0;                // key + value bytes iterators returned
  uint64_t internal_key_skipped_count = 0;     // older or invisible versions iterators stepped over
  uint64_t internal_delete_skipped_count = 0;  // deletion markers iterators stepped over
  // Seeks of iterators past the keys a range tombstone covers in sorted runs older than it.
  uint64_t internal_range_del_reseek_count = 0;
  // ---- writes ----
  // ns waiting to lead a write group or for its leader, and (pipelined writes) for the groups
  // ahead to finish their memtable inserts
  uint64_t write_thread_wait_nanos = 0;
  // ns making room: memtable switches (pipelined writes: with the wait for the groups ahead to
  // finish inserting into the memtable being switched) and write stalls
  uint64_t write_delay_time = 0;
  uint64_t write_wal_time = 0;       // ns appending (and syncing) the group's WAL record
  uint64_t write_memtable_time = 0;  // ns inserting the group into the memtable

  // Zeroes every field.
  void Reset();
  // Adds other's fields to this one's (to sum several threads' contexts).
  void Add(const PerfContext& other);
  // "name = value, name = value, ..." in declaration order, as RocksDB prints it.
  std::string ToString(bool exclude_zero_counters = false) const;
};

// The calling thread's context.
PerfContext* get_perf_context();

}  // namespace shale
