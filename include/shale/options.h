// Options for opening a DB, reading and writing. Names follow RocksDB where the concept is the
// same; defaults are what db_bench uses when a flag is not given. As in RocksDB, Options is
// DBOptions (the DB as a whole) plus ColumnFamilyOptions (one keyspace).
//
// DB::Open validates Options and returns InvalidArgument naming the first bad field.
// Thread safety: plain values; copied into the DB at Open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "shale/comparator.h"
#include "shale/logger.h"
#include "shale/rate_limiter.h"
#include "shale/slice.h"
#include "shale/slice_transform.h"

namespace shale {

class Cache;
class FileSystem;
class MergeOperator;
class Snapshot;
class Statistics;

enum class CompressionType : unsigned char {
  kNoCompression = 0x0,
  kZSTD = 0x7,  // RocksDB's byte for zstd, so files and flags read the same
};

// Which file of a level (>= 1) over its target a compaction takes down (RocksDB's values).
enum class CompactionPri : unsigned char {
  // The file whose overlapping bytes in the next level, over its own size, are the fewest: the
  // least rewriting per byte moved down (a file overlapping nothing moves down unchanged).
  kMinOverlappingRatio = 3,
  // The next file after the last one taken (by key, wrapping around): each key range in turn.
  kRoundRobin = 4,
};

// What Open does with a damaged write-ahead log (docs/reliability.md).
enum class WALRecoveryMode : unsigned char {
  // An incomplete or zeroed last record is dropped; corruption before it fails Open. (A live
  // log keeps zeros written ahead of its records; after a crash they are its zeroed tail. A
  // damaged last record whose bytes end in zeros from a 512-byte boundary inside it, or whose
  // checksum is still zero with only zeros after it, counts as incomplete.)
  kTolerateCorruptedTailRecords = 0,
  // Any corruption fails Open, a zeroed or incomplete tail too. Logs in this mode only append
  // (no zeros ahead), so a sync also commits the log's new size: synced writes are slower.
  kAbsoluteConsistency = 1,
  // Replay stops at the first corruption, leaving a consistent prefix of the history.
  kPointInTimeRecovery = 2,
};

// Options of the DB as a whole: opening and recovery, the WAL and write queue, background
// threads, files and IO, shared services.
struct DBOptions {
  // ---- Opening ----
  bool create_if_missing = false;
  bool error_if_exists = false;
  // DB::Open with column family descriptors creates the families it names that the DB does
  // not hold (otherwise the open fails naming them).
  bool create_missing_column_families = false;
  // Verify more on open and fail on any inconsistency instead of skipping it.
  bool paranoid_checks = true;
  WALRecoveryMode wal_recovery_mode = WALRecoveryMode::kTolerateCorruptedTailRecords;
  // Recovered WAL data stays in the memtable instead of being flushed at Open.
  bool avoid_flush_during_recovery = false;

  // ---- Shared services (null: a default is made) ----
  std::shared_ptr<FileSystem> file_system;  // default FileSystem::Default()
  std::shared_ptr<Statistics> statistics;   // null: nothing recorded
  // Paces flush writes (at kHigh) and compaction writes (at kLow) — or, by its mode, the blocks
  // compactions read — to its rate (null: unlimited). See shale/rate_limiter.h.
  std::shared_ptr<RateLimiter> rate_limiter;

  // ---- Info log (shale/logger.h; docs/info-log.md) ----
  // Where the DB says what it does: open and recovery, its options, flushes, compactions,
  // deleted files, write stalls, background errors. Null: Open writes the file LOG (in
  // db_log_dir if set, else in the DB directory) at info_log_level, after setting the previous
  // one aside as LOG.old.<micros>; a LOG that cannot be created leaves the DB without one.
  std::shared_ptr<Logger> info_log;
  InfoLogLevel info_log_level = INFO_LEVEL;  // below NUM_INFO_LOG_LEVELS
  std::string db_log_dir;                    // empty: the DB directory
  // The LOG is set aside and started again once it holds this many bytes (0: only at Open).
  uint64_t max_log_file_size = 0;
  // The LOG is also set aside and started again at the first message once it is this many
  // seconds old (0: never by age).
  uint64_t log_file_time_to_roll = 0;
  // LOG files kept, the live one included; the oldest old ones are deleted. >= 1.
  uint64_t keep_log_file_num = 1000;
  // Every this many seconds the DB writes each column family's shale.stats property (levels,
  // compaction bytes, stalls; the DB's own tickers) to the info log. 0: never.
  unsigned int stats_dump_period_sec = 600;

