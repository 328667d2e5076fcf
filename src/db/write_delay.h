// WriteDelay: how long a write group sleeps while writes are slowed down (L0 at
// level0_slowdown_writes_trigger, or pending compaction bytes at the soft limit), so that the
// slowed writes pass at Options::delayed_write_rate bytes per second.
//
// A credit of bytes refills at the rate; a group that finds too little credit sleeps until it
// has enough, but never less than a millisecond (shorter sleeps last longer than asked and
// cost a context switch per group). A slowdown episode starts with no credit, so its first
// group always sleeps; the credit never exceeds one millisecond of writing, so a pause within
// an episode does not save up a burst. Reset() ends an episode.
//
// Thread safety: none; DBImpl calls it under its mutex (from the write group leader).
#pragma once

#include <algorithm>
#include <cstdint>

namespace shale {

class WriteDelay {
 public:
  static constexpr uint64_t kMinSleepMicros = 1000;

  // REQUIRES: bytes_per_second > 0.
  explicit WriteDelay(uint64_t bytes_per_second) : rate_(bytes_per_second) {}

  // The microseconds a group of `bytes` must sleep at time now_micros (0: none); the sleep is
  // accounted for, so the next call comes after it.
  uint64_t Delay(uint64_t bytes, uint64_t now_micros) {
    if (!active_) {
      active_ = true;
      credit_ = 0;
      last_ = now_micros;
    }
    if (now_micros > last_) {
      credit_ = std::min(Cap(), credit_ + BytesIn(now_micros - last_));
      last_ = now_micros;
    }
    if (credit_ >= bytes) {
      credit_ -= bytes;
      return 0;
    }
    const uint64_t deficit = bytes - credit_;
    const uint64_t sleep = std::max(kMinSleepMicros, MicrosFor(deficit));
    // After the sleep the group's bytes are paid for; what the sleep earned beyond them stays.
    const uint64_t after = credit_ + BytesIn(sleep);
    credit_ = std::min(Cap(), after > bytes ? after - bytes : 0);
    last_ = now_micros + sleep;
    return sleep;
  }

  // The slowdown is over; the next one starts without credit.
  void Reset() { active_ = false; }

 private:
  uint64_t BytesIn(uint64_t micros) const {
    return static_cast<uint64_t>(static_cast<double>(micros) * static_cast<double>(rate_) / 1e6);
  }
  uint64_t MicrosFor(uint64_t bytes) const {
    return static_cast<uint64_t>(static_cast<double>(bytes) * 1e6 / static_cast<double>(rate_));
  }
  uint64_t Cap() const { return std::max<uint64_t>(BytesIn(kMinSleepMicros), 1); }

  const uint64_t rate_;  // bytes per second, > 0
  bool active_ = false;
  uint64_t credit_ = 0;  // bytes that may pass without sleeping
  uint64_t last_ = 0;    // when credit_ was last brought up to date
};

}  // namespace shale
