// A monotonic clock in microseconds, for latency statistics and stall accounting, and the wall
// clock for what people read (log lines, file names).
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>

namespace shale {

template <typename Clock>
inline uint64_t MicrosOf() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
          .count());
}

inline uint64_t NowMicros() { return MicrosOf<std::chrono::steady_clock>(); }
// Microseconds since the epoch.
inline uint64_t WallClockMicros() { return MicrosOf<std::chrono::system_clock>(); }

}  // namespace shale
