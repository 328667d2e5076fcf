// The rate limiter (shale/rate_limiter.h): pacing, parts of large requests, priorities, and the
// DB's flush and compaction IO passing through it. Only lower bounds on time are checked (a
// limiter must delay); nothing asserts how fast the machine is.
#include "shale/rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/statistics.h"
#include "src/util/clock.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

double SecondsSince(uint64_t start_us) { return static_cast<double>(NowMicros() - start_us) / 1e6; }

TEST(RateLimiterTest, InvalidSettingsGiveNoLimiter) {
  EXPECT_EQ(NewGenericRateLimiter(0), nullptr);
  EXPECT_EQ(NewGenericRateLimiter(-5), nullptr);
  EXPECT_EQ(NewGenericRateLimiter(1 << 20, 0), nullptr);
  EXPECT_EQ(NewGenericRateLimiter(1 << 20, 1000, 0), nullptr);
  auto limiter = NewGenericRateLimiter(1 << 20, 100 * 1000);
  ASSERT_NE(limiter, nullptr);
  EXPECT_EQ(limiter->GetBytesPerSecond(), 1 << 20);
  EXPECT_EQ(limiter->GetSingleBurstBytes(), (1 << 20) / 10);
  limiter->SetBytesPerSecond(0);  // ignored
  EXPECT_EQ(limiter->GetBytesPerSecond(), 1 << 20);
  limiter->SetBytesPerSecond(2 << 20);
  EXPECT_EQ(limiter->GetSingleBurstBytes(), (2 << 20) / 10);
}

TEST(RateLimiterTest, ModesSayWhichIoIsLimited) {
  using Mode = RateLimiter::Mode;
  using Op = RateLimiter::OpType;
  EXPECT_TRUE(NewGenericRateLimiter(1, 1, 1, Mode::kWritesOnly)->IsRateLimited(Op::kWrite));
  EXPECT_FALSE(NewGenericRateLimiter(1, 1, 1, Mode::kWritesOnly)->IsRateLimited(Op::kRead));
  EXPECT_TRUE(NewGenericRateLimiter(1, 1, 1, Mode::kReadsOnly)->IsRateLimited(Op::kRead));
  EXPECT_FALSE(NewGenericRateLimiter(1, 1, 1, Mode::kReadsOnly)->IsRateLimited(Op::kWrite));
  EXPECT_TRUE(NewGenericRateLimiter(1, 1, 1, Mode::kAllIo)->IsRateLimited(Op::kRead));
  EXPECT_TRUE(NewGenericRateLimiter(1, 1, 1, Mode::kAllIo)->IsRateLimited(Op::kWrite));
}

// 200 KiB at 1 MiB/s with 10 KiB bursts: at least ~0.18 s beyond the first burst, counted by
// priority; a request larger than a burst passes in parts; kTotal passes uncounted.
TEST(RateLimiterTest, PacesRequestsAndCountsThem) {
  auto limiter = NewGenericRateLimiter(1 << 20, 10 * 1000);
  const int64_t burst = limiter->GetSingleBurstBytes();
  ASSERT_EQ(burst, (1 << 20) / 100);
  auto stats = CreateDBStatistics();
  const uint64_t start = NowMicros();
  for (int i = 0; i < 50; i++) limiter->Request(4096, IOPriority::kLow, stats.get());
  limiter->Request(5 * burst, IOPriority::kHigh, stats.get());  // in parts
  limiter->Request(1 << 30, IOPriority::kTotal);                // not limited
  const double expected = static_cast<double>(50 * 4096 + 5 * burst - burst) / (1 << 20);
  EXPECT_GE(SecondsSince(start), expected * 0.9);
  EXPECT_EQ(limiter->GetTotalBytesThrough(IOPriority::kLow), 50 * 4096);
  EXPECT_EQ(limiter->GetTotalBytesThrough(IOPriority::kHigh), 5 * burst);
  EXPECT_EQ(limiter->GetTotalBytesThrough(), 50 * 4096 + 5 * burst);
  EXPECT_EQ(limiter->GetTotalRequests(IOPriority::kLow), 50);
  EXPECT_EQ(limiter->GetTotalRequests(), 51);
  EXPECT_GT(stats->getTickerCount(NUMBER_RATE_LIMITER_DRAINS), 0u);
}

