#include "src/util/histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace shale {

HistogramBuckets::HistogramBuckets() {
  double limit = 1;
  for (int b = 0; b < kNumBuckets; b++) {
    if (b < 10) {
      limits_[b] = b + 1;
      limit = b + 1;
    } else {
      limit = std::max(limit * 1.08, limit + 1);
      limits_[b] = static_cast<uint64_t>(limit);
    }
  }
  limits_[kNumBuckets - 1] = std::numeric_limits<uint64_t>::max();
}

const HistogramBuckets& HistogramBuckets::Instance() {
  static const HistogramBuckets instance;
  return instance;
}

int HistogramBuckets::IndexOf(uint64_t value) {
  const auto& limits = Instance().limits_;
  if (value < 10) return static_cast<int>(value);
  return static_cast<int>(std::upper_bound(limits.begin(), limits.end(), value) - limits.begin());
}

void Histogram::Clear() {
  min_ = std::numeric_limits<uint64_t>::max();
  max_ = 0;
  count_ = 0;
  sum_ = 0;
  sum_squares_ = 0;
  buckets_.fill(0);
}

void Histogram::Add(uint64_t value) {
  buckets_[HistogramBuckets::IndexOf(value)]++;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  count_++;
  sum_ += value;
  sum_squares_ += static_cast<double>(value) * static_cast<double>(value);
}

void Histogram::Merge(const Histogram& other) {
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  for (int b = 0; b < HistogramBuckets::kNumBuckets; b++) buckets_[b] += other.buckets_[b];
}

double Histogram::Average() const {
  return count_ == 0 ? 0 : static_cast<double>(sum_) / static_cast<double>(count_);
}

double Histogram::StandardDeviation() const {
  if (count_ == 0) return 0;
  double n = static_cast<double>(count_);
  double variance =
      (sum_squares_ * n - static_cast<double>(sum_) * static_cast<double>(sum_)) / (n * n);
  return variance <= 0 ? 0 : std::sqrt(variance);
}

double Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  double threshold = static_cast<double>(count_) * (p / 100.0);
  double cumulative = 0;
  for (int b = 0; b < HistogramBuckets::kNumBuckets; b++) {
    double in_bucket = static_cast<double>(buckets_[b]);
    if (in_bucket == 0) continue;
    if (cumulative + in_bucket >= threshold) {
      // Interpolate linearly inside the bucket, then clamp to the observed range.
      double left = b == 0 ? 0 : static_cast<double>(HistogramBuckets::Limit(b - 1));
      double right = static_cast<double>(HistogramBuckets::Limit(b));
      if (b == HistogramBuckets::kNumBuckets - 1) right = static_cast<double>(max_);
      double pos = (threshold - cumulative) / in_bucket;
      double r = left + (right - left) * pos;
      return std::clamp(r, static_cast<double>(min_), static_cast<double>(max_));
    }
    cumulative += in_bucket;
  }
  return static_cast<double>(max_);
}

std::string Histogram::ToString() const {
  std::string r = fmt::format("Count: {} Average: {:.4f}  StdDev: {:.2f}\n", count_, Average(),
                              StandardDeviation());
  r += fmt::format("Min: {}  Median: {:.4f}  Max: {}\n", count_ == 0 ? 0 : min_, Median(), max_);
  r += fmt::format(
      "Percentiles: P50: {:.2f} P75: {:.2f} P99: {:.2f} P99.9: {:.2f} P99.99: {:.2f}\n",
      Percentile(50), Percentile(75), Percentile(99), Percentile(99.9), Percentile(99.99));
  r += "------------------------------------------------------\n";
  if (count_ == 0) return r;
  double cumulative = 0;
  for (int b = 0; b < HistogramBuckets::kNumBuckets; b++) {
    if (buckets_[b] == 0) continue;
    cumulative += static_cast<double>(buckets_[b]);
    double pct = 100.0 * static_cast<double>(buckets_[b]) / static_cast<double>(count_);
    r += fmt::format("[ {:>7}, {:>7} ) {:>8} {:>7.3f}% {:>7.3f}% {}\n",
                     b == 0 ? 0 : HistogramBuckets::Limit(b - 1), HistogramBuckets::Limit(b),
                     buckets_[b], pct, 100.0 * cumulative / static_cast<double>(count_),
                     std::string(static_cast<size_t>(pct / 5 + 0.5), '#'));
  }
  return r;
}

void AtomicHistogram::Clear() {
  min_.store(std::numeric_limits<uint64_t>::max(), std::memory_order_relaxed);
  max_.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
  sum_.store(0, std::memory_order_relaxed);
  sum_squares_.store(0, std::memory_order_relaxed);
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
}

void AtomicHistogram::Add(uint64_t value) {
  buckets_[HistogramBuckets::IndexOf(value)].fetch_add(1, std::memory_order_relaxed);
  uint64_t cur = min_.load(std::memory_order_relaxed);
  while (value < cur && !min_.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
  cur = max_.load(std::memory_order_relaxed);
  while (value > cur && !max_.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  sum_squares_.fetch_add(value * value, std::memory_order_relaxed);
}

Histogram AtomicHistogram::Snapshot() const {
  Histogram h;
  h.min_ = min_.load(std::memory_order_relaxed);
  h.max_ = max_.load(std::memory_order_relaxed);
  h.count_ = count_.load(std::memory_order_relaxed);
  h.sum_ = sum_.load(std::memory_order_relaxed);
  h.sum_squares_ = static_cast<double>(sum_squares_.load(std::memory_order_relaxed));
  for (int b = 0; b < HistogramBuckets::kNumBuckets; b++) {
    h.buckets_[b] = buckets_[b].load(std::memory_order_relaxed);
  }
  return h;
}

}  // namespace shale