  // ---- Write path ----
  // A write group stops taking batches past this many bytes. > 0.
  size_t max_write_batch_group_size_bytes = 1 << 20;
  // A writer queued behind a write group's leader re-reads the group's progress for up to
  // write_thread_max_yield_usec before it sleeps (not while the group syncs its WAL or stalls):
  // it then usually returns without a context switch. Two writer threads of 1 KB values ran
  // 8-46 % faster with it in six alternating pairs (docs/benchmarks.md). With more writer
  // threads than CPUs the spinning takes CPU time the leader could use: such writers gain
  // throughput but wait longer in the tail (P99, P99.9); turn it off there if the tail matters
  // more. A leader alone in the queue right after a group of several writers also spins, for
  // a fifth of write_thread_max_yield_usec, for the next writer to join its group.
  // write_thread_max_yield_usec <= 1,000,000.
  bool enable_write_thread_adaptive_yield = true;
  uint64_t write_thread_max_yield_usec = 20;
  // A write group's memtable insert overlaps the next group's WAL write: once a group's leader
  // has written the WAL record, the next writer queued leads the next group while this one
  // inserts. Groups still become visible to readers, and their writers return, in the order
  // they were written to the WAL. A memtable switch and every write that must stop all others
  // (Flush, SyncWAL, column family changes) first wait for the groups inserting. Two threads
  // writing 1 KB values ran 0.84-0.97x as fast with it as without (docs/benchmarks.md).
  bool enable_pipelined_write = false;
  // The write rate while writes are slowed down (ColumnFamilyOptions' stall triggers). > 0.
  uint64_t delayed_write_rate = 16ull << 20;
  // With more than one column family: once the live WAL files hold more than this many bytes,
  // the next write switches the memtables of every family holding data from the oldest live
  // WAL, so that their flushes let it go (a lightly written family would otherwise keep every
  // WAL since its first unflushed write, and Open would replay them all). 0: four times the
  // sum over the families of write_buffer_size × max_write_buffer_number. With one family a
  // WAL goes once its memtable is flushed, and this does not apply.
  uint64_t max_total_wal_size = 0;

  // ---- Background work and files ----
  // Background threads: one more than the compactions that may run at once, so that one is
  // always free for a flush (one at a time, oldest memtable first; flushes go before
  // compactions). max_background_jobs in [1, 64] sets how many compactions may run at once, as
  // in RocksDB: max(1, jobs - max(1, jobs / 4)); max_background_compactions (in [1, 64]; -1:
  // derived from jobs) sets it directly. While compaction keeps up, one compaction runs at a
  // time; more start (on inputs and key ranges no running compaction touches) once it falls
  // behind: L0 holds min(2 × level0_file_num_compaction_trigger, trigger + (slowdown trigger -
  // trigger) / 4) files, or the pending compaction bytes reach min(soft limit / 4,
  // max(bytes of the last level / 8, 2 × max_bytes_for_level_base)).
  int max_background_jobs = 2;
  int max_background_compactions = -1;
  // Column families flush together: a memtable switch (a full memtable, or Flush of several
  // families) switches every family holding data (or every family named), and a flush writes
  // every immutable memtable of every family and records them in one MANIFEST record. The
  // families' tables then always hold the same prefix of the write history, which matters
  // for writes without the WAL (WriteOptions::disableWAL): after a crash a batch across
  // families is in all of them or in none.
  bool atomic_flush = false;
  // A compaction from L0 (or one CompactRange runs) is split into up to this many key ranges
  // of about equal input bytes, each at least target_file_size_base, compacted in parallel on
  // threads of their own. In [1, 64]; 1: none.
  uint32_t max_subcompactions = 1;
  // Table readers kept open, each with its index and filter blocks in memory: -1 keeps every
  // table open; otherwise max_open_files - 10 readers (10 are left for logs, the MANIFEST and
  // the like), and at least 20. >= 1.
  int max_open_files = -1;
  // The MANIFEST is rewritten as a fresh snapshot once it grows past this size.
  uint64_t max_manifest_file_size = 64ull << 20;