// With both priorities queued, refills serve kHigh first: the high threads finish before the
// low ones, which still get through (one refill in fairness serves them first).
TEST(RateLimiterConcurrentTest, HighPriorityGoesFirstAndLowIsNotStarved) {
  auto limiter = NewGenericRateLimiter(2 << 20, 10 * 1000, 10);
  std::atomic<uint64_t> high_done{0}, low_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++) {
    const bool high = t % 2 == 0;
    threads.emplace_back([&, high] {
      for (int i = 0; i < 25; i++) {
        limiter->Request(4096, high ? IOPriority::kHigh : IOPriority::kLow);
      }
      uint64_t now = NowMicros();
      std::atomic<uint64_t>& done = high ? high_done : low_done;
      uint64_t prev = done.load();
      while (prev < now && !done.compare_exchange_weak(prev, now)) {
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(high_done.load(), low_done.load());
  EXPECT_EQ(limiter->GetTotalBytesThrough(IOPriority::kHigh), 4 * 25 * 4096);
  EXPECT_EQ(limiter->GetTotalBytesThrough(IOPriority::kLow), 4 * 25 * 4096);
}

class DBRateLimiterTest : public DBTestBase {
 protected:
  // Loads ~1.2 MB into several L0 files, then compacts them.
  void LoadFlushAndCompact() {
    options_.statistics = CreateDBStatistics();
    options_.write_buffer_size = 256 << 10;
    options_.disable_auto_compactions = true;
    Open();
    for (int i = 0; i < 10000; i++) {
      ASSERT_TRUE(Put("key" + std::to_string(i * 7919 % 10000), std::string(100, 'x')).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  }
  uint64_t Ticker(Tickers t) const { return options_.statistics->getTickerCount(t); }
};

// Flush writes pass at kHigh and compaction writes at kLow, every byte of them.
TEST_F(DBRateLimiterTest, FlushAndCompactionWritesPassTheLimiter) {
  std::shared_ptr<RateLimiter> limiter = NewGenericRateLimiter(1 << 30);
  options_.rate_limiter = limiter;
  LoadFlushAndCompact();
  ASSERT_GT(Ticker(FLUSH_WRITE_BYTES), 1u << 20);
  ASSERT_GT(Ticker(COMPACT_WRITE_BYTES), 1u << 20);
  EXPECT_EQ(static_cast<uint64_t>(limiter->GetTotalBytesThrough(IOPriority::kHigh)),
            Ticker(FLUSH_WRITE_BYTES));
  EXPECT_EQ(static_cast<uint64_t>(limiter->GetTotalBytesThrough(IOPriority::kLow)),
            Ticker(COMPACT_WRITE_BYTES));
}

// In kReadsOnly mode only the blocks compaction reads pass (at kLow); in kAllIo both.
TEST_F(DBRateLimiterTest, CompactionReadsPassInReadModes) {
  std::shared_ptr<RateLimiter> limiter =
      NewGenericRateLimiter(1 << 30, 100 * 1000, 10, RateLimiter::Mode::kReadsOnly);
  options_.rate_limiter = limiter;
  LoadFlushAndCompact();
  EXPECT_EQ(limiter->GetTotalBytesThrough(IOPriority::kHigh), 0);
  EXPECT_GE(static_cast<uint64_t>(limiter->GetTotalBytesThrough(IOPriority::kLow)),
            Ticker(COMPACT_READ_BYTES) * 9 / 10);  // data blocks, not index or filter
  Close();
  ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  limiter = NewGenericRateLimiter(1 << 30, 100 * 1000, 10, RateLimiter::Mode::kAllIo);
  options_.rate_limiter = limiter;
  LoadFlushAndCompact();
  EXPECT_EQ(static_cast<uint64_t>(limiter->GetTotalBytesThrough(IOPriority::kHigh)),
            Ticker(FLUSH_WRITE_BYTES));
  EXPECT_GT(static_cast<uint64_t>(limiter->GetTotalBytesThrough(IOPriority::kLow)),
            Ticker(COMPACT_WRITE_BYTES) + Ticker(COMPACT_READ_BYTES) * 9 / 10);
}

// A reader's data block reads pass the limiter at ReadOptions::rate_limiter_priority and are
// timed in SST_READ_MICROS, one each, whichever path reads them: Get, MultiGet with and without
// async IO, and iterator seeks. Every read starts from a cold block cache.
TEST_F(DBRateLimiterTest, UserReadsPassTheLimiterAndAreTimed) {
  std::shared_ptr<RateLimiter> limiter =
      NewGenericRateLimiter(1 << 30, 100 * 1000, 10, RateLimiter::Mode::kReadsOnly);
  options_.rate_limiter = limiter;
  options_.block_size = 1024;
  LoadFlushAndCompact();
  std::vector<std::string> keys;
  for (int i = 0; i < 64; i++) keys.push_back("key" + std::to_string(i * 151 % 10000));
  const std::vector<Slice> slices(keys.begin(), keys.end());
  enum Path { kGet, kMultiGet, kMultiGetAsync, kSeek };
  for (Path path : {kGet, kMultiGet, kMultiGetAsync, kSeek}) {
    SCOPED_TRACE(static_cast<int>(path));
    options_.block_cache = NewLRUCache(8 << 20);
    Reopen();
    ReadOptions ro;
    ro.rate_limiter_priority = IOPriority::kHigh;
    ro.async_io = path == kMultiGetAsync || path == kSeek;
    const int64_t requests = limiter->GetTotalRequests(IOPriority::kHigh);
    const uint64_t misses = Ticker(BLOCK_CACHE_DATA_MISS);
    const uint64_t submitted = Ticker(ASYNC_READ_SUBMITTED);
    HistogramData before;
    options_.statistics->histogramData(SST_READ_MICROS, &before);
    switch (path) {
      case kGet:
        for (const std::string& k : keys) {
          std::string value;
          ASSERT_TRUE(db_->Get(ro, k, &value).ok());
        }
        break;
      case kMultiGet:
      case kMultiGetAsync: {
        std::vector<std::string> values;
        for (const Status& st : db_->MultiGet(ro, slices, &values)) ASSERT_TRUE(st.ok());
        break;
      }
      case kSeek: {
        std::unique_ptr<Iterator> it(db_->NewIterator(ro));
        for (const std::string& k : keys) {
          it->Seek(k);
          ASSERT_TRUE(it->Valid());
          ASSERT_EQ(it->key().ToString(), k);
        }
        break;
      }
    }
    const uint64_t read = Ticker(BLOCK_CACHE_DATA_MISS) - misses;
    std::string async_path;
    ASSERT_TRUE(db_->GetProperty("shale.io.async-path", &async_path));
    if (async_path == "io_uring" && path == kMultiGetAsync) {
      // The reads were batched (a check of the path taken; skipped without io_uring).
      EXPECT_EQ(Ticker(ASYNC_READ_SUBMITTED) - submitted, read);
    }
    EXPECT_GT(read, 10u);
    HistogramData after;
    options_.statistics->histogramData(SST_READ_MICROS, &after);
    EXPECT_EQ(after.count - before.count, read);
    EXPECT_EQ(static_cast<uint64_t>(limiter->GetTotalRequests(IOPriority::kHigh) - requests), read);
  }
}

// At 4 MiB/s, flushing and compacting ~1.2 MB each takes at least half a second.
TEST_F(DBRateLimiterTest, BackgroundWritesArePaced) {
  std::shared_ptr<RateLimiter> limiter = NewGenericRateLimiter(4 << 20, 10 * 1000);
  options_.rate_limiter = limiter;
  const uint64_t start = NowMicros();
  LoadFlushAndCompact();
  const double bytes = static_cast<double>(Ticker(FLUSH_WRITE_BYTES) + Ticker(COMPACT_WRITE_BYTES));
  // The first burst of each passes at once.
  const double paced = bytes - 2 * static_cast<double>(limiter->GetSingleBurstBytes());
  EXPECT_GE(SecondsSince(start), 0.9 * paced / (4 << 20));
}

}  // namespace
}  // namespace shale::test
