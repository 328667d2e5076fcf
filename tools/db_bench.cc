// db_bench: shale's benchmark driver, flag- and output-compatible with RocksDB's db_bench.
//
//   db_bench -benchmarks=fillrandom,readrandom -num=1000000 -value_size=100 -histogram=1
//
// Each benchmark in -benchmarks runs in turn on -threads threads; every thread performs -num
// operations (-writes / -reads when set) and the result line sums them, in RocksDB's format:
//   fillrandom   :       2.310 micros/op 432176 ops/sec 2.314 seconds 1000000 operations;   47.8
//   MB/s
// micros/op is the mean per-thread latency, ops/sec the total over the wall time.
//
// Keys are -key_size bytes: the key number as 8 big-endian bytes, padded with '0' (as RocksDB's
// db_bench makes them, so both engines see the same key set). Values are -value_size bytes cut
// from a buffer of data that compresses to half its size.
//
// readwhilewriting runs -threads readers and one more thread writing random keys (at
// -benchmark_write_rate_limit bytes/s when set) until the readers finish; the line reports the
// readers only, as RocksDB's does. readrandomwriterandom mixes -readwritepercent reads with writes
// on every thread. seekrandom seeks to random keys and steps -seek_nexts entries on (bounded by
// -max_scan_distance when set); seekrandomwhilewriting does so with a writer as readwhilewriting.
// -perf_level=2 (counts) or 3..5 (and timings) prints each benchmark's PerfContext, summed over
// its threads, after its result line.
//
// Unlike RocksDB's, unknown flags, malformed values and stray arguments exit with status 2, and
// the seed is always printed so any run can be replayed with -seed.
#include <fmt/format.h>
#include <gflags/gflags.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/perf_context.h"
#include "shale/statistics.h"
#include "src/util/histogram.h"
#include "src/util/random.h"
#include "tools/tool_flags.h"

DEFINE_string(benchmarks, "fillseq,fillrandom,overwrite,readrandom,readseq",
              "Comma-separated list of benchmarks to run in order: fillseq, fillrandom, "
              "filluniquerandom, overwrite, fillsync, deleteseq, deleterandom, mergerandom, "
              "readrandom, multireadrandom, readrandomoperands, seekrandom, readwhilewriting, "
              "seekrandomwhilewriting, readrandomwriterandom, readseq, readreverse, flush, "
              "compact, waitforcompaction, levelstats, stats");
DEFINE_string(db, "", "Directory of the DB (default: $TMPDIR/shaledb_bench)");
DEFINE_int64(num, 1000000, "Number of key/values per thread (and the key space)");
DEFINE_int64(reads, -1, "Reads per thread (-1: num)");
DEFINE_int64(writes, -1, "Writes per thread (-1: num)");
DEFINE_int64(deletes, -1, "deleteseq, deleterandom: deletes per thread (-1: num)");
DEFINE_int32(key_size, 16, "Key size in bytes");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_int32(threads, 1, "Threads per benchmark");
DEFINE_bool(sync, false, "Sync every write");
DEFINE_bool(disable_wal, false, "Write without the WAL");
DEFINE_bool(histogram, false, "Print a latency histogram per benchmark");
DEFINE_bool(use_existing_db, false, "Open the existing DB instead of starting fresh");
DEFINE_uint64(seed, 0, "Random seed (0: derived from the clock; printed either way)");
DEFINE_int64(write_buffer_size, 64 << 20, "Memtable size in bytes");
DEFINE_int32(max_write_buffer_number, 2, "Memtables before writes stall");
DEFINE_uint64(max_total_wal_size, 0,
              "With several column families: live WAL bytes past which the families holding "
              "the oldest WAL flush (0: 4 x the memtables' total)");
DEFINE_double(memtable_bloom_size_ratio, shale::Options().memtable_bloom_size_ratio,
              "Bytes of memtable Bloom filter per write buffer byte (0: none)");
DEFINE_bool(enable_write_thread_adaptive_yield, shale::Options().enable_write_thread_adaptive_yield,
            "Writers queued behind a group leader spin briefly before they sleep");
DEFINE_uint64(max_sequential_skip_in_iterations, shale::Options().max_sequential_skip_in_iterations,
              "Iterators seek past a run of versions of one key longer than this");
DEFINE_uint64(bytes_per_sync, shale::Options().bytes_per_sync,
              "Table files start writeback every this many bytes (0: at their sync only)");
DEFINE_uint64(write_thread_max_yield_usec, shale::Options().write_thread_max_yield_usec,
              "How long a queued writer spins before it sleeps");
DEFINE_bool(enable_pipelined_write, shale::Options().enable_pipelined_write,
            "A write group's memtable insert overlaps the next group's WAL write");
DEFINE_bool(statistics, false, "Collect and print DB statistics");
DEFINE_int64(batch_size, 1, "Writes per WriteBatch; keys per MultiGet in multireadrandom");
DEFINE_bool(multiread_batched, false, "multireadrandom: use the batched MultiGet (always)");
DEFINE_int64(multiread_stride, 0, "multireadrandom: key stride within a batch (0: random keys)");
DEFINE_bool(async_io, true,
            "MultiGet reads missing blocks with io_uring from coroutines; seekrandom's seeks read "
            "the blocks of all sorted runs together");
DEFINE_bool(use_direct_reads, false, "Read table files with O_DIRECT");
DEFINE_string(compression_type, "none", "Block compression: none or zstd");
DEFINE_int64(block_size, 4096, "Table block size in bytes");
DEFINE_int32(block_restart_interval, shale::Options().block_restart_interval,
             "Keys between restart points (full keys) in a data block");
DEFINE_int32(bloom_bits, 10, "Bloom filter bits per key (0: none)");
DEFINE_int32(format_version, static_cast<int32_t>(shale::Options().format_version),
             "Table format of new tables: 3 (compact index) or 1");
DEFINE_int64(cache_size, 32 << 20, "Block cache size in bytes");
DEFINE_string(cache_type, "hyper_clock_cache",
              "Block cache: hyper_clock_cache (also auto_ or fixed_hyper_clock_cache: a CLOCK "
              "cache whose table is sized for entries of -block_size) or lru_cache");
DEFINE_int32(cache_numshardbits, -1, "Block cache shards: 2^bits (-1: chosen from -cache_size)");
DEFINE_int32(max_background_jobs, 2, "Background flush and compaction threads");
DEFINE_int32(max_background_compactions, -1,
             "Compactions that may run at once (-1: from max_background_jobs)");
