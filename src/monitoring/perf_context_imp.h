// Recording into the calling thread's PerfContext (include/shale/perf_context.h).
//
//   PerfCount(&PerfContext::block_read_count);          // +1 when counting is on
//   PerfTimer t(&PerfContext::block_read_time);           // adds the scope's ns when timing is on
//
// Disabled (the default), each site costs one thread-local load and a compare.
// Thread safety: touches only the calling thread's context.
#pragma once

#include <chrono>
#include <cstdint>

#include "shale/perf_context.h"

namespace shale {

namespace perf_internal {
inline thread_local PerfLevel level = PerfLevel::kDisable;
inline thread_local PerfContext context;

inline uint64_t NowNanos() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
}  // namespace perf_internal

using PerfMetric = uint64_t PerfContext::*;

inline bool PerfCountEnabled() { return perf_internal::level >= PerfLevel::kEnableCount; }
inline bool PerfTimeEnabled() {
  return perf_internal::level >= PerfLevel::kEnableTimeExceptForMutex;
}

inline void PerfCount(PerfMetric metric, uint64_t n = 1) {
  if (PerfCountEnabled()) perf_internal::context.*metric += n;
}

// Adds the nanoseconds between construction and destruction (or Stop) to a metric.
// Not copyable; lives on one thread's stack.
class PerfTimer {
 public:
  explicit PerfTimer(PerfMetric metric)
      : metric_(PerfTimeEnabled() ? metric : nullptr),
        start_(metric_ != nullptr ? perf_internal::NowNanos() : 0) {}
  PerfTimer(const PerfTimer&) = delete;
  PerfTimer& operator=(const PerfTimer&) = delete;
  ~PerfTimer() { Stop(); }

  void Stop() {
    if (metric_ == nullptr) return;
    perf_internal::context.*metric_ += perf_internal::NowNanos() - start_;
    metric_ = nullptr;
  }

 private:
  PerfMetric metric_;
  uint64_t start_;
};

}  // namespace shale
