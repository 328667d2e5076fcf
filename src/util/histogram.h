// Histogram: a distribution of non-negative values (latencies in microseconds, sizes) in
// geometric buckets (exact below 10, then ratio 1.08), with count, sum, min, max, mean, standard
// deviation and interpolated percentiles.
//
// Thread safety: Histogram is single-threaded (each db_bench thread has its own and they are
// merged); AtomicHistogram records lock-free from any thread and is what Statistics uses.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace shale {

class HistogramBuckets {
 public:
  static constexpr int kNumBuckets = 400;
  // The exclusive upper limit of bucket b.
  static uint64_t Limit(int b) { return Instance().limits_[b]; }
  // The bucket holding value.
  static int IndexOf(uint64_t value);

 private:
  HistogramBuckets();
  static const HistogramBuckets& Instance();
  std::array<uint64_t, kNumBuckets> limits_;
};

class Histogram {
 public:
  Histogram() { Clear(); }
  void Clear();
  void Add(uint64_t value);
  void Merge(const Histogram& other);

  uint64_t count() const { return count_; }
  uint64_t sum() const { return sum_; }
  double min() const { return count_ == 0 ? 0 : static_cast<double>(min_); }
  double max() const { return static_cast<double>(max_); }
  double Average() const;
  double StandardDeviation() const;
  // p in [0, 100].
  double Percentile(double p) const;
  double Median() const { return Percentile(50); }
  // Multi-line report: count/average/stddev, min/median/max, percentiles and bucket table.
  std::string ToString() const;

 private:
  friend class AtomicHistogram;
  uint64_t min_;
  uint64_t max_;
  uint64_t count_;
  uint64_t sum_;
  double sum_squares_;
  std::array<uint64_t, HistogramBuckets::kNumBuckets> buckets_;
};

class AtomicHistogram {
 public:
  AtomicHistogram() { Clear(); }
  void Clear();
  void Add(uint64_t value);
  // A consistent-enough copy for reporting (concurrent adds may be partly included).
  Histogram Snapshot() const;

 private:
  std::atomic<uint64_t> min_;
  std::atomic<uint64_t> max_;
  std::atomic<uint64_t> count_;
  std::atomic<uint64_t> sum_;
  std::atomic<uint64_t> sum_squares_;  // saturating; values are small enough in practice
  std::array<std::atomic<uint64_t>, HistogramBuckets::kNumBuckets> buckets_;
};

}  // namespace shale
