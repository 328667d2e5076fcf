// WaitWord: sleepers wake once the word changes, none is lost, and a waiter that finds the word
// already changed returns at once.
#include "src/util/wait_word.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace shale {
namespace {

TEST(WaitWordConcurrentTest, ReturnsAtOnceWhenTheWordAlreadyChanged) {
  WaitWord word(5);
  word.WaitWhile(4);  // would block forever if it slept on a changed word
  EXPECT_EQ(word.Load(), 5u);
}

// Many threads step a shared word forward, each waiting for its turn: every step needs the
// previous thread's Store + WakeAll to reach a sleeper, so a lost wake-up hangs the test.
TEST(WaitWordConcurrentTest, EveryTurnReachesItsSleeper) {
  constexpr uint32_t kThreads = 6;
  constexpr uint32_t kRounds = 2000;
  WaitWord turn(0);
  std::atomic<uint32_t> steps{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (uint32_t r = 0; r < kRounds; r++) {
        const uint32_t mine = r * kThreads + t;
        while (true) {
          const uint32_t now = turn.Load();
          if (now == mine) break;
          ASSERT_LT(now, mine);
          turn.WaitWhile(now);
        }
        steps.fetch_add(1, std::memory_order_relaxed);
        turn.Store(mine + 1);
        turn.WakeAll();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(steps.load(), kThreads * kRounds);
  EXPECT_EQ(turn.Load(), kThreads * kRounds);
}

}  // namespace
}  // namespace shale
