// Statistics against known workloads: the filter counts add up to the filter checks made, the
// cache and memtable counts to the lookups, and ToString prints RocksDB's layout.
#include "shale/statistics.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/perf_context.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

class StatisticsTest : public DBTestBase {
 protected:
  StatisticsTest() {
    options_.statistics = CreateDBStatistics();
    options_.block_cache = NewLRUCache(64 << 20);
  }
  ~StatisticsTest() override { SetPerfLevel(PerfLevel::kDisable); }
  uint64_t Ticker(Tickers t) const { return options_.statistics->getTickerCount(t); }

  // Even key numbers 0..2(n-1) in one bottom-level table; odd ones in a newer L0 table above
  // it. Both files span nearly the whole key range, so every lookup consults both filters.
  void LoadTwoOverlappingTables(int n) {
    for (int i = 0; i < n; i++) ASSERT_TRUE(Put(NumberedKey(2 * i), std::string(100, 'e')).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    for (int i = 0; i < n; i++) {
      ASSERT_TRUE(Put(NumberedKey(2 * i + 1), std::string(100, 'o')).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    std::string l0;
    ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &l0));
    ASSERT_EQ(l0, "1");
  }
};

TEST_F(StatisticsTest, BloomCountsAddUpToFilterChecks) {
  Open();
  constexpr int kKeys = 2001;  // both files end past the last key looked up
  LoadTwoOverlappingTables(kKeys);
  options_.statistics->Reset();
  SetPerfLevel(PerfLevel::kEnableCount);
  get_perf_context()->Reset();

  // 1000 present keys in the bottom table (each also checked against the L0 file's filter,
  // which should rule most out) and 1000 absent keys that sort inside both files.
  constexpr int kLookups = 1000;
  for (int i = 0; i < kLookups; i++) {
    EXPECT_EQ(Get(NumberedKey(4 * i + 2)), std::string(100, 'e'));
    EXPECT_EQ(Get(NumberedKey(4 * i + 2) + "x"), "NOT_FOUND");
  }
  const uint64_t useful = Ticker(BLOOM_FILTER_USEFUL);
  const uint64_t positive = Ticker(BLOOM_FILTER_FULL_POSITIVE);
  const uint64_t true_positive = Ticker(BLOOM_FILTER_FULL_TRUE_POSITIVE);
  // Every lookup checks both files' filters: 2 lookups x 2 files per i.
  EXPECT_EQ(useful + positive, 4u * kLookups);
  // Each present key is in exactly one file, and its filter passes it (no false negatives).
  EXPECT_EQ(true_positive, static_cast<uint64_t>(kLookups));
  // 3000 checks of keys a file does not hold: at 10 bits per key ~1 % pass (allow 3 %).
  EXPECT_GE(positive, true_positive);
  EXPECT_LE(positive - true_positive, 90u) << "false positives";
  EXPECT_EQ(useful + (positive - true_positive), 3u * kLookups);
  // The per-thread view agrees with the DB-wide one.
  EXPECT_EQ(get_perf_context()->bloom_sst_hit_count, positive);
  EXPECT_EQ(get_perf_context()->bloom_sst_miss_count, useful);

  // Nothing was in the memtable: every lookup missed it.
  EXPECT_EQ(Ticker(MEMTABLE_MISS), 2u * kLookups);
  EXPECT_EQ(Ticker(MEMTABLE_HIT), 0u);
  EXPECT_EQ(Ticker(NUMBER_KEYS_READ), 2u * kLookups);
  EXPECT_EQ(Ticker(BYTES_READ), 100u * kLookups);
  // Every filter pass reads a data block: from the cache, or into it.
  EXPECT_EQ(Ticker(BLOCK_CACHE_HIT) + Ticker(BLOCK_CACHE_MISS), positive);
  EXPECT_EQ(Ticker(BLOCK_CACHE_DATA_HIT), Ticker(BLOCK_CACHE_HIT));
  EXPECT_EQ(Ticker(BLOCK_CACHE_DATA_MISS), Ticker(BLOCK_CACHE_MISS));
  EXPECT_EQ(Ticker(BLOCK_CACHE_ADD), Ticker(BLOCK_CACHE_MISS));
  EXPECT_EQ(Ticker(BLOCK_CACHE_DATA_ADD), Ticker(BLOCK_CACHE_ADD));
  EXPECT_EQ(Ticker(BLOCK_CACHE_ADD_FAILURES), 0u);
  HistogramData get;
  options_.statistics->histogramData(DB_GET, &get);
  EXPECT_EQ(get.count, 2u * kLookups);

  // The same lookups through MultiGet count the same way.
  options_.statistics->Reset();
  std::vector<std::string> storage;
  for (int i = 0; i < kLookups; i++) {
    storage.push_back(NumberedKey(4 * i + 2));
    storage.push_back(NumberedKey(4 * i + 2) + "x");
  }
  std::vector<Slice> keys(storage.begin(), storage.end());
  std::vector<PinnableSlice> values(keys.size());
  std::vector<Status> statuses(keys.size());
  db_->MultiGet(ReadOptions(), keys.size(), keys.data(), values.data(), statuses.data());
  for (size_t i = 0; i < keys.size(); i++) {
    EXPECT_EQ(statuses[i].ok(), i % 2 == 0) << i << " " << statuses[i].ToString();
  }
  EXPECT_EQ(Ticker(BLOOM_FILTER_USEFUL) + Ticker(BLOOM_FILTER_FULL_POSITIVE), 4u * kLookups);
  EXPECT_EQ(Ticker(BLOOM_FILTER_FULL_TRUE_POSITIVE), static_cast<uint64_t>(kLookups));
  EXPECT_EQ(Ticker(NUMBER_MULTIGET_CALLS), 1u);
  EXPECT_EQ(Ticker(NUMBER_MULTIGET_KEYS_READ), 2u * kLookups);
  EXPECT_EQ(Ticker(NUMBER_MULTIGET_KEYS_FOUND), static_cast<uint64_t>(kLookups));
}

TEST_F(StatisticsTest, WritePathCounts) {
  Open();
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.Put("b", "22").ok());
  WriteOptions sync;
  sync.sync = true;
  ASSERT_TRUE(db_->Write(sync, &batch).ok());
  ASSERT_TRUE(Put("c", "333").ok());
  EXPECT_EQ(Ticker(NUMBER_KEYS_WRITTEN), 3u);
  EXPECT_EQ(Ticker(WAL_FILE_SYNCED), 1u);
  EXPECT_EQ(Ticker(WRITE_DONE_BY_SELF), 2u);
  EXPECT_EQ(Ticker(WRITE_WITH_WAL), 2u);
  EXPECT_GT(Ticker(WAL_FILE_BYTES), 0u);
  HistogramData h;
  options_.statistics->histogramData(BYTES_PER_WRITE, &h);
  EXPECT_EQ(h.count, 2u);
  EXPECT_GT(h.sum, 6u);  // the batches' keys and values at least
  options_.statistics->histogramData(WAL_FILE_SYNC_MICROS, &h);
  EXPECT_EQ(h.count, 1u);
  options_.statistics->histogramData(WRITE_GROUP_SIZE, &h);
  EXPECT_EQ(h.count, 2u);
  EXPECT_EQ(h.sum, 2u);  // alone, each write was a group of one
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Ticker(NUMBER_FLUSHES), 1u);
  EXPECT_GT(Ticker(FLUSH_WRITE_BYTES), 0u);
}

