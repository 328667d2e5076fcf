// RateLimiter: paces background IO (flush and compaction) to a byte rate, so that foreground
// reads and writes keep the device's bandwidth — RocksDB's Options::rate_limiter.
//
//   options.rate_limiter = shale::NewGenericRateLimiter(64 << 20);  // 64 MiB/s
//
// One limiter may be shared by several DBs (their background IO then shares the rate).
// Thread safety: every method is thread-safe.
#pragma once

#include <cstdint>
#include <memory>

namespace shale {

class Statistics;

// Who asks: flushes ask at kHigh, compactions at kLow; kTotal names both in the counters and,
// in a request, means "not limited".
enum class IOPriority : int { kLow = 0, kHigh = 1, kTotal = 2 };

class RateLimiter {
 public:
  enum class OpType { kRead, kWrite };
  // Which IO is limited: flush and compaction writes (the default), compaction reads, or both.
  enum class Mode { kReadsOnly, kWritesOnly, kAllIo };

  explicit RateLimiter(Mode mode) : mode_(mode) {}
  virtual ~RateLimiter() = default;

  // Changes the rate; values <= 0 are ignored.
  virtual void SetBytesPerSecond(int64_t bytes_per_second) = 0;
  virtual int64_t GetBytesPerSecond() const = 0;
  // Blocks until bytes may pass at pri (kTotal: returns at once, uncounted). A request larger
  // than GetSingleBurstBytes() passes in bursts. stats (may be null) counts each time a
  // request found the budget drained (shale.number.rate_limiter.drains).
  virtual void Request(int64_t bytes, IOPriority pri, Statistics* stats = nullptr) = 0;
  // The bytes one refill period grants.
  virtual int64_t GetSingleBurstBytes() const = 0;
  // Bytes and requests that passed, at pri or (kTotal) at every priority.
  virtual int64_t GetTotalBytesThrough(IOPriority pri = IOPriority::kTotal) const = 0;
  virtual int64_t GetTotalRequests(IOPriority pri = IOPriority::kTotal) const = 0;

  Mode GetMode() const { return mode_; }
  bool IsRateLimited(OpType op) const {
    return mode_ == Mode::kAllIo ||
           (op == OpType::kRead ? mode_ == Mode::kReadsOnly : mode_ == Mode::kWritesOnly);
  }

 private:
  const Mode mode_;
};

// A token bucket refilled every refill_period_us with rate_bytes_per_sec × the period. While
// requests wait, each refill serves kHigh requests first and kLow ones after, except that one
// refill in fairness serves kLow first (so compactions are never starved). Requests are served
// in arrival order within a priority; a request larger than what is left is served in parts.
// Null when rate_bytes_per_sec <= 0, refill_period_us <= 0 or fairness <= 0.
std::unique_ptr<RateLimiter> NewGenericRateLimiter(
    int64_t rate_bytes_per_sec, int64_t refill_period_us = 100 * 1000, int32_t fairness = 10,
    RateLimiter::Mode mode = RateLimiter::Mode::kWritesOnly);

}  // namespace shale