  // ---- IO ----
  bool use_direct_reads = false;
  // Table files (flush and compaction output) start the writeback of what they have written
  // each time this many bytes have gathered since the last start, instead of leaving it all
  // to the sync that ends the file: the device then sees a steady stream, and the final sync
  // (which a flush waits for while writers may be waiting on the flush) finds little left to
  // write. Not a durability point: a table is durable only once synced. 0: off (1 MiB is a
  // common setting).
  uint64_t bytes_per_sync = 0;
  // Open fails instead of falling back to synchronous reads when io_uring is unavailable.
  bool require_io_uring = false;
};

// Options of one keyspace: key order and merging, memtables, LSM shape and compaction
// triggers, table format and block cache.
struct ColumnFamilyOptions {
  // ---- Keys and values ----
  // Key order. Must outlive the DB. Default: BytewiseComparator().
  const Comparator* comparator = BytewiseComparator();
  std::shared_ptr<MergeOperator> merge_operator;  // null: Merge is InvalidArgument
  // Prefixes of keys (see shale/slice_transform.h; null: none). With one, table filters and
  // memtable filters also hold the prefix of every key in the extractor's domain, and an
  // iterator's Seek to a key with a prefix skips the memtables and files whose filter rules
  // that prefix out until iteration leaves it (ReadOptions::total_order_seek turns that
  // off; prefix_same_as_start stops there). The extractor must keep keys of one prefix
  // adjacent in the comparator's order (see slice_transform.h); then results never depend on
  // it: it only saves reads. Can change between opens; tables written with another one are
  // read without their prefix filter.
  std::shared_ptr<const SliceTransform> prefix_extractor;
  // Data blocks read from tables (null: a 32 MiB HyperClockCache whose table is sized for
  // entries of block_size, 4 KiB at least; see shale/cache.h). Each block is charged its slot
  // (blocks live in size-class slots of 2 MiB slabs) plus its Block object; resident memory
  // follows each size class's peak, since one slab per class in use is kept, plus up to
  // 256 KiB of freed slots each thread keeps for its next blocks (they keep their slabs
  // mapped until the thread exits). Index and filter
  // blocks are not in it: each open table reader holds its own (see max_open_files). Blocks
  // of deleted tables stay until evicted.
  std::shared_ptr<Cache> block_cache;

  // ---- Memtables ----
  // Bytes of memtable before it is switched for a new one and flushed. In [1, 64 GiB]. From
  // 128 MiB on, memtable memory is reserved in 2 MiB blocks advised as transparent huge pages
  // (Linux, when /sys/kernel/mm/transparent_hugepage/enabled allows madvise): walking a large
  // memtable then costs far fewer TLB misses. A family keeps the arena blocks of its flushed
  // memtables, up to write_buffer_size, for its next ones (reused rather than faulted in again;
  // "shale.memtable-block-pool-bytes" says how much) while its memtables fill: a memtable
  // switched before it is full (Flush, max_total_wal_size; not an atomic flush's partner), a
  // replayed one flushed at open short of full, and a Flush of a family with an empty memtable
  // give the blocks back to the system, until a memtable of the family fills again. The rest go
  // back when the family's last handle, SuperVersion and memtable are gone (after Close, or a
  // drop).
  size_t write_buffer_size = 64 << 20;
  // Memtables (mutable + immutable) kept before writes stall. >= 2. Memtable memory stays
  // under about max_write_buffer_number × (write_buffer_size + the largest write group).
  int max_write_buffer_number = 2;
  // Bytes of whole-key Bloom filter per byte of write buffer in each memtable (0: none). The
  // filter lets point lookups of keys a memtable does not hold skip its skiplist. In [0, 0.25].
  double memtable_bloom_size_ratio = 1.0 / 64;
  // A memtable holding this many range tombstones (DeleteRange) is switched and flushed as a
  // full one is, however few bytes it holds: readers then find the tombstones fragmented in a
  // table instead of re-fragmenting a long memtable list. 0: no limit.
  uint32_t memtable_max_range_deletions = 0;

  // ---- Iterators ----
  // An iterator moving forward that has stepped over this many entries of one key in a row
  // (older versions of a key it has passed or found deleted, or versions newer than its read)
  // seeks past the rest of them instead of stepping on; moving backward, past this many
  // entries of one key it seeks to the key's newest entry at its read and then before the key.
  // Each reseek (one per run forward, one per key backward) counts in
  // NUMBER_OF_RESEEKS_IN_ITERATION. Past this many keys in a row covered by range tombstones,
  // the sorted runs older than the covering tombstone move past its range at once, as they do
  // at once for a seek whose target a tombstone covers
  // (PerfContext::internal_range_del_reseek_count). After a prefix seek (whose filters
  // left files out that a seek would read), every entry is walked. Can change between opens.
  uint64_t max_sequential_skip_in_iterations = 8;