TEST_F(StatisticsTest, ToStringHasEveryNameInRocksDbLayout) {
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  EXPECT_EQ(Get("a"), "1");
  const std::string text = options_.statistics->ToString();
  const std::regex ticker(R"(shale\.[a-z0-9._]+ COUNT : [0-9]+)");
  const std::regex histogram(
      R"(shale\.[a-z0-9._]+ P50 : [0-9.]+ P95 : [0-9.]+ P99 : [0-9.]+ P100 : [0-9.]+ COUNT : [0-9]+ SUM : [0-9]+)");
  std::istringstream in(text);
  std::string line;
  int tickers = 0, histograms = 0;
  while (std::getline(in, line)) {
    if (std::regex_match(line, ticker)) {
      tickers++;
    } else if (std::regex_match(line, histogram)) {
      histograms++;
    } else {
      ADD_FAILURE() << "unexpected line: " << line;
    }
  }
  EXPECT_EQ(tickers, static_cast<int>(TICKER_ENUM_MAX));
  EXPECT_EQ(histograms, static_cast<int>(HISTOGRAM_ENUM_MAX));
  for (uint32_t t = 0; t < TICKER_ENUM_MAX; t++) {
    EXPECT_NE(text.find(std::string(TickerName(static_cast<Tickers>(t))) + " COUNT : "),
              std::string::npos);
  }
  EXPECT_NE(text.find("shale.number.keys.written COUNT : 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("shale.db.get.micros P50 : "), std::string::npos);
  EXPECT_STREQ(TickerName(TICKER_ENUM_MAX), "unknown");
}

}  // namespace
}  // namespace shale::test