DEFINE_int32(subcompactions, 1, "Parts an L0 or manual compaction is split into, run in parallel");
DEFINE_int64(rate_limiter_bytes_per_sec, 0, "Flush and compaction write rate (0: unlimited)");
DEFINE_int64(rate_limiter_refill_period_us, 100 * 1000, "Rate limiter refill period");
DEFINE_bool(rate_limit_bg_reads, false, "The rate limiter also paces compaction reads");
DEFINE_int32(num_levels, 7, "Levels of the LSM tree");
DEFINE_int32(level0_file_num_compaction_trigger, 4, "L0 files that start a compaction");
DEFINE_int32(level0_slowdown_writes_trigger, 20, "L0 files that slow writes down");
DEFINE_int32(level0_stop_writes_trigger, 36, "L0 files that stop writes");
DEFINE_uint64(target_file_size_base, 64ull << 20, "Compaction output file size in bytes");
DEFINE_uint64(max_bytes_for_level_base, 256ull << 20, "Target size of L1 in bytes");
DEFINE_double(max_bytes_for_level_multiplier, 10, "Size ratio between adjacent levels");
DEFINE_bool(level_compaction_dynamic_level_bytes, false,
            "Size levels from the bottom (L0 compacts into the base level)");
DEFINE_int32(compaction_pri, 3,
             "Which file of a level a compaction takes: 3 min overlapping "
             "ratio, 4 round robin");
DEFINE_uint64(soft_pending_compaction_bytes_limit, 64ull << 30,
              "Estimated pending compaction bytes that slow writes down (0: off)");
DEFINE_uint64(hard_pending_compaction_bytes_limit, 256ull << 30,
              "Estimated pending compaction bytes that stop writes (0: off)");
DEFINE_uint64(delayed_write_rate, 16ull << 20, "Bytes per second of slowed-down writes");
DEFINE_bool(disable_auto_compactions, false, "Do not schedule compactions automatically");
DEFINE_uint64(read_compaction_bytes_per_seek,
              shale::ColumnFamilyOptions().read_compaction_bytes_per_seek,
              "Seeks that find a file overlapping other sorted runs compact it after its size "
              "over this many seeks (at least 100); 0: no read-triggered compactions");
DEFINE_bool(avoid_flush_during_recovery, false, "Keep recovered WAL data in the memtable");
DEFINE_int32(open_files, -1, "Table files kept open (-1: unbounded)");
DEFINE_string(merge_operator, "", "Merge operator by name (StringAppendOperator, uint64add)");
DEFINE_int32(num_column_families, 1,
             "Column families: the default one and column_family_name_000001 ...; key k goes to "
             "family k % N for writes and point reads (Get, GetMergeOperands), as RocksDB's "
             "db_bench does; scans, seeks and MultiGet read the default family");
DEFINE_int32(duration, 0, "Seconds a benchmark may run (0: until its operations are done)");
DEFINE_string(report_json, "", "Write every result with percentiles to this JSON file");
DEFINE_int64(entries_per_batch, 0, "Writes per WriteBatch (0: -batch_size)");
DEFINE_int32(seek_nexts, 0, "seekrandom: Next() calls after each Seek");
DEFINE_int64(max_scan_distance, 0,
             "seekrandom: iterate_upper_bound this many keys past the seek key (with "
             "-reverse_iterator: iterate_lower_bound that many before it); 0: unbounded");
DEFINE_bool(reverse_iterator, false, "seekrandom: step with Prev() instead of Next()");
DEFINE_int32(prefix_size, 0,
             "prefix_extractor: a fixed prefix of this many bytes (0: none); with "
             "-keys_per_prefix, the key layout's prefix part");
DEFINE_int64(keys_per_prefix, 0,
             "Keys share -prefix_size byte prefixes, about this many per prefix: key k has "
             "prefix k % (num / keys_per_prefix), as RocksDB's db_bench (0: the key number only)");
DEFINE_bool(total_order_seek, false, "seekrandom: ReadOptions::total_order_seek");
DEFINE_bool(prefix_same_as_start, false, "seekrandom: ReadOptions::prefix_same_as_start");
DEFINE_bool(whole_key_filtering, true, "Table filters hold whole keys (else prefixes only)");
DEFINE_int64(
    writes_before_delete_range, 0,
    "Writes (per thread) before the range tombstones of -writes_per_range_tombstone start");
DEFINE_int64(writes_per_range_tombstone, 0,
             "Write benchmarks: a DeleteRange of -range_tombstone_width keys from a random one "
             "after every this many writes, in the same batch (0: none)");
DEFINE_int64(range_tombstone_width, 100, "Keys in each range tombstone's range");
DEFINE_int64(max_num_range_tombstones, 0, "The most range tombstones a thread writes");
DEFINE_bool(expand_range_tombstones, false,
            "Write each range tombstone as a Delete of every key in its range instead");
DEFINE_int32(readwritepercent, 90, "readrandomwriterandom: percentage of operations that read");
DEFINE_uint64(benchmark_write_rate_limit, 0,
              "readwhilewriting: the writer's rate in bytes/s (0: unlimited)");
DEFINE_int32(perf_level, 1,
             "PerfContext level: 1 off, 2 counts, 3..5 counts and timings (printed per benchmark)");
DEFINE_bool(progress, true, "Print '... finished N ops' progress on stderr");

namespace shale::bench {
namespace {

using Clock = std::chrono::steady_clock;

double NowSeconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

void CheckFlagRanges() {
  auto fail = [](const char* msg) {
    std::fprintf(stderr, "db_bench: %s\n", msg);
    std::exit(2);
  };
  if (FLAGS_num < 0) fail("-num must be >= 0");
  if (FLAGS_key_size < 1 || FLAGS_key_size > (1 << 20)) fail("-key_size must be in [1, 1 MiB]");
  if (FLAGS_value_size < 0 || FLAGS_value_size > (64 << 20)) {
    fail("-value_size must be in [0, 64 MiB]");
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 1024) fail("-threads must be in [1, 1024]");
  if (FLAGS_batch_size < 1) fail("-batch_size must be >= 1");
  if (FLAGS_entries_per_batch < 0) fail("-entries_per_batch must be >= 0");
  if (FLAGS_seek_nexts < 0) fail("-seek_nexts must be >= 0");
  if (FLAGS_max_scan_distance < 0) fail("-max_scan_distance must be >= 0");
  if (FLAGS_prefix_size < 0 || FLAGS_prefix_size > FLAGS_key_size) {
    fail("-prefix_size must be in [0, -key_size]");
  }
  if (FLAGS_keys_per_prefix < 0) fail("-keys_per_prefix must be >= 0");
  if (FLAGS_keys_per_prefix > 0 && FLAGS_prefix_size == 0) {
    fail("-keys_per_prefix needs -prefix_size");
  }
  if (FLAGS_writes_before_delete_range < 0) fail("-writes_before_delete_range must be >= 0");
  if (FLAGS_writes_per_range_tombstone < 0) fail("-writes_per_range_tombstone must be >= 0");
  if (FLAGS_range_tombstone_width < 1) fail("-range_tombstone_width must be >= 1");
  if (FLAGS_max_num_range_tombstones < 0) fail("-max_num_range_tombstones must be >= 0");
  if (FLAGS_readwritepercent < 0 || FLAGS_readwritepercent > 100) {
    fail("-readwritepercent must be in [0, 100]");
  }
  if (FLAGS_perf_level < 0 || FLAGS_perf_level > 5) fail("-perf_level must be in [0, 5]");
  if (FLAGS_duration < 0) fail("-duration must be >= 0");
  if (!FLAGS_merge_operator.empty() &&
      shale::MergeOperators::CreateFromName(FLAGS_merge_operator) == nullptr) {
    fail("-merge_operator must be StringAppendOperator or uint64add");
  }
  if (FLAGS_compression_type != "none" && FLAGS_compression_type != "zstd") {
    fail("-compression_type must be none or zstd");
  }
  if (FLAGS_cache_type != "lru_cache" && FLAGS_cache_type != "hyper_clock_cache" &&
      FLAGS_cache_type != "auto_hyper_clock_cache" &&
      FLAGS_cache_type != "fixed_hyper_clock_cache") {
    fail(
        "-cache_type must be hyper_clock_cache, auto_hyper_clock_cache, "
        "fixed_hyper_clock_cache or lru_cache");
  }
  if (FLAGS_cache_numshardbits < -1 || FLAGS_cache_numshardbits > 20) {
    fail("-cache_numshardbits must be in [-1, 20]");
  }
  if (FLAGS_cache_size < 0) fail("-cache_size must be >= 0");
}

// Key number → key bytes, as RocksDB's db_bench makes them. Without keys_per_prefix: 8
// big-endian bytes (fewer if key_size < 8), then '0' padding. With it: first a prefix_size-byte
// prefix, v % (num / keys_per_prefix) as up to 8 big-endian bytes ('0' padded), then the key
// number as above in what is left.
class KeyFormat {
 public:
  KeyFormat(int key_size, int prefix_size, int64_t keys_per_prefix, int64_t num)
      : key_size_(key_size),
        prefix_size_(keys_per_prefix > 0 ? prefix_size : 0),
        num_prefixes_(keys_per_prefix > 0 ? std::max<int64_t>(1, num / keys_per_prefix) : 0) {}
  void Make(uint64_t v, std::string* key) const {
    key->resize(key_size_);
    char* p = key->data();
    if (prefix_size_ > 0) {
      PutBigEndian(v % static_cast<uint64_t>(num_prefixes_), prefix_size_, p);
      p += prefix_size_;
    }
    PutBigEndian(v, key_size_ - prefix_size_, p);
  }