  // ---- LSM shape ----
  int num_levels = 7;  // in [2, 64]
  // 1 <= compaction trigger <= slowdown trigger <= stop trigger.
  int level0_file_num_compaction_trigger = 4;
  int level0_slowdown_writes_trigger = 20;
  int level0_stop_writes_trigger = 36;
  // Writes slow down to DBOptions::delayed_write_rate bytes per second while compaction is
  // behind: while L0 holds level0_slowdown_writes_trigger files or more, or while the bytes
  // compaction is estimated to rewrite before every level is under its target
  // (shale.estimate-pending-compaction-bytes) reach soft_pending_compaction_bytes_limit. Writes
  // stop while that estimate reaches hard_pending_compaction_bytes_limit. 0 turns a limit off;
  // hard >= soft when both are on. With disable_auto_compactions no limit or trigger applies.
  uint64_t soft_pending_compaction_bytes_limit = 64ull << 30;
  uint64_t hard_pending_compaction_bytes_limit = 256ull << 30;
  // The size compaction outputs are cut at (> 0). Above the last level an output is cut early
  // where it meets a boundary of the level below's files, from half this size on, and may run
  // on to twice this size to reach one.
  uint64_t target_file_size_base = 64ull << 20;
  uint64_t max_bytes_for_level_base = 256ull << 20;  // > 0
  double max_bytes_for_level_multiplier = 10;        // >= 1
  // Size the levels from the bottom, as RocksDB's option of that name: the last level's target
  // is the size of the largest level, each level above a multiplier smaller, and L0 compacts
  // into the deepest level whose target is at most max_bytes_for_level_base (levels above it
  // stay empty, and any data in them drains down). Most data then sits in the last level, and
  // space overhead stays near 1 / multiplier. false: L1 is max_bytes_for_level_base and each
  // deeper level a multiplier larger. Can change between opens of a DB; a large DB that switches
  // to dynamic sizing has upper levels to drain, which counts as pending compaction bytes (writes
  // may slow down until it is done). CompactRange compacts down into the last level. On by
  // default, as in RocksDB (db_bench's flag stays off by default, as RocksDB's db_bench's).
  bool level_compaction_dynamic_level_bytes = true;
  CompactionPri compaction_pri = CompactionPri::kMinOverlappingRatio;
  // No compactions are scheduled automatically (CompactRange still works), and the L0
  // slowdown and stop triggers do not apply: nothing would bring L0 down.
  bool disable_auto_compactions = false;
  // Read-triggered compaction of L0 (after LevelDB's seek compaction and Pebble's read
  // compaction): an iterator seek landing on a key that an L0 file and another sorted run (an
  // older L0 file, a deeper level) both hold charges the newest such L0 file; iterators sample
  // one seek in 16 and charge it 16. Once an L0 file has been charged max(100, its size /
  // read_compaction_bytes_per_seek) seeks, L0 is compacted into the level L0 compacts to (the
  // base level) as if it had reached its trigger, when the picker finds no compaction by level
  // sizes to run and the family has no memtable waiting for flush — unless that would rewrite
  // more than 10 × target_file_size_base, or 35 times L0's bytes, of that level. A DB read after
  // a load then stops paying, seek after seek, for the L0 files the load happened to leave.
  // Point lookups charge nothing (their filters skip files that cannot hold the key). Counted
  // in COMPACT_READ_TRIGGERED. 0 (or disable_auto_compactions): off. Can change between opens.
  uint64_t read_compaction_bytes_per_seek = 16384;

