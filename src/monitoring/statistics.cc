#include "shale/statistics.h"

#include <fmt/format.h>

#include <array>
#include <atomic>

#include "src/util/cache_line.h"
#include "src/util/histogram.h"

namespace shale {
namespace {

constexpr std::array<const char*, TICKER_ENUM_MAX> kTickerNames = {
    "shale.block.cache.miss",
    "shale.block.cache.hit",
    "shale.block.cache.add",
    "shale.block.cache.add.failures",
    "shale.block.cache.data.miss",
    "shale.block.cache.data.hit",
    "shale.block.cache.data.add",
    "shale.bloom.filter.useful",
    "shale.bloom.filter.full.positive",
    "shale.bloom.filter.full.true.positive",
    "shale.memtable.hit",
    "shale.memtable.miss",
    "shale.number.keys.written",
    "shale.number.keys.read",
    "shale.bytes.written",
    "shale.bytes.read",
    "shale.number.multiget.get",
    "shale.number.multiget.keys.read",
    "shale.number.multiget.keys.found",
    "shale.number.merge.failures",
    "shale.wal.synced",
    "shale.wal.bytes",
    "shale.write.self",
    "shale.write.other",
    "shale.write.wal",
    "shale.stall.micros",
    "shale.compact.read.bytes",
    "shale.compact.write.bytes",
    "shale.flush.write.bytes",
    "shale.number.flushes",
    "shale.async.read.submitted",
    "shale.async.read.fallback",
    "shale.number.rate_limiter.drains",
    "shale.bloom.filter.prefix.checked",
    "shale.bloom.filter.prefix.useful",
    "shale.compaction.range.del.files.skipped",
    "shale.compaction.range.del.bytes.skipped",
    "shale.number.reseeks.iteration",
    "shale.compact.read.triggered",
};

constexpr std::array<const char*, HISTOGRAM_ENUM_MAX> kHistogramNames = {
    "shale.db.get.micros",
    "shale.db.multiget.micros",
    "shale.db.write.micros",
    "shale.db.get.merge.operands.micros",
    "shale.sst.read.micros",
    "shale.wal.file.sync.micros",
    "shale.write.group.size",
    "shale.bytes.per.write",
    "shale.num.subcompactions.scheduled",
};

// An enum value added without its name would print as null: every slot must be filled.
template <size_t N>
constexpr bool AllNamed(const std::array<const char*, N>& names) {
  for (const char* name : names) {
    if (name == nullptr) return false;
  }
  return true;
}
static_assert(AllNamed(kTickerNames), "every ticker needs a name");
static_assert(AllNamed(kHistogramNames), "every histogram needs a name");

// Lock-free counters and histograms, one set per Statistics object.
// Thread safety: all methods are safe to call concurrently.
class StatisticsImpl final : public Statistics {
 public:
  StatisticsImpl() { Reset(); }

  uint64_t getTickerCount(uint32_t ticker) const override {
    return ticker < TICKER_ENUM_MAX ? tickers_[ticker].value.load(std::memory_order_relaxed) : 0;
  }
  void recordTick(uint32_t ticker, uint64_t count) override {
    if (ticker < TICKER_ENUM_MAX) {
      tickers_[ticker].value.fetch_add(count, std::memory_order_relaxed);
    }
  }
  void setTickerCount(uint32_t ticker, uint64_t count) override {
    if (ticker < TICKER_ENUM_MAX) tickers_[ticker].value.store(count, std::memory_order_relaxed);
  }
  void recordInHistogram(uint32_t histogram, uint64_t value) override {
    if (histogram < HISTOGRAM_ENUM_MAX) histograms_[histogram].Add(value);
  }
  void histogramData(uint32_t histogram, HistogramData* data) const override {
    *data = HistogramData();
    if (histogram >= HISTOGRAM_ENUM_MAX) return;
    Histogram h = histograms_[histogram].Snapshot();
    data->median = h.Median();
    data->percentile95 = h.Percentile(95);
    data->percentile99 = h.Percentile(99);
    data->average = h.Average();
    data->standard_deviation = h.StandardDeviation();
    data->max = h.max();
    data->min = h.min();
    data->count = h.count();
    data->sum = h.sum();
  }
  void Reset() override {
    for (auto& t : tickers_) t.value.store(0, std::memory_order_relaxed);
    for (auto& h : histograms_) h.Clear();
  }
  std::string ToString() const override {
    std::string r;
    for (uint32_t t = 0; t < TICKER_ENUM_MAX; t++) {
      r += fmt::format("{} COUNT : {}\n", kTickerNames[t], getTickerCount(t));
    }
    for (uint32_t h = 0; h < HISTOGRAM_ENUM_MAX; h++) {
      HistogramData d;
      histogramData(h, &d);
      r += fmt::format(
          "{} P50 : {:.6f} P95 : {:.6f} P99 : {:.6f} P100 : {:.6f} COUNT : {} SUM : {}\n",
          kHistogramNames[h], d.median, d.percentile95, d.percentile99, d.max, d.count, d.sum);
    }
    return r;
  }

 private:
  struct alignas(kCacheLineBytes) Ticker {
    std::atomic<uint64_t> value{0};
  };
  std::array<Ticker, TICKER_ENUM_MAX> tickers_;
  std::array<AtomicHistogram, HISTOGRAM_ENUM_MAX> histograms_;
};

}  // namespace

const char* TickerName(Tickers ticker) {
  return ticker < TICKER_ENUM_MAX ? kTickerNames[ticker] : "unknown";
}

const char* HistogramName(Histograms histogram) {
  return histogram < HISTOGRAM_ENUM_MAX ? kHistogramNames[histogram] : "unknown";
}

std::shared_ptr<Statistics> CreateDBStatistics() { return std::make_shared<StatisticsImpl>(); }

}  // namespace shale