 private:
  // v's low min(size, 8) bytes, big-endian, then '0' up to size.
  static void PutBigEndian(uint64_t v, int size, char* p) {
    const int fill = std::min(size, 8);
    for (int i = 0; i < fill; i++) p[i] = static_cast<char>((v >> ((fill - i - 1) * 8)) & 0xff);
    if (size > fill) std::memset(p + fill, '0', size - fill);
  }

  const int key_size_;
  const int prefix_size_;
  const int64_t num_prefixes_;
};

// Values cut from a 1 MiB buffer whose pieces compress to half their size.
class ValueSource {
 public:
  explicit ValueSource(uint64_t seed) {
    Random rnd(seed);
    const size_t want = (1 << 20) + static_cast<size_t>(FLAGS_value_size);
    data_.reserve(want + 100);  // one allocation: each thread makes its buffer while timed
    while (data_.size() < want) {
      std::string piece = rnd.RandomString(50);
      data_ += piece;
      data_ += piece;
    }
  }
  Slice Next(size_t len) {
    if (pos_ + len > data_.size()) pos_ = 0;
    Slice s(data_.data() + pos_, len);
    pos_ += len;
    return s;
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// What one thread measured; merged into the benchmark's result.
struct ThreadStats {
  uint64_t ops = 0;
  uint64_t bytes = 0;
  uint64_t found = 0;
  double start = 0;
  double finish = 0;
  uint64_t reads = 0;  // readrandomwriterandom's split
  uint64_t writes = 0;
  Histogram latency_us;
  PerfContext perf;
  uint64_t next_report = 100;

  void FinishedOps(uint64_t n, double op_start, bool track) {
    ops += n;
    if (track) latency_us.Add(static_cast<uint64_t>((NowSeconds() - op_start) * 1e6));
  }
};

struct Result {
  std::string name;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  uint64_t found = 0;
  uint64_t reads = 0;  // for "(found of reads found)"
  uint64_t writes = 0;
  bool is_read = false;
  bool mixed = false;  // readrandomwriterandom: "( reads:R writes:W total:T found:F)"
  double elapsed = 0;
  double thread_seconds = 0;
  Histogram latency_us;
  PerfContext perf;
};

// Every benchmark RunOne knows.
constexpr std::string_view kBenchmarkNames[] = {"fillseq",
                                                "fillrandom",
                                                "filluniquerandom",
                                                "fillsync",
                                                "overwrite",
                                                "deleteseq",
                                                "deleterandom",
                                                "mergerandom",
                                                "readrandomoperands",
                                                "readrandom",
                                                "multireadrandom",
                                                "seekrandom",
                                                "readwhilewriting",
                                                "seekrandomwhilewriting",
                                                "readrandomwriterandom",
                                                "readseq",
                                                "readreverse",
                                                "flush",
                                                "compact",
                                                "waitforcompaction",
                                                "levelstats",
                                                "stats"};

class Benchmark {
 public:
  explicit Benchmark(uint64_t seed)
      : seed_(seed), keys_(FLAGS_key_size, FLAGS_prefix_size, FLAGS_keys_per_prefix, FLAGS_num) {}

  int Run() {
    std::vector<std::string> names;
    size_t start = 0;
    const std::string& list = FLAGS_benchmarks;
    while (start <= list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      std::string name = list.substr(start, end - start);
      start = end + 1;
      if (name.empty()) continue;
      // Every name is checked before the first runs: a typo later in the list must not cost
      // the run of those before it.
      if (std::find(std::begin(kBenchmarkNames), std::end(kBenchmarkNames), name) ==
          std::end(kBenchmarkNames)) {
        std::fprintf(stderr, "db_bench: unknown benchmark '%s'\n", name.c_str());
        return 2;
      }
      names.push_back(std::move(name));
    }
    PrintHeader();
    std::vector<Result> results;
    for (const std::string& name : names) {
      int rc = RunOne(name, &results);
      if (rc != 0) return rc;
    }
    if (FLAGS_statistics && options_.statistics) {
      std::printf("STATISTICS:\n%s", options_.statistics->ToString().c_str());
    }
    if (!FLAGS_report_json.empty()) WriteJson(results);
    if (db_) {
      families_.clear();
      Status s = db_->Close();
      if (!s.ok()) std::fprintf(stderr, "close: %s\n", s.ToString().c_str());
    }
    return 0;
  }

 private:
  enum class Op {
    kFillSeq,
    kFillRandom,
    kFillUniqueRandom,
    kOverwrite,
    kDeleteSeq,
    kDeleteRandom,
    kMergeRandom,
    kReadRandom,
    kReadRandomOperands,
    kMultiReadRandom,
    kReadSeq,
    kReadReverse,
    kSeekRandom,
    kReadWhileWriting,
    kSeekRandomWhileWriting,
    kReadRandomWriteRandom
  };

  void PrintHeader() {
    std::printf("shale:      version 0.1.0\n");
    std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof(date), "%a %b %d %H:%M:%S %Y", std::localtime(&now));
    std::printf("Date:       %s\n", date);
    std::printf("CPU:        %u * %s\n", std::thread::hardware_concurrency(), CpuModel().c_str());
    std::printf("Seed:       %llu (replay with -seed=%llu)\n",
                static_cast<unsigned long long>(seed_), static_cast<unsigned long long>(seed_));
    std::printf("Keys:       %d bytes each\n", FLAGS_key_size);
    std::printf("Prefix:    %d bytes\n", FLAGS_prefix_size);
    std::printf("Keys per prefix:    %lld\n", static_cast<long long>(FLAGS_keys_per_prefix));
    std::printf("Values:     %d bytes each (%d bytes after compression)\n", FLAGS_value_size,
                FLAGS_value_size / 2);
    std::printf("Entries:    %lld\n", static_cast<long long>(FLAGS_num));
    const double raw = static_cast<double>(FLAGS_key_size + FLAGS_value_size) *
                       static_cast<double>(FLAGS_num) / 1048576.0;
    std::printf("RawSize:    %.1f MB (estimated)\n", raw);
    const double value_on_disk =
        FLAGS_compression_type == "none" ? FLAGS_value_size : FLAGS_value_size / 2.0;
    std::printf("FileSize:   %.1f MB (estimated)\n",
                (FLAGS_key_size + value_on_disk) * static_cast<double>(FLAGS_num) / 1048576.0);
    std::printf("Compression: %s\n", FLAGS_compression_type == "none" ? "NoCompression" : "ZSTD");
    std::printf("Memtablerep: SkipList\n");
    std::printf("------------------------------------------------\n");
    std::fflush(stdout);
  }

  // The block cache -cache_type names. shale's CLOCK cache has a fixed table, so every
  // hyper_clock_cache variant sizes it for entries of -block_size.
  static std::shared_ptr<Cache> NewBlockCache() {
    const size_t capacity = static_cast<size_t>(FLAGS_cache_size);
    if (FLAGS_cache_type == "lru_cache") return NewLRUCache(capacity, FLAGS_cache_numshardbits);
    return HyperClockCacheOptions(capacity, static_cast<size_t>(FLAGS_block_size),
                                  FLAGS_cache_numshardbits)
        .MakeSharedCache();
  }

  static std::string CpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) == 0) {
        size_t colon = line.find(':');
        if (colon != std::string::npos) return line.substr(colon + 2);
      }
    }
    return "unknown";
  }

  Options MakeOptions() {
    Options o;
    // An existing DB is opened, never created: a mistyped -db would otherwise measure an empty one.
    o.create_if_missing = !FLAGS_use_existing_db;
    o.write_buffer_size = static_cast<size_t>(FLAGS_write_buffer_size);
    o.max_write_buffer_number = FLAGS_max_write_buffer_number;
    o.max_total_wal_size = FLAGS_max_total_wal_size;
    o.compression =
        FLAGS_compression_type == "zstd" ? CompressionType::kZSTD : CompressionType::kNoCompression;
    o.block_size = static_cast<size_t>(FLAGS_block_size);
    o.block_restart_interval = FLAGS_block_restart_interval;
    o.bloom_bits_per_key = FLAGS_bloom_bits;
    o.format_version = static_cast<uint32_t>(FLAGS_format_version);
    o.whole_key_filtering = FLAGS_whole_key_filtering;
    if (FLAGS_prefix_size > 0) {
      o.prefix_extractor = NewFixedPrefixTransform(static_cast<size_t>(FLAGS_prefix_size));
    }
    o.max_background_jobs = FLAGS_max_background_jobs;
    o.max_background_compactions = FLAGS_max_background_compactions;
    o.max_subcompactions = static_cast<uint32_t>(std::max(FLAGS_subcompactions, 0));
    if (FLAGS_rate_limiter_bytes_per_sec > 0) {
      o.rate_limiter = NewGenericRateLimiter(
          FLAGS_rate_limiter_bytes_per_sec, FLAGS_rate_limiter_refill_period_us, 10,
          FLAGS_rate_limit_bg_reads ? RateLimiter::Mode::kAllIo : RateLimiter::Mode::kWritesOnly);
      if (o.rate_limiter == nullptr) {
        std::fprintf(stderr, "db_bench: invalid -rate_limiter_refill_period_us\n");
        std::exit(2);
      }
    }
    o.num_levels = FLAGS_num_levels;
    o.level0_file_num_compaction_trigger = FLAGS_level0_file_num_compaction_trigger;
    o.level0_slowdown_writes_trigger = FLAGS_level0_slowdown_writes_trigger;
    o.level0_stop_writes_trigger = FLAGS_level0_stop_writes_trigger;
    o.target_file_size_base = FLAGS_target_file_size_base;
    o.max_bytes_for_level_base = FLAGS_max_bytes_for_level_base;
    o.max_bytes_for_level_multiplier = FLAGS_max_bytes_for_level_multiplier;
    o.level_compaction_dynamic_level_bytes = FLAGS_level_compaction_dynamic_level_bytes;
    o.compaction_pri = static_cast<CompactionPri>(FLAGS_compaction_pri);
    o.soft_pending_compaction_bytes_limit = FLAGS_soft_pending_compaction_bytes_limit;
    o.hard_pending_compaction_bytes_limit = FLAGS_hard_pending_compaction_bytes_limit;
    o.delayed_write_rate = FLAGS_delayed_write_rate;
    o.disable_auto_compactions = FLAGS_disable_auto_compactions;
    o.read_compaction_bytes_per_seek = FLAGS_read_compaction_bytes_per_seek;
    o.avoid_flush_during_recovery = FLAGS_avoid_flush_during_recovery;
    o.use_direct_reads = FLAGS_use_direct_reads;
    o.memtable_bloom_size_ratio = FLAGS_memtable_bloom_size_ratio;
    o.enable_write_thread_adaptive_yield = FLAGS_enable_write_thread_adaptive_yield;
    o.write_thread_max_yield_usec = FLAGS_write_thread_max_yield_usec;
    o.enable_pipelined_write = FLAGS_enable_pipelined_write;
    o.bytes_per_sync = FLAGS_bytes_per_sync;
    o.max_sequential_skip_in_iterations = FLAGS_max_sequential_skip_in_iterations;
    // One block cache for the whole run, as RocksDB's db_bench does.
    if (!block_cache_) block_cache_ = NewBlockCache();
    o.block_cache = block_cache_;
    o.max_open_files = FLAGS_open_files;
    if (!FLAGS_merge_operator.empty()) {
      o.merge_operator = MergeOperators::CreateFromName(FLAGS_merge_operator);
    }
    if (FLAGS_statistics)
      o.statistics = options_.statistics ? options_.statistics : CreateDBStatistics();
    return o;
  }

  bool OpenDB(bool fresh) {
    if (db_) {
      families_.clear();
      Status s = db_->Close();
      db_.reset();
      if (!s.ok()) std::fprintf(stderr, "close: %s\n", s.ToString().c_str());
    }
    options_ = MakeOptions();
    if (fresh) {
      Status s = DestroyDB(FLAGS_db, options_);
      if (!s.ok()) {
        std::fprintf(stderr, "destroy %s: %s\n", FLAGS_db.c_str(), s.ToString().c_str());
        return false;
      }
    }
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(FLAGS_db).parent_path(), ec);
    Status s;
    if (FLAGS_num_column_families > 1) {
      // Named as RocksDB's db_bench names them; created when missing.
      std::vector<ColumnFamilyDescriptor> descriptors;
      for (int i = 0; i < FLAGS_num_column_families; i++) {
        descriptors.emplace_back(
            i == 0 ? kDefaultColumnFamilyName : fmt::format("column_family_name_{:06}", i),
            options_);
      }
      options_.create_missing_column_families = true;
      s = DB::Open(options_, FLAGS_db, descriptors, &families_, &db_);
    } else {
      s = DB::Open(options_, FLAGS_db, &db_);
    }
    if (!s.ok()) {
      std::fprintf(stderr, "open %s: %s\n", FLAGS_db.c_str(), s.ToString().c_str());
      if (FLAGS_use_existing_db && !std::filesystem::exists(FLAGS_db + "/CURRENT")) {
        std::fprintf(stderr, "-use_existing_db=true needs a shale DB at -db=%s\n",
                     FLAGS_db.c_str());
      }
      if (s.IsInvalidArgument()) std::exit(2);  // a flag value the options refuse: bad usage
      return false;
    }
    std::printf("DB path: [%s]\n", FLAGS_db.c_str());
    return true;
  }

  int RunOne(const std::string& name, std::vector<Result>* results) {
    Op op;
    bool fresh = false;
    bool is_read = false;
    bool sync = FLAGS_sync;
    if (name == "fillseq") {
      op = Op::kFillSeq;
      fresh = true;
    } else if (name == "fillrandom") {
      op = Op::kFillRandom;
      fresh = true;
    } else if (name == "filluniquerandom") {
      op = Op::kFillUniqueRandom;
      fresh = true;
    } else if (name == "fillsync") {
      // As in RocksDB's db_bench: num / 1000 writes, each synced.
      op = Op::kFillRandom;
      fresh = true;
      sync = true;
      writes_override_ = std::max<uint64_t>(1, static_cast<uint64_t>(FLAGS_num) / 1000);
    } else if (name == "overwrite") {
      op = Op::kOverwrite;
    } else if (name == "deleteseq") {
      op = Op::kDeleteSeq;
    } else if (name == "deleterandom") {
      op = Op::kDeleteRandom;
    } else if (name == "mergerandom") {
      op = Op::kMergeRandom;
      if (!FLAGS_merge_operator.empty() && !db_ && !FLAGS_use_existing_db) fresh = true;
      if (FLAGS_merge_operator.empty()) {
        std::fprintf(stderr, "db_bench: mergerandom needs -merge_operator\n");
        return 2;
      }
    } else if (name == "readrandomoperands") {
      op = Op::kReadRandomOperands;
      is_read = true;
    } else if (name == "readrandom") {
      op = Op::kReadRandom;
      is_read = true;
    } else if (name == "multireadrandom") {
      op = Op::kMultiReadRandom;
      is_read = true;
    } else if (name == "seekrandom") {
      op = Op::kSeekRandom;
      is_read = true;
    } else if (name == "readwhilewriting") {
      op = Op::kReadWhileWriting;
      is_read = true;
    } else if (name == "seekrandomwhilewriting") {
      op = Op::kSeekRandomWhileWriting;
      is_read = true;
    } else if (name == "readrandomwriterandom") {
      op = Op::kReadRandomWriteRandom;
    } else if (name == "readseq") {
      op = Op::kReadSeq;
      is_read = true;
    } else if (name == "readreverse") {
      op = Op::kReadReverse;
      is_read = true;
    } else if (name == "flush" || name == "compact" || name == "waitforcompaction") {
      if (!db_ && !OpenDB(false)) return 1;
      const double start = NowSeconds();
      // compact: the whole key range, the last level rewritten once (as RocksDB's db_bench).
      CompactRangeOptions cro;
      cro.bottommost_level_compaction = BottommostLevelCompaction::kForceOptimized;
      Status st = name == "flush"     ? db_->Flush(FlushOptions())
                  : name == "compact" ? db_->CompactRange(cro, nullptr, nullptr)
                                      : db_->WaitForCompact();
      if (!st.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), st.ToString().c_str());
        return 1;
      }
      std::printf("%-12s : %11.3f seconds\n", name.c_str(), NowSeconds() - start);
      return 0;
    } else if (name == "levelstats") {
      if (!db_ && !OpenDB(false)) return 1;
      std::printf("Level Files\n");
      for (int level = 0; level < FLAGS_num_levels; level++) {
        std::string v;
        db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &v);
        std::printf("%5d %5s\n", level, v.c_str());
      }
      return 0;
    } else if (name == "stats") {
      if (!db_ && !OpenDB(false)) return 1;
      std::string stats;
      db_->GetProperty("shale.stats", &stats);
      std::printf("\n%s\n", stats.c_str());
      return 0;
    } else {
      std::fprintf(stderr, "db_bench: unknown benchmark '%s'\n", name.c_str());
      return 2;
    }
    if (fresh && FLAGS_use_existing_db) {
      std::printf("%-12s : skipped (--use_existing_db is true)\n", name.c_str());
      return 0;
    }
    if (fresh || !db_) {
      if (!OpenDB(fresh)) return 1;
    }
    benchmark_index_++;
    Result r = RunThreads(name, op, sync);
    writes_override_ = 0;
    r.is_read = is_read;
    r.mixed = op == Op::kReadRandomWriteRandom;
    Report(r);
    results->push_back(std::move(r));
    return 0;
  }

  Result RunThreads(const std::string& name, Op op, bool sync) {
    const int n = FLAGS_threads;
    std::vector<ThreadStats> stats(n);
    std::mutex mu;
    std::condition_variable cv;
    int ready = 0;
    bool go = false;
    std::vector<std::thread> threads;
    for (int t = 0; t < n; t++) {
      threads.emplace_back([&, t] {
        {
          std::unique_lock<std::mutex> l(mu);
          ready++;
          cv.notify_all();
          cv.wait(l, [&] { return go; });
        }
        ThreadStats& st = stats[t];
        SetPerfLevel(static_cast<PerfLevel>(FLAGS_perf_level));
        get_perf_context()->Reset();
        st.start = NowSeconds();
        RunOp(op == Op::kReadWhileWriting         ? Op::kReadRandom
              : op == Op::kSeekRandomWhileWriting ? Op::kSeekRandom
                                                  : op,
              t, sync, &st);
        st.finish = NowSeconds();
        st.perf = *get_perf_context();
      });
    }
    // readwhilewriting, seekrandomwhilewriting: one more thread writes until the readers are
    // done; it is not counted.
    std::atomic<bool> readers_done{false};
    std::thread writer;
    if (op == Op::kReadWhileWriting || op == Op::kSeekRandomWhileWriting) {
      writer = std::thread([&] { WriteInBackground(n, sync, readers_done); });
    }
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return ready == n; });
      go = true;
      cv.notify_all();
    }
    for (auto& th : threads) th.join();
    readers_done.store(true);
    if (writer.joinable()) writer.join();
    if (FLAGS_progress) std::fprintf(stderr, "%60s\r", "");

    Result r;
    r.name = name;
    double first_start = stats[0].start;
    double last_finish = stats[0].finish;
    for (const ThreadStats& st : stats) {
      r.ops += st.ops;
      r.bytes += st.bytes;
      r.found += st.found;
      r.reads += st.reads;
      r.writes += st.writes;
      r.perf.Add(st.perf);
      r.thread_seconds += st.finish - st.start;
      r.latency_us.Merge(st.latency_us);
      first_start = std::min(first_start, st.start);
      last_finish = std::max(last_finish, st.finish);
    }
    if (op != Op::kReadRandomWriteRandom) r.reads = r.ops;
    r.elapsed = last_finish - first_start;
    return r;
  }

  void ReportProgress(ThreadStats* st, int thread) {
    if (!FLAGS_progress || thread != 0 || st->ops < st->next_report) return;
    // 100, 200 ... 1000, 1500 ... 5000, 6000 ... as RocksDB spaces them.
    uint64_t step = st->next_report < 1000     ? 100
                    : st->next_report < 5000   ? 500
                    : st->next_report < 10000  ? 1000
                    : st->next_report < 50000  ? 5000
                    : st->next_report < 100000 ? 10000
                    : st->next_report < 500000 ? 50000
                                               : 100000;
    st->next_report += step;
    std::fprintf(stderr, "... finished %llu ops%30s\r", static_cast<unsigned long long>(st->ops),
                 "");
  }

  // readwhilewriting's writer: random Puts (at -benchmark_write_rate_limit bytes/s when set)
  // until done is set.
  void WriteInBackground(int thread, bool sync, const std::atomic<bool>& done) {
    const uint64_t num = static_cast<uint64_t>(FLAGS_num);
    Random rnd(seed_ + 1000003 * benchmark_index_ + 1000 * static_cast<uint64_t>(thread) + 1);
    ValueSource values(seed_ + static_cast<uint64_t>(thread));
    WriteOptions wo;
    wo.sync = sync;
    wo.disableWAL = FLAGS_disable_wal;
    std::string key;
    const double start = NowSeconds();
    uint64_t bytes = 0;
    while (!done.load(std::memory_order_relaxed)) {
      const uint64_t k = num == 0 ? 0 : rnd.Uniform(num);
      keys_.Make(k, &key);
      Slice v = values.Next(static_cast<size_t>(FLAGS_value_size));
      Status s = Put(wo, k, key, v);
      if (!s.ok()) Die("put", s);
      bytes += key.size() + v.size();
      if (FLAGS_benchmark_write_rate_limit > 0) {
        const double due = start + static_cast<double>(bytes) /
                                       static_cast<double>(FLAGS_benchmark_write_rate_limit);
        const double ahead = due - NowSeconds();
        if (ahead > 0) std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
      }
    }
  }

  void RunOp(Op op, int thread, bool sync, ThreadStats* st) {
    const bool track = FLAGS_histogram;
    const double deadline = FLAGS_duration > 0 ? NowSeconds() + FLAGS_duration : 0;
    const uint64_t num = static_cast<uint64_t>(FLAGS_num);
    const bool is_delete = op == Op::kDeleteSeq || op == Op::kDeleteRandom;
    const bool is_write = op == Op::kFillSeq || op == Op::kFillRandom ||
                          op == Op::kFillUniqueRandom || op == Op::kOverwrite ||
                          op == Op::kMergeRandom || is_delete;
    const uint64_t per_batch = static_cast<uint64_t>(
        FLAGS_entries_per_batch > 0 ? FLAGS_entries_per_batch : FLAGS_batch_size);
    const int64_t limit_flag = is_delete ? FLAGS_deletes : is_write ? FLAGS_writes : FLAGS_reads;
    // With -duration, time alone ends the benchmark (as in RocksDB's db_bench).
    const uint64_t limit = FLAGS_duration > 0                 ? UINT64_MAX
                           : is_write && writes_override_ > 0 ? writes_override_
                           : limit_flag >= 0                  ? static_cast<uint64_t>(limit_flag)
                                                              : num;
    // Each benchmark and thread draws its own key sequence (a read must not replay the keys
    // the fill wrote), yet all of it follows from -seed.
    Random rnd(seed_ + 1000003 * benchmark_index_ + 1000 * static_cast<uint64_t>(thread) + 1);
    std::string key;
    auto expired = [&] { return deadline > 0 && NowSeconds() >= deadline; };

    if (is_write) {
      ValueSource values(seed_ + static_cast<uint64_t>(thread));
      WriteOptions wo;
      wo.sync = sync;
      wo.disableWAL = FLAGS_disable_wal;
      WriteBatch batch;
      // filluniquerandom: every key once, in an order of this thread's own.
      std::vector<uint64_t> order;
      if (op == Op::kFillUniqueRandom) {
        order.resize(num);
        for (uint64_t k = 0; k < num; k++) order[k] = k;
        for (uint64_t k = num; k > 1; k--) std::swap(order[k - 1], order[rnd.Uniform(k)]);
      }
      // Range tombstones as RocksDB's db_bench places them: after the write numbered
      // before + m * per (m = 1 .. max), from a random key over width keys.
      const int64_t per_tombstone = FLAGS_writes_per_range_tombstone;
      int64_t num_written = 0;
      std::string end_key;
      auto add_range_tombstone = [&] {
        const int64_t past = num_written - FLAGS_writes_before_delete_range;
        if (per_tombstone <= 0 || past <= 0 || past % per_tombstone != 0 ||
            past / per_tombstone > FLAGS_max_num_range_tombstones) {
          return;
        }
        const uint64_t begin = num == 0 ? 0 : rnd.Uniform(num);
        const uint64_t width = static_cast<uint64_t>(FLAGS_range_tombstone_width);
        Status s;
        if (FLAGS_expand_range_tombstones) {
          for (uint64_t d = 0; d < width && s.ok(); d++) {
            keys_.Make(begin + d, &end_key);
            s = batch.Delete(Family(begin), end_key);
          }
        } else {
          keys_.Make(begin, &key);
          keys_.Make(begin + width, &end_key);
          // With -keys_per_prefix the end may sort first: such a range holds no key.
          if (Slice(end_key).compare(Slice(key)) <= 0) return;
          s = batch.DeleteRange(Family(begin), key, end_key);
        }
        if (!s.ok()) Die("delete range", s);
      };
      for (uint64_t i = 0; i < limit && !expired(); i += per_batch) {
        const double t0 = track ? NowSeconds() : 0;
        batch.Clear();
        uint64_t in_batch = std::min(per_batch, limit - i);
        for (uint64_t j = 0; j < in_batch; j++) {
          const uint64_t k = op == Op::kFillSeq || op == Op::kDeleteSeq ? i + j
                             : num == 0                                 ? 0
                             : op == Op::kFillUniqueRandom              ? order[(i + j) % num]
                                                                        : rnd.Uniform(num);
          keys_.Make(k, &key);
          if (is_delete) {
            Status s = batch.Delete(Family(k), key);
            if (!s.ok()) Die("delete", s);
            st->bytes += key.size();
            continue;
          }
          Slice v = values.Next(static_cast<size_t>(FLAGS_value_size));
          Status s = op == Op::kMergeRandom ? batch.Merge(Family(k), key, v)
                                            : batch.Put(Family(k), key, v);
          if (!s.ok()) Die("put", s);
          st->bytes += key.size() + v.size();
          num_written++;
          add_range_tombstone();
        }
        Status s = db_->Write(wo, &batch);
        if (!s.ok()) Die("write", s);
        st->FinishedOps(in_batch, t0, track);
        ReportProgress(st, thread);
      }
      return;
    }

    if (op == Op::kReadRandom) {
      PinnableSlice value;
      ReadOptions ro;
      for (uint64_t i = 0; i < limit && !expired(); i++) {
        const double t0 = track ? NowSeconds() : 0;
        const uint64_t k = num == 0 ? 0 : rnd.Uniform(num);
        keys_.Make(k, &key);
        Status s = Get(ro, k, key, &value);
        if (s.ok()) {
          st->found++;
          st->bytes += key.size() + value.size();
        } else if (!s.IsNotFound()) {
          Die("get", s);
        }
        st->FinishedOps(1, t0, track);
        ReportProgress(st, thread);
      }
      return;
    }

    if (op == Op::kReadRandomWriteRandom) {
      // Each operation reads (-readwritepercent of them) or writes one random key.
      ValueSource values(seed_ + static_cast<uint64_t>(thread));
      WriteOptions wo;
      wo.sync = sync;
      wo.disableWAL = FLAGS_disable_wal;
      PinnableSlice value;
      ReadOptions ro;
      for (uint64_t i = 0; i < limit && !expired(); i++) {
        const double t0 = track ? NowSeconds() : 0;
        const uint64_t k = num == 0 ? 0 : rnd.Uniform(num);
        keys_.Make(k, &key);
        if (rnd.Uniform(100) < static_cast<uint64_t>(FLAGS_readwritepercent)) {
          st->reads++;
          Status s = Get(ro, k, key, &value);
          if (s.ok()) {
            st->found++;
            st->bytes += key.size() + value.size();
          } else if (!s.IsNotFound()) {
            Die("get", s);
          }
        } else {
          st->writes++;
          Slice v = values.Next(static_cast<size_t>(FLAGS_value_size));
          Status s = Put(wo, k, key, v);
          if (!s.ok()) Die("put", s);
          st->bytes += key.size() + v.size();
        }
        st->FinishedOps(1, t0, track);
        ReportProgress(st, thread);
      }
      return;
    }

    if (op == Op::kSeekRandom) {
      // A new iterator per seek, as RocksDB's db_bench makes (so each seek reads the current
      // LSM shape): Seek a random key, count it found when the iterator lands on it, then step
      // -seek_nexts entries on (back with -reverse_iterator), copying out each value. With
      // -max_scan_distance the iterator is bounded that many keys from the seek key, as in
      // RocksDB's db_bench.
      char value_buffer[256];
      std::string bound_key;
      Slice bound;
      for (uint64_t i = 0; i < limit && !expired(); i++) {
        const double t0 = track ? NowSeconds() : 0;
        const uint64_t pos = num == 0 ? 0 : rnd.Uniform(num);
        keys_.Make(pos, &key);
        ReadOptions ro;
        ro.async_io = FLAGS_async_io;
        ro.total_order_seek = FLAGS_total_order_seek;
        ro.prefix_same_as_start = FLAGS_prefix_same_as_start;
        if (FLAGS_max_scan_distance > 0) {
          const uint64_t distance = static_cast<uint64_t>(FLAGS_max_scan_distance);
          if (FLAGS_reverse_iterator) {
            keys_.Make(pos > distance ? pos - distance : 0, &bound_key);
            bound = Slice(bound_key);
            ro.iterate_lower_bound = &bound;
          } else {
            keys_.Make(std::min(num, pos + distance), &bound_key);
            bound = Slice(bound_key);
            ro.iterate_upper_bound = &bound;
          }
        }
        std::unique_ptr<Iterator> it = db_->NewIterator(ro);
        it->Seek(key);
        if (it->Valid() && it->key() == Slice(key)) st->found++;
        for (int j = 0; j < FLAGS_seek_nexts && it->Valid(); j++) {
          const Slice value = it->value();
          std::memcpy(value_buffer, value.data(), std::min(value.size(), sizeof(value_buffer)));
          st->bytes += it->key().size() + value.size();
          if (FLAGS_reverse_iterator) {
            it->Prev();
          } else {
            it->Next();
          }
        }
        if (!it->status().ok()) Die("iterator", it->status());
        st->FinishedOps(1, t0, track);
        ReportProgress(st, thread);
      }
      return;
    }

    if (op == Op::kReadRandomOperands) {
      // GetMergeOperands on random keys; the operand array grows to the largest count seen
      // (one retry after Incomplete), as RocksDB's db_bench does.
      std::vector<PinnableSlice> operands(1);
      GetMergeOperandsOptions gmo;
      ReadOptions ro;
      for (uint64_t i = 0; i < limit && !expired(); i++) {
        const double t0 = track ? NowSeconds() : 0;
        const uint64_t k = num == 0 ? 0 : rnd.Uniform(num);
        keys_.Make(k, &key);
        gmo.expected_max_number_of_operands = static_cast<int>(operands.size());
        int n = 0;
        ColumnFamilyHandle* f = Family(k);
        auto get = [&] {
          return f != nullptr ? db_->GetMergeOperands(ro, f, key, operands.data(), &gmo, &n)
                              : db_->GetMergeOperands(ro, key, operands.data(), &gmo, &n);
        };
        Status s = get();
        if (s.IsIncomplete()) {
          operands.resize(static_cast<size_t>(n));
          gmo.expected_max_number_of_operands = n;
          s = get();
        }
        if (s.ok()) {
          st->found++;
          st->bytes += key.size();
          // Count and release each operand, as RocksDB's db_bench does.
          for (int j = 0; j < n; j++) {
            PinnableSlice& operand = operands[static_cast<size_t>(j)];
            st->bytes += operand.size();
            operand.Reset();
          }
        } else if (!s.IsNotFound()) {
          Die("get merge operands", s);
        }
        st->FinishedOps(1, t0, track);
        ReportProgress(st, thread);
      }
      return;
    }

    if (op == Op::kMultiReadRandom) {
      // -batch_size keys per MultiGet: random, or a random start then every
      // -multiread_stride-th key. Operations count keys, as in RocksDB's db_bench.
      const size_t n = static_cast<size_t>(std::max<int64_t>(1, FLAGS_batch_size));
      std::vector<std::string> key_storage(n);
      std::vector<Slice> keys(n);
      std::vector<PinnableSlice> values(n);
      std::vector<Status> statuses(n);
      ReadOptions ro;
      ro.async_io = FLAGS_async_io;
      for (uint64_t i = 0; i < limit && !expired(); i += n) {
        const double t0 = track ? NowSeconds() : 0;
        const size_t in_batch = static_cast<size_t>(std::min<uint64_t>(n, limit - i));
        const uint64_t start = num == 0 ? 0 : rnd.Uniform(num);
        for (size_t j = 0; j < in_batch; j++) {
          const uint64_t k = FLAGS_multiread_stride > 0
                                 ? (start + j * static_cast<uint64_t>(FLAGS_multiread_stride)) %
                                       std::max<uint64_t>(num, 1)
                                 : (num == 0 ? 0 : rnd.Uniform(num));
          keys_.Make(k, &key_storage[j]);
          keys[j] = key_storage[j];
        }
        db_->MultiGet(ro, in_batch, keys.data(), values.data(), statuses.data(), false);
        for (size_t j = 0; j < in_batch; j++) {
          if (statuses[j].ok()) {
            st->found++;
            st->bytes += keys[j].size() + values[j].size();
          } else if (!statuses[j].IsNotFound()) {
            Die("multiget", statuses[j]);
          }
        }
        st->FinishedOps(in_batch, t0, track);
        ReportProgress(st, thread);
      }
      return;
    }

    // readseq / readreverse
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    const bool forward = op == Op::kReadSeq;
    uint64_t i = 0;
    for (forward ? it->SeekToFirst() : it->SeekToLast(); i < limit && it->Valid() && !expired();
         forward ? it->Next() : it->Prev()) {
      const double t0 = track ? NowSeconds() : 0;
      st->bytes += it->key().size() + it->value().size();
      st->found++;
      i++;
      st->FinishedOps(1, t0, track);
      ReportProgress(st, thread);
    }
    if (!it->status().ok()) Die("iterator", it->status());
  }

  [[noreturn]] static void Die(const char* what, const Status& s) {
    std::fprintf(stderr, "db_bench: %s failed: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }

  static void Report(const Result& r) {
    const double ops = static_cast<double>(r.ops);
    const double micros_per_op = r.ops == 0 ? 0 : r.thread_seconds * 1e6 / ops;
    const long ops_per_sec = r.elapsed > 0 ? static_cast<long>(ops / r.elapsed) : 0;
    std::string extra;
    if (r.bytes > 0 && r.elapsed > 0) {
      extra = fmt::format(" {:6.1f} MB/s", static_cast<double>(r.bytes) / 1048576.0 / r.elapsed);
    }
    if (r.is_read) {
      extra += fmt::format(" ({} of {} found)", r.found, r.reads);
    } else if (r.mixed) {
      extra += fmt::format(" ( reads:{} writes:{} total:{} found:{})", r.reads, r.writes, r.ops,
                           r.found);
    }
    std::printf("%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %llu operations;%s\n",
                r.name.c_str(), micros_per_op, ops_per_sec, r.elapsed,
                static_cast<unsigned long long>(r.ops), extra.c_str());
    if (FLAGS_perf_level > static_cast<int>(PerfLevel::kDisable)) {
      std::printf("PERF_CONTEXT:\n%s\n", r.perf.ToString().c_str());
    }
    if (FLAGS_histogram) {
      std::printf("Microseconds per %s:\n%s\n", r.is_read ? "read" : "write",
                  r.latency_us.ToString().c_str());
    }
    std::fflush(stdout);
  }

  void WriteJson(const std::vector<Result>& results) {
    std::string out =
        fmt::format("{{\n  \"engine\": \"shale\",\n  \"seed\": {},\n  \"results\": [\n", seed_);
    for (size_t i = 0; i < results.size(); i++) {
      const Result& r = results[i];
      const double ops = static_cast<double>(r.ops);
      out += fmt::format(
          "    {{\"name\": \"{}\", \"operations\": {}, \"seconds\": {:.6f}, \"ops_per_sec\": "
          "{:.1f}, "
          "\"micros_per_op\": {:.4f}, \"mb_per_sec\": {:.3f}, \"found\": {}, "
          "\"p50\": {:.3f}, \"p75\": {:.3f}, \"p99\": {:.3f}, \"p999\": {:.3f}, \"p9999\": "
          "{:.3f}}}{}\n",
          r.name, r.ops, r.elapsed, r.elapsed > 0 ? ops / r.elapsed : 0,
          r.ops ? r.thread_seconds * 1e6 / ops : 0,
          r.elapsed > 0 ? static_cast<double>(r.bytes) / 1048576.0 / r.elapsed : 0, r.found,
          r.latency_us.Percentile(50), r.latency_us.Percentile(75), r.latency_us.Percentile(99),
          r.latency_us.Percentile(99.9), r.latency_us.Percentile(99.99),
          i + 1 < results.size() ? "," : "");
    }
    out += "  ]\n}\n";
    std::ofstream f(FLAGS_report_json);
    f << out;
    if (!f) std::fprintf(stderr, "db_bench: cannot write %s\n", FLAGS_report_json.c_str());
  }

  const uint64_t seed_;
  uint64_t benchmark_index_ = 0;
  uint64_t writes_override_ = 0;  // fillsync's write count, for the benchmark running
  const KeyFormat keys_;
  Options options_;
  std::shared_ptr<Cache> block_cache_;
  std::unique_ptr<DB> db_;
  // -num_column_families > 1: every family's handle, the default one first (empty otherwise).
  std::vector<std::unique_ptr<ColumnFamilyHandle>> families_;
  // The family of key number k (null: the calls without a handle, on the default family).
  ColumnFamilyHandle* Family(uint64_t k) const {
    return families_.size() > 1 ? families_[k % families_.size()].get() : nullptr;
  }
  Status Put(const WriteOptions& wo, uint64_t k, const Slice& key, const Slice& value) {
    ColumnFamilyHandle* f = Family(k);
    return f != nullptr ? db_->Put(wo, f, key, value) : db_->Put(wo, key, value);
  }
  Status Get(const ReadOptions& ro, uint64_t k, const Slice& key, PinnableSlice* value) {
    ColumnFamilyHandle* f = Family(k);
    return f != nullptr ? db_->Get(ro, f, key, value) : db_->Get(ro, key, value);
  }
};

}  // namespace
}  // namespace shale::bench

int main(int argc, char** argv) {
  shale::tools::ParseFlagsStrictly(
      "db_bench", "db_bench -benchmarks=fillrandom,readrandom -num=N ...", argc, argv);
  shale::bench::CheckFlagRanges();
  if (FLAGS_db.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    FLAGS_db = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/shaledb_bench";
  }
  const uint64_t seed =
      FLAGS_seed != 0
          ? FLAGS_seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  shale::bench::Benchmark bench(seed);
  return bench.Run();
}
