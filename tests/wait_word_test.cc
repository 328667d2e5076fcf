// WaitWord: sleepers wake once the word changes, none is lost, and a waiter that finds the word
// already changed returns at once.
#include "src/util/wait_word.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace shale {
namespace {

TEST(WaitWordConcurrentTest, ReturnsAtOnceWhenTheWordAlreadyChanged) {
  WaitWord word(5);
  word.WaitWhile(4);  // would block forever if it slept on a changed word
  EXPECT_EQ(word.Load(), 5u);
}

TEST(WaitWordConcurrentTest, SpinWhileStopsAtItsBoundOrWhenNotAllowed) {
  WaitWord word(7);
  std::atomic<bool> allowed{true};
  const std::atomic<bool> forbidden{false};
  EXPECT_TRUE(word.SpinWhile(6, std::chrono::microseconds(50), allowed));  // already changed
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(word.SpinWhile(7, std::chrono::microseconds(200), allowed));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::microseconds(200));
  // Not allowed: no spinning at all, even with a long bound.
  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(word.SpinWhile(7, std::chrono::seconds(20), forbidden));
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
}

// A spinner sees a Store made while it spins, and stops once its flag is cleared.
TEST(WaitWordConcurrentTest, SpinWhileSeesTheStoreOrItsFlag) {
  WaitWord word(0);
  std::atomic<bool> allowed{true};
  std::thread storer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    word.Store(1);
  });
  EXPECT_TRUE(word.SpinWhile(0, std::chrono::seconds(20), allowed));  // false after 20 s
  storer.join();
  std::thread clearer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    allowed.store(false);
  });
  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(word.SpinWhile(1, std::chrono::seconds(20), allowed));
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
  clearer.join();
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
