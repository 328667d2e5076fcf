// WriteDelay: slowed-down writes pass at the configured rate, in sleeps of at least 1 ms, and
// each slowdown starts without credit. Time is simulated: it advances by the sleeps asked for.
#include "src/db/write_delay.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace shale {
namespace {

constexpr uint64_t kRate = 1 << 20;  // bytes per second

TEST(WriteDelayTest, ASlowdownStartsWithASleepThenSpendsWhatItEarned) {
  WriteDelay d(kRate);
  EXPECT_EQ(d.Delay(100, 0), WriteDelay::kMinSleepMicros);
  // The 1 ms sleep earned 1,048 bytes; 100 were spent.
  EXPECT_EQ(d.Delay(900, 1000), 0u);
  EXPECT_GT(d.Delay(100, 1000), 0u);  // 48 bytes left: sleep again
  d.Reset();
  EXPECT_EQ(d.Delay(1, 500000), WriteDelay::kMinSleepMicros);
}

TEST(WriteDelayTest, WritesPassAtTheRateWhateverTheirSize) {
  for (uint64_t size : {10u, 100u, 4096u, 100000u}) {
    SCOPED_TRACE(size);
    WriteDelay d(kRate);
    uint64_t now = 0, bytes = 0;
    while (bytes < 10 * kRate) {
      uint64_t sleep = d.Delay(size, now);
      EXPECT_TRUE(sleep == 0 || sleep >= WriteDelay::kMinSleepMicros) << sleep;
      now += sleep;
      bytes += size;
    }
    // 10 seconds of writing at the rate, within 1 %.
    EXPECT_NEAR(static_cast<double>(now), 10e6, 1e5);
  }
}

TEST(WriteDelayTest, APauseDoesNotSaveUpABurst) {
  WriteDelay d(kRate);
  EXPECT_GT(d.Delay(100, 0), 0u);
  // After ten idle seconds at most 1 ms of credit is available.
  uint64_t now = 11000000, passed = 0;
  while (d.Delay(100, now) == 0) passed += 100;
  EXPECT_LE(passed, kRate / 1000 + 100);
}

}  // namespace
}  // namespace shale