  // ---- Table format ----
  CompressionType compression = CompressionType::kNoCompression;
  size_t block_size = 4096;         // in [1, 1 GiB]
  int block_restart_interval = 16;  // >= 1
  double bloom_bits_per_key = 10;   // in [0, 100]; 0: no filter
  // Table filters hold whole keys (for Get and MultiGet). false: only the prefixes of keys,
  // with a prefix_extractor: point lookups then check the prefix of the key instead, and the
  // filter is smaller when many keys share a prefix.
  bool whole_key_filtering = true;
  // The format new tables are written in: 3 (the default) keeps a smaller index, whose keys
  // are user keys when no key's versions span two data blocks; 1 writes tables that shale
  // releases before format 3 can read (2 is not a choice: it is format 1 with range
  // deletions, chosen per table). Every release reads tables of all formats it knows, so a DB
  // may hold both; a compaction writes its outputs in the current format, but a table moved to
  // another level without being rewritten keeps its own.
  uint32_t format_version = 3;  // 1 or 3
};

// Both sets: what DB::Open takes.
struct Options : public DBOptions, public ColumnFamilyOptions {
  Options() = default;
  Options(const DBOptions& db_options, const ColumnFamilyOptions& cf_options)
      : DBOptions(db_options), ColumnFamilyOptions(cf_options) {}
};

struct ReadOptions {
  // Read as of this snapshot (from this DB's GetSnapshot); null: the latest state.
  const Snapshot* snapshot = nullptr;
  bool verify_checksums = true;
  // Blocks read from files are added to the block cache.
  bool fill_cache = true;
  // MultiGet reads blocks with io_uring from coroutines, and an iterator's seek (also a prefix
  // seek) reads the data blocks it needs from the table files it lands in (level-0 files and
  // one file per level) together rather than one after another (both fall back to synchronous
  // reads).
  bool async_io = true;
  // Iterators read table files this many bytes at a time instead of block by block. 0 (the
  // default): automatic, as RocksDB's iterators: after 2 blocks read in file order, reads of
  // 8 KiB doubling up to 256 KiB while the scan stays sequential. Compaction reads its inputs
  // with 2 MiB.
  size_t readahead_size = 0;
  // Blocks read from table files pass the DB's rate limiter at this priority when its mode
  // limits reads (kTotal: never). Compactions read at kLow.
  IOPriority rate_limiter_priority = IOPriority::kTotal;
  // Iterators show only user keys >= *iterate_lower_bound and < *iterate_upper_bound (null: no
  // bound on that side), in both directions: a Seek below the lower bound lands on it, a
  // SeekForPrev at or above the upper bound on the last key below it, and stepping past a
  // bound makes the iterator invalid. The slices must stay alive and unchanged while an
  // iterator made with them is used. A bounded iterator opens no table file whose keys all lie
  // outside the bounds, and does not read a table's next (or previous) data block once the
  // index shows its keys are all at or past the bound. A lower bound above the upper bound is
  // InvalidArgument (the iterator's status); equal bounds make an empty iterator. Point reads
  // (Get, MultiGet) ignore both.
  const Slice* iterate_lower_bound = nullptr;
  const Slice* iterate_upper_bound = nullptr;
  // With a prefix_extractor: an iterator's Seek to a key in the extractor's domain shows only
  // keys with the prefix of that key (forward and backward, until the next seek); the iterator
  // becomes invalid past them. SeekForPrev likewise. The prefix is the seek key's even when a
  // bound moves the seek (a Seek below iterate_lower_bound, a SeekForPrev at or above
  // iterate_upper_bound). Seeks to keys without a prefix, and SeekToFirst / SeekToLast, are
  // not limited.
  bool prefix_same_as_start = false;
  // With a prefix_extractor: seeks use no prefix filter (every memtable and file is sought).
  // Results are the same either way; this only trades the filter checks for reads.
  bool total_order_seek = false;
};

struct WriteOptions {
  // Return only once the write is durable (WAL fsynced).
  bool sync = false;
  // Skip the WAL: the write is lost on a crash before its memtable is flushed to a table.
  // Cannot be combined with sync.
  bool disableWAL = false;
};

struct FlushOptions {
  bool wait = true;
};

// What CompactRange does with the last level it compacts into (its files in the range are not
// otherwise rewritten: a compaction into that level rewrites only those of them that overlap
// its inputs).
enum class BottommostLevelCompaction {
  kSkip,                    // leave them as they are
  kIfHaveCompactionFilter,  // as kSkip: shale has no compaction filters
  kForce,                   // rewrite every one of them in the range, dropping what no reader
                            // can see (hidden versions, deletions with nothing below)
  kForceOptimized,          // as kForce, but not the files this call already wrote
};

struct CompactRangeOptions {
  BottommostLevelCompaction bottommost_level_compaction =
      BottommostLevelCompaction::kIfHaveCompactionFilter;
  // Each compaction of the call is split into up to this many subcompactions; 0: the DB's
  // max_subcompactions. In [0, 64].
  uint32_t max_subcompactions = 0;
};

}  // namespace shale
