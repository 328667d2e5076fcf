// SlabAllocator: distinct, aligned, writable slots of the right class; slabs given back when
// empty (one kept per class); concurrent use from several threads; Default()'s thread caches.
#include "src/util/slab_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace shale {
namespace {

size_t SlotsPerSlab(size_t n) {
  return (SlabAllocator::kSlabSize - SlabAllocator::kGranule) / SlabAllocator::UsableSize(n);
}

// `full` slabs' worth of allocations of n bytes, and one more (which starts another slab).
std::vector<char*> FillSlabs(SlabAllocator* allocator, size_t n, size_t full) {
  std::vector<char*> blocks;
  for (size_t i = 0; i < SlotsPerSlab(n) * full + 1; i++) blocks.push_back(allocator->Allocate(n));
  return blocks;
}

TEST(SlabAllocatorTest, SlotsAreDistinctAlignedAndKeepTheirBytes) {
  SlabAllocator allocator;
  std::mt19937 rnd(7);
  std::vector<std::pair<char*, size_t>> live;
  for (int i = 0; i < 3000; i++) {
    const size_t n = 1 + rnd() % 20000;  // both sides of kMaxSlot
    char* p = allocator.Allocate(n);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
    std::memset(p, static_cast<char>(i), n);
    live.emplace_back(p, n);
  }
  for (size_t i = 0; i < live.size(); i++) {
    const auto [p, n] = live[i];
    for (size_t j = 0; j < n; j += 97) {
      ASSERT_EQ(p[j], static_cast<char>(i)) << "allocation " << i << " overwritten";
    }
    ASSERT_EQ(p[n - 1], static_cast<char>(i));
  }
  for (const auto& [p, n] : live) allocator.Free(p, n);
}

TEST(SlabAllocatorTest, UsableSizeIsTheSlot) {
  EXPECT_EQ(SlabAllocator::UsableSize(1), 256u);
  EXPECT_EQ(SlabAllocator::UsableSize(256), 256u);
  EXPECT_EQ(SlabAllocator::UsableSize(4101), 4352u);
  EXPECT_EQ(SlabAllocator::UsableSize(SlabAllocator::kMaxSlot), SlabAllocator::kMaxSlot);
  EXPECT_EQ(SlabAllocator::UsableSize(SlabAllocator::kMaxSlot + 1), SlabAllocator::kMaxSlot + 1);
  SlabBuffer empty;
  EXPECT_EQ(empty.usable_size(), 0u);
  SlabBuffer block(4101);
  EXPECT_EQ(block.usable_size(), 4352u);
  SlabBuffer moved(std::move(block));
  EXPECT_FALSE(block);
  EXPECT_EQ(moved.size(), 4101u);
}

TEST(SlabAllocatorTest, EmptySlabsAreReturnedButOnePerClassIsKept) {
  SlabAllocator allocator;
  const size_t n = 4101;
  const size_t per_slab = SlotsPerSlab(n);
  std::vector<char*> blocks = FillSlabs(&allocator, n, 3);
  EXPECT_EQ(allocator.SlabCount(), 4u);
  // Free every slot of the first slab: it is returned.
  for (size_t i = 0; i < per_slab; i++) allocator.Free(blocks[i], n);
  EXPECT_EQ(allocator.SlabCount(), 3u);
  // Freed slots are reused before a new slab is made.
  char* again = allocator.Allocate(n);
  allocator.Free(again, n);
  for (size_t i = per_slab; i < blocks.size(); i++) allocator.Free(blocks[i], n);
  EXPECT_EQ(allocator.SlabCount(), 1u);
  // Another class has its own slabs.
  char* small = allocator.Allocate(100);
  EXPECT_EQ(allocator.SlabCount(), 2u);
  allocator.Free(small, 100);
  // Large requests bypass the slabs.
  char* large = allocator.Allocate(SlabAllocator::kMaxSlot + 1);
  EXPECT_EQ(allocator.SlabCount(), 2u);
  allocator.Free(large, SlabAllocator::kMaxSlot + 1);
}

// An empty slab whose class has no other room is kept: otherwise a cache evicting and
// inserting one block of that class at a time would map and unmap a slab on every pair.
TEST(SlabAllocatorTest, AnEmptySlabIsKeptWhileTheOthersAreFull) {
  SlabAllocator allocator;
  const size_t n = 4101;
  std::vector<char*> blocks = FillSlabs(&allocator, n, 2);
  EXPECT_EQ(allocator.SlabCount(), 3u);
  for (int round = 0; round < 10; round++) {
    allocator.Free(blocks.back(), n);  // the third slab is empty, the others are full
    EXPECT_EQ(allocator.SlabCount(), 3u);
    blocks.back() = allocator.Allocate(n);
    EXPECT_EQ(allocator.SlabCount(), 3u);
  }
  for (char* p : blocks) allocator.Free(p, n);
  EXPECT_EQ(allocator.SlabCount(), 1u);
}

// Under AddressSanitizer a read past the request, or of a freed slot, is reported although
// the bytes belong to the slab.
TEST(SlabAllocatorDeathTest, OverrunsAndUseAfterFreeAreReported) {
  if (!SlabAllocator::kPoisons) GTEST_SKIP() << "not an AddressSanitizer build";
  auto expect_poisoned = [](const char* at) {
    EXPECT_DEATH(
        {
          volatile char c = *at;
          (void)c;
        },
        "use-after-poison");
  };
  SlabAllocator allocator;
  char* p = allocator.Allocate(100);
  char* q = allocator.Allocate(100);
  expect_poisoned(p + 100);
  allocator.Free(q, 100);
  expect_poisoned(q + 50);
  allocator.Free(p, 100);
  // A reused slot: only the request's bytes are addressable, even under the free-list link.
  char* tiny = allocator.Allocate(2);
  expect_poisoned(tiny + 4);
  allocator.Free(tiny, 2);
  // A slot in a thread's cache is poisoned whole.
  char* cached = SlabAllocator::Default().Allocate(100);
  SlabAllocator::Default().Free(cached, 100);
  expect_poisoned(cached);
  expect_poisoned(cached + 99);
  // Freeing it again is caught before the cache could hand it out twice.
  EXPECT_DEATH(SlabAllocator::Default().Free(cached, 100), "SHALE_IS_POISONED");
}

// Threads allocate, fill, check and free blocks of a few classes at once, and free blocks
// other threads allocated (handed over through a shared pool, as a block cache evicts blocks
// another thread read); a slot handed to two threads, or a free-list link written into a live
// slot, shows as a changed byte.
void ShareSlotsBetweenThreads(SlabAllocator* allocator) {
  struct Block {
    char* p;
    size_t n;
    char fill;
  };
  std::mutex pool_mu;
  std::vector<Block> pool;
  std::vector<int> bad(3, 0);
  auto check_and_free = [&](const Block& b, int t) {
    if (b.p[0] != b.fill || b.p[b.n / 2] != b.fill || b.p[b.n - 1] != b.fill) bad[t]++;
    allocator->Free(b.p, b.n);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) {
    threads.emplace_back([&, t] {
      std::mt19937 rnd(100 + t);
      std::vector<Block> mine;
      for (int i = 0; i < 20000; i++) {
        if (mine.size() < 64 && (mine.empty() || rnd() % 2 == 0)) {
          const size_t n = 200 + rnd() % 5000;
          const char fill = static_cast<char>('a' + t * 8 + i % 8);
          char* p = allocator->Allocate(n);
          std::memset(p, fill, n);
          mine.push_back({p, n, fill});
          continue;
        }
        const size_t k = rnd() % mine.size();
        const Block b = mine[k];
        mine[k] = mine.back();
        mine.pop_back();
        if (rnd() % 4 == 0) {
          // Hand this block to whichever thread takes from the pool next; free one from it.
          std::optional<Block> other;
          {
            std::lock_guard<std::mutex> lock(pool_mu);
            pool.push_back(b);
            if (pool.size() > 8) {
              other = pool.front();
              pool.erase(pool.begin());
            }
          }
          if (other) check_and_free(*other, t);
        } else {
          check_and_free(b, t);
        }
      }
      for (const Block& b : mine) check_and_free(b, t);
    });
  }
  for (auto& th : threads) th.join();
  for (const Block& b : pool) check_and_free(b, 0);
  EXPECT_EQ(bad, std::vector<int>(3, 0));
}

TEST(ConcurrentSlabAllocatorTest, ThreadsNeverShareASlot) {
  SlabAllocator allocator;
  ShareSlotsBetweenThreads(&allocator);
  // Every slot came back: one empty slab is kept for each of the classes used (sizes 200 to
  // 5,199 bytes: classes of 256 to 5,376 bytes).
  EXPECT_EQ(allocator.SlabCount(), SlabAllocator::UsableSize(5199) / SlabAllocator::kGranule);
}

// The same through Default(), whose threads keep freed slots in their caches.
TEST(ConcurrentSlabAllocatorTest, ThreadCachesNeverShareASlot) {
  ShareSlotsBetweenThreads(&SlabAllocator::Default());
}

// Default()'s threads keep freed slots (so their slabs stay) until the thread exits or calls
// ReleaseThreadCache; then the slabs empty and all but one per class are returned.
TEST(SlabAllocatorTest, ThreadCachesHoldFreedSlotsUntilReleased) {
  SlabAllocator& allocator = SlabAllocator::Default();
  const size_t n = 16000;  // class 16128: 16 slots fill a thread's byte bound
  // The class holds exactly its one kept, empty slab from here (whatever ran before).
  allocator.Free(allocator.Allocate(n), n);
  SlabAllocator::ReleaseThreadCache();
  const size_t before = allocator.SlabCount();
  auto fill_and_free = [&] {
    std::vector<char*> blocks = FillSlabs(&allocator, n, 2);  // the kept slab and 2 new ones
    EXPECT_EQ(allocator.SlabCount(), before + 2);
    for (char* p : blocks) allocator.Free(p, n);
    // The last freed slots (of the second and third slabs) are in this thread's cache.
    EXPECT_GE(allocator.SlabCount(), before + 1);
  };
  std::thread exits(fill_and_free);
  exits.join();
  EXPECT_EQ(allocator.SlabCount(), before);
  fill_and_free();
  SlabAllocator::ReleaseThreadCache();
  EXPECT_EQ(allocator.SlabCount(), before);
  // A cached slot is reused by its thread.
  char* p = allocator.Allocate(n);
  allocator.Free(p, n);
  EXPECT_EQ(allocator.Allocate(n), p);
  allocator.Free(p, n);
  SlabAllocator::ReleaseThreadCache();
}

}  // namespace
}  // namespace shale
