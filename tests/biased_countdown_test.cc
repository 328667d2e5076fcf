// BiasedCountdown: exactly one release reports the end, and only after all n, whichever
// threads make them.
#include "src/util/biased_countdown.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace shale {
namespace {

TEST(BiasedCountdownTest, LastReleaseOnTheCreatingThreadEndsIt) {
  for (bool bias : {true, false}) {
    BiasedCountdown countdown(5, bias);
    EXPECT_EQ(countdown.biased(), bias && BiasedCountdown::BiasSupported());
    for (int i = 0; i < 4; i++) EXPECT_FALSE(countdown.Release()) << i;
    EXPECT_TRUE(countdown.Release());
  }
}

TEST(BiasedCountdownTest, RearmForgetsEarlierReleases) {
  for (bool bias : {true, false}) {
    BiasedCountdown countdown(1000, bias);
    EXPECT_FALSE(countdown.Release());
    EXPECT_FALSE(countdown.Release());
    countdown.Rearm(2);
    EXPECT_FALSE(countdown.Release());
    EXPECT_TRUE(countdown.Release());
  }
}

TEST(BiasedCountdownTest, ReleaseOnAnotherThreadRevokesTheBiasOnce) {
  auto countdown = std::make_unique<BiasedCountdown>(4);
  EXPECT_FALSE(countdown->Release());  // the owner's, counted without the atomic
  bool ended = true;
  std::thread other([&] { ended = countdown->Release(); });
  other.join();
  EXPECT_FALSE(ended);
  EXPECT_FALSE(countdown->biased());
  EXPECT_FALSE(countdown->Release());  // the owner again, now on the shared count
  std::thread last([&] { ended = countdown->Release(); });
  last.join();
  EXPECT_TRUE(ended);
}

TEST(BiasedCountdownTest, AllReleasesOnOtherThreads) {
  auto countdown = std::make_unique<BiasedCountdown>(3);
  int ends = 0;
  for (int i = 0; i < 3; i++) {
    std::thread other([&] { ends += countdown->Release() ? 1 : 0; });
    other.join();
  }
  EXPECT_EQ(ends, 1);
}

// The owner and two other threads release a share each at the same time; the countdown is
// freed by whichever call reports the end, so a second report or an early one is a
// use-after-free (ASan, TSan) or a failed expectation.
TEST(ConcurrentBiasedCountdownTest, ExactlyOneEndAfterAllReleases) {
  std::mt19937 rnd(20261125);
  for (bool bias : {true, false}) {
    for (int trial = 0; trial < 400; trial++) {
      const size_t n = 1 + rnd() % 64;
      const bool rearm = rnd() % 2 == 0;
      auto* countdown = new BiasedCountdown(rearm ? 1000 : n, bias);
      if (rearm) {
        // As GetMergeOperands does: some releases before the real count is known.
        for (size_t i = 0; i < 3; i++) EXPECT_FALSE(countdown->Release());
        countdown->Rearm(n);
      }
      std::atomic<size_t> started{0};  // releases begun, counted before each Release()
      std::atomic<int> ends{0};
      auto release = [&](size_t count) {
        for (size_t i = 0; i < count; i++) {
          started.fetch_add(1, std::memory_order_relaxed);
          if (countdown->Release()) {
            EXPECT_EQ(started.load(std::memory_order_relaxed), n);
            ends.fetch_add(1);
            std::unique_ptr<BiasedCountdown> last(countdown);
          }
        }
      };
      const size_t a = rnd() % (n + 1);
      const size_t b = rnd() % (n - a + 1);
      std::thread t1([&] { release(a); });
      std::thread t2([&] { release(b); });
      release(n - a - b);
      t1.join();
      t2.join();
      EXPECT_EQ(ends.load(), 1) << "n " << n << " split " << a << "/" << b;
    }
  }
}

}  // namespace
}  // namespace shale
