// GenericRateLimiter (NewGenericRateLimiter): a token bucket with a queue per priority.
//
// A request that finds no queue and enough bytes takes them and returns. Otherwise it queues;
// one queued request at a time is the leader, which sleeps until the next refill time, adds a
// period's bytes and hands them out: the queues in priority order (every fairness-th refill,
// kLow first), each in arrival order, the request at a queue's head taking what is left and
// staying at the head until it has all its bytes. A request granted in full wakes; when the
// leader's own request is granted, it passes leadership to the head of the first non-empty
// queue. Bytes are added only while requests wait (or one finds the bucket short), so an idle
// limiter does not save up a burst beyond what was left.
#include "shale/rate_limiter.h"

#include <algorithm>
#include <chrono>
#include <deque>

#include "shale/statistics.h"
#include "src/util/clock.h"
#include "src/util/invariants.h"
#include "src/util/mutex.h"

namespace shale {

namespace {

class GenericRateLimiter final : public RateLimiter {
 public:
  GenericRateLimiter(int64_t rate, int64_t period_us, int32_t fairness, Mode mode)
      : RateLimiter(mode), period_us_(period_us), fairness_(fairness) {
    SetRateLocked(rate);
    available_ = burst_;
    next_refill_us_ = NowMicros() + static_cast<uint64_t>(period_us_);
  }

  void SetBytesPerSecond(int64_t rate) override {
    if (rate <= 0) return;
    MutexLock l(&mu_);
    SetRateLocked(rate);
  }
  int64_t GetBytesPerSecond() const override {
    MutexLock l(&mu_);
    return rate_;
  }
  int64_t GetSingleBurstBytes() const override {
    MutexLock l(&mu_);
    return burst_;
  }
  int64_t GetTotalBytesThrough(IOPriority pri) const override {
    MutexLock l(&mu_);
    return pri == IOPriority::kTotal ? bytes_[0] + bytes_[1] : bytes_[Index(pri)];
  }
  int64_t GetTotalRequests(IOPriority pri) const override {
    MutexLock l(&mu_);
    return pri == IOPriority::kTotal ? requests_[0] + requests_[1] : requests_[Index(pri)];
  }

  void Request(int64_t bytes, IOPriority pri, Statistics* stats) override {
    if (pri == IOPriority::kTotal || bytes <= 0) return;
    const int p = Index(pri);
    MutexLock l(&mu_);
    requests_[p]++;
    bytes_[p] += bytes;
    if (queue_[0].empty() && queue_[1].empty() && available_ >= bytes) {
      available_ -= bytes;
      return;
    }
    if (stats != nullptr) stats->recordTick(NUMBER_RATE_LIMITER_DRAINS);
    Waiter me(&mu_, bytes);
    queue_[p].push_back(&me);
    while (me.remaining > 0) {
      if (leader_ != nullptr) {
        me.cv.Wait();
        continue;
      }
      leader_ = &me;
      const uint64_t now = NowMicros();
      if (now < next_refill_us_) {
        me.cv.WaitFor(std::chrono::microseconds(next_refill_us_ - now));
      }
      if (NowMicros() >= next_refill_us_) RefillAndGrantLocked();
      leader_ = nullptr;
    }
    // Granted: someone still waiting leads the next refill.
    for (int q : {1, 0}) {
      if (!queue_[q].empty()) {
        queue_[q].front()->cv.Signal();
        break;
      }
    }
  }

 private:
  struct Waiter {
    Waiter(Mutex* mu, int64_t bytes) : remaining(bytes), cv(mu) {}
    int64_t remaining;
    CondVar cv;
  };

  static int Index(IOPriority pri) { return pri == IOPriority::kHigh ? 1 : 0; }

  void SetRateLocked(int64_t rate) REQUIRES(mu_) {
    rate_ = rate;
    burst_ = std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(rate) * static_cast<double>(period_us_) / 1e6));
  }

  void RefillAndGrantLocked() REQUIRES(mu_) {
    next_refill_us_ = NowMicros() + static_cast<uint64_t>(period_us_);
    available_ = std::min(available_ + burst_, burst_);
    const bool low_first = ++refills_ % static_cast<uint64_t>(fairness_) == 0;
    const int order[2] = {low_first ? 0 : 1, low_first ? 1 : 0};
    for (int q : order) {
      while (!queue_[q].empty() && available_ > 0) {
        Waiter* w = queue_[q].front();
        const int64_t take = std::min(w->remaining, available_);
        w->remaining -= take;
        available_ -= take;
        if (w->remaining > 0) break;  // the bucket is empty
        queue_[q].pop_front();
        w->cv.Signal();
      }
    }
    SHALE_ASSERT(available_ >= 0);
  }

  mutable Mutex mu_;
  const int64_t period_us_;
  const int32_t fairness_;
  int64_t rate_ GUARDED_BY(mu_) = 0;
  int64_t burst_ GUARDED_BY(mu_) = 0;
  int64_t available_ GUARDED_BY(mu_) = 0;
  uint64_t next_refill_us_ GUARDED_BY(mu_) = 0;
  uint64_t refills_ GUARDED_BY(mu_) = 0;
  std::deque<Waiter*> queue_[2] GUARDED_BY(mu_);  // [kLow], [kHigh]
  Waiter* leader_ GUARDED_BY(mu_) = nullptr;
  int64_t bytes_[2] GUARDED_BY(mu_) = {0, 0};
  int64_t requests_[2] GUARDED_BY(mu_) = {0, 0};
};

}  // namespace

std::unique_ptr<RateLimiter> NewGenericRateLimiter(int64_t rate_bytes_per_sec,
                                                   int64_t refill_period_us, int32_t fairness,
                                                   RateLimiter::Mode mode) {
  if (rate_bytes_per_sec <= 0 || refill_period_us <= 0 || fairness <= 0) return nullptr;
  return std::make_unique<GenericRateLimiter>(rate_bytes_per_sec, refill_period_us, fairness, mode);
}

}  // namespace shale
