// A monotonic clock in microseconds, for latency statistics and stall accounting.
// Thread safety: a pure function.
#pragma once

#include <chrono>
#include <cstdint>

namespace shale {

inline uint64_t NowMicros() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace shale
