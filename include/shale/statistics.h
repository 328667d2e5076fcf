// Statistics: process-visible counters (tickers) and latency/size distributions (histograms).
//
// Create one with CreateDBStatistics() and set Options::statistics; several DBs may share one.
// Names follow RocksDB's with the "shale." prefix; ToString() prints them in RocksDB's layout:
//   shale.block.cache.hit COUNT : 12
//   shale.db.get.micros P50 : 1.2 P95 : ... P99 : ... P100 : ... COUNT : 5 SUM : 9
// When Options::statistics is null nothing is recorded and the cost is one null check.
// Thread safety: every method is thread-safe; recording is lock-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace shale {

enum Tickers : uint32_t {
  BLOCK_CACHE_MISS = 0,
  BLOCK_CACHE_HIT,
  BLOCK_CACHE_ADD,
  BLOCK_CACHE_ADD_FAILURES,  // a strict cache was full: the block served one read only
  // Per block kind. Only data blocks go through the cache: a table's index and filter blocks
  // are read when it is opened and held by its reader (RocksDB's
  // cache_index_and_filter_blocks=false), so there are no index or filter cache tickers.
  BLOCK_CACHE_DATA_MISS,
  BLOCK_CACHE_DATA_HIT,
  BLOCK_CACHE_DATA_ADD,
  BLOOM_FILTER_USEFUL,
  BLOOM_FILTER_FULL_POSITIVE,
  BLOOM_FILTER_FULL_TRUE_POSITIVE,
  MEMTABLE_HIT,
  MEMTABLE_MISS,
  NUMBER_KEYS_WRITTEN,
  NUMBER_KEYS_READ,
  BYTES_WRITTEN,
  BYTES_READ,
  NUMBER_MULTIGET_CALLS,
  NUMBER_MULTIGET_KEYS_READ,
  NUMBER_MULTIGET_KEYS_FOUND,
  NUMBER_MERGE_FAILURES,
  WAL_FILE_SYNCED,
  WAL_FILE_BYTES,
  WRITE_DONE_BY_SELF,
  WRITE_DONE_BY_OTHER,
  WRITE_WITH_WAL,
  STALL_MICROS,
  COMPACT_READ_BYTES,
  COMPACT_WRITE_BYTES,
  FLUSH_WRITE_BYTES,
  NUMBER_FLUSHES,
  ASYNC_READ_SUBMITTED,
  ASYNC_READ_FALLBACK,
  NUMBER_RATE_LIMITER_DRAINS,  // background IO requests that waited for the rate limiter
  // Table prefix filters asked by iterator seeks, and the times one ruled the prefix out
  // (memtable filters count in the PerfContext's bloom_memtable_* counters).
  BLOOM_FILTER_PREFIX_CHECKED,
  BLOOM_FILTER_PREFIX_USEFUL,
  // Compaction inputs a newer range tombstone of the compaction covered for every reader: not
  // read, dropped whole.
  COMPACTION_RANGE_DEL_FILES_SKIPPED,
  COMPACTION_RANGE_DEL_BYTES_SKIPPED,
  // Iterators that sought past a run of versions of one key instead of stepping over more
  // than max_sequential_skip_in_iterations of them (going backward: that sought to decide a
  // key with more entries than that).
  NUMBER_OF_RESEEKS_IN_ITERATION,
  // Compactions started because seeks found a file's key range overlapping other sorted runs
  // (ColumnFamilyOptions::read_compaction_bytes_per_seek).
  COMPACT_READ_TRIGGERED,
  TICKER_ENUM_MAX
};

enum Histograms : uint32_t {
  DB_GET = 0,
  DB_MULTIGET,
  DB_WRITE,
  DB_GET_MERGE_OPERANDS,
  // Each data block read from a table file by a reader (Get, MultiGet, iterators). A batched
  // read counts from when it is queued until its completion is handled, so the samples of one
  // batch overlap (their sum is more than the time spent).
  SST_READ_MICROS,
  WAL_FILE_SYNC_MICROS,
  WRITE_GROUP_SIZE,
  BYTES_PER_WRITE,               // bytes of each Write call's batch
  NUM_SUBCOMPACTIONS_SCHEDULED,  // parts of each compaction split into subcompactions
  HISTOGRAM_ENUM_MAX
};

// The printed name of a ticker / histogram ("shale.block.cache.hit").
const char* TickerName(Tickers ticker);
const char* HistogramName(Histograms histogram);

struct HistogramData {
  double median = 0;
  double percentile95 = 0;
  double percentile99 = 0;
  double average = 0;
  double standard_deviation = 0;
  double max = 0;
  double min = 0;
  uint64_t count = 0;
  uint64_t sum = 0;
};

class Statistics {
 public:
  virtual ~Statistics() = default;
  virtual uint64_t getTickerCount(uint32_t ticker) const = 0;
  virtual void recordTick(uint32_t ticker, uint64_t count = 1) = 0;
  virtual void setTickerCount(uint32_t ticker, uint64_t count) = 0;
  virtual void recordInHistogram(uint32_t histogram, uint64_t value) = 0;
  // Same as recordInHistogram; the name RocksDB users know for latencies.
  void measureTime(uint32_t histogram, uint64_t micros) { recordInHistogram(histogram, micros); }
  virtual void histogramData(uint32_t histogram, HistogramData* data) const = 0;
  virtual void Reset() = 0;
  virtual std::string ToString() const = 0;
};

std::shared_ptr<Statistics> CreateDBStatistics();

}  // namespace shale
