// The sharded LRU cache: lookup/insert/replace/erase, pinning, eviction order, usage and
// pinned-usage accounting, strict capacity, and concurrent use.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"
#include "src/util/random.h"

namespace shale {
namespace {

// Values are heap ints; deleted values are recorded.
std::vector<std::pair<int, int>>* g_deleted = nullptr;

std::string Key(int k) {
  std::string s;
  PutFixed32(&s, static_cast<uint32_t>(k));
  return s;
}

void Deleter(const Slice& key, void* value) {
  std::unique_ptr<int> v(static_cast<int*>(value));
  if (g_deleted != nullptr) {
    g_deleted->emplace_back(static_cast<int>(DecodeFixed32(key.data())), *v);
  }
}

class LRUCacheTest : public ::testing::Test {
 protected:
  static constexpr size_t kCapacity = 1000;
  LRUCacheTest() : cache_(NewLRUCache(kCapacity, 0)) { g_deleted = &deleted_; }
  ~LRUCacheTest() override {
    cache_.reset();
    g_deleted = nullptr;
  }

  int Lookup(int key) {
    Cache::Handle* h = cache_->Lookup(Key(key));
    if (h == nullptr) return -1;
    const int v = *static_cast<int*>(cache_->Value(h));
    cache_->Release(h);
    return v;
  }
  void Insert(int key, int value, size_t charge = 1) {
    ASSERT_TRUE(cache_->Insert(Key(key), new int(value), charge, &Deleter).ok());
  }
  Cache::Handle* InsertPinned(int key, int value, size_t charge = 1) {
    Cache::Handle* h = nullptr;
    EXPECT_TRUE(cache_->Insert(Key(key), new int(value), charge, &Deleter, &h).ok());
    return h;
  }

  std::shared_ptr<Cache> cache_;
  std::vector<std::pair<int, int>> deleted_;
};

TEST_F(LRUCacheTest, HitAndMiss) {
  EXPECT_EQ(Lookup(100), -1);
  Insert(100, 101);
  EXPECT_EQ(Lookup(100), 101);
  EXPECT_EQ(Lookup(200), -1);
  Insert(200, 201);
  EXPECT_EQ(Lookup(100), 101);
  EXPECT_EQ(Lookup(200), 201);
  Insert(100, 102);  // replaces
  EXPECT_EQ(Lookup(100), 102);
  ASSERT_EQ(deleted_.size(), 1u);
  EXPECT_EQ(deleted_[0], std::make_pair(100, 101));
  EXPECT_EQ(cache_->GetUsage(), 2u);
}

TEST_F(LRUCacheTest, EraseAndPinnedEntriesOutliveErase) {
  Insert(1, 10);
  cache_->Erase(Key(1));
  EXPECT_EQ(Lookup(1), -1);
  ASSERT_EQ(deleted_.size(), 1u);
  cache_->Erase(Key(2));  // absent: no-op

  Cache::Handle* h = InsertPinned(3, 30);
  cache_->Erase(Key(3));
  EXPECT_EQ(Lookup(3), -1);
  EXPECT_EQ(deleted_.size(), 1u);  // still pinned
  EXPECT_EQ(*static_cast<int*>(cache_->Value(h)), 30);
  EXPECT_EQ(cache_->GetPinnedUsage(), 1u);
  cache_->Release(h);
  EXPECT_EQ(deleted_.size(), 2u);
  EXPECT_EQ(cache_->GetUsage(), 0u);
  EXPECT_EQ(cache_->GetPinnedUsage(), 0u);
}

TEST_F(LRUCacheTest, ReplacedPinnedEntryStaysValid) {
  Cache::Handle* h1 = InsertPinned(1, 100);
  Insert(1, 200);
  EXPECT_EQ(Lookup(1), 200);
  EXPECT_EQ(*static_cast<int*>(cache_->Value(h1)), 100);
  EXPECT_TRUE(deleted_.empty());
  cache_->Release(h1);
  ASSERT_EQ(deleted_.size(), 1u);
  EXPECT_EQ(deleted_[0], std::make_pair(1, 100));
}

TEST_F(LRUCacheTest, EvictsLeastRecentlyUsedFirst) {
  Insert(100, 101);
  Insert(200, 201);
  Insert(300, 301);
  for (int i = 0; i < static_cast<int>(kCapacity) + 100; i++) {
    Insert(1000 + i, 2000 + i);
    EXPECT_EQ(Lookup(1000 + i), 2000 + i);
    EXPECT_EQ(Lookup(100), 101);  // kept hot
  }
  EXPECT_EQ(Lookup(100), 101);
  EXPECT_EQ(Lookup(200), -1);
  EXPECT_EQ(Lookup(300), -1);
  EXPECT_LE(cache_->GetUsage(), kCapacity);
}

TEST_F(LRUCacheTest, PinnedEntriesAreNeverEvicted) {
  Cache::Handle* h = InsertPinned(1, 10, 500);
  for (int i = 0; i < 100; i++) Insert(100 + i, i, 100);
  EXPECT_EQ(*static_cast<int*>(cache_->Value(h)), 10);
  EXPECT_EQ(Lookup(1), 10);
  EXPECT_EQ(cache_->GetPinnedUsage(), 500u);
  cache_->Release(h);
  EXPECT_EQ(cache_->GetPinnedUsage(), 0u);
  EXPECT_LE(cache_->GetUsage(), kCapacity);
}

TEST_F(LRUCacheTest, HeavyEntriesAndOverCapacityPins) {
  // An unpinned entry bigger than the cache is not kept.
  Insert(1, 1, kCapacity + 1);
  EXPECT_EQ(Lookup(1), -1);
  EXPECT_EQ(deleted_.size(), 1u);
  // A pinned one is kept while pinned (usage may exceed capacity) and dropped on release.
  Cache::Handle* h = InsertPinned(2, 2, kCapacity + 1);
  EXPECT_EQ(cache_->GetUsage(), kCapacity + 1);
  cache_->Release(h);
  EXPECT_EQ(Lookup(2), -1);
  EXPECT_EQ(cache_->GetUsage(), 0u);
}

TEST_F(LRUCacheTest, RefAddsPins) {
  Cache::Handle* h = InsertPinned(1, 10);
  cache_->Ref(h);
  cache_->Erase(Key(1));
  cache_->Release(h);
  EXPECT_TRUE(deleted_.empty());
  cache_->Release(h);
  EXPECT_EQ(deleted_.size(), 1u);
}

TEST_F(LRUCacheTest, SetCapacityEvicts) {
  for (int i = 0; i < 100; i++) Insert(i, i, 10);
  EXPECT_EQ(cache_->GetUsage(), 1000u);
  cache_->SetCapacity(200);
  EXPECT_EQ(cache_->GetCapacity(), 200u);
  EXPECT_LE(cache_->GetUsage(), 200u);
  EXPECT_EQ(Lookup(99), 99);
  cache_->EraseUnRefEntries();
  EXPECT_EQ(cache_->GetUsage(), 0u);
}

TEST(LRUCacheStrictTest, StrictLimitRefusesInsteadOfOvershooting) {
  auto cache = NewLRUCache(100, 0, /*strict_capacity_limit=*/true);
  Cache::Handle* h = nullptr;
  int* v1 = new int(1);
  ASSERT_TRUE(cache->Insert("a", v1, 80, &Deleter, &h).ok());
  int* v2 = new int(2);
  Cache::Handle* h2 = nullptr;
  Status s = cache->Insert("b", v2, 50, &Deleter, &h2);
  EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
  EXPECT_EQ(h2, nullptr);
  std::unique_ptr<int> still_ours(v2);  // the caller keeps the value on failure
  cache->Release(h);
  ASSERT_TRUE(cache->Insert("b", still_ours.release(), 50, &Deleter).ok());
  EXPECT_LE(cache->GetUsage(), 100u);
}

// Every handle is Released before its cache is destroyed (include/shale/cache.h); the
// destructor checks it, for an entry pinned in the cache, one erased while pinned, and one of
// charge 0 (which pinned usage would not show).
TEST(LRUCacheDeathTest, DestroyedWhileAHandleIsHeld) {
  if (!kInvariantChecks) GTEST_SKIP() << "SHALE_ASSERT is compiled out";
  auto destroy_holding_a_pin = [](bool erase, size_t charge) {
    auto cache = NewLRUCache(100, 0);
    cache->Insert("k", new int(1), charge, &Deleter).PermitUncheckedError();
    (void)cache->Lookup("k");  // a pin never released
    if (erase) cache->Erase("k");
    cache.reset();
  };
  EXPECT_DEATH(destroy_holding_a_pin(false, 1), "pinned_entries_ == 0");
  EXPECT_DEATH(destroy_holding_a_pin(true, 1), "pinned_entries_ == 0");
  EXPECT_DEATH(destroy_holding_a_pin(true, 0), "pinned_entries_ == 0");
}

TEST(LRUCacheShardsTest, NewIdIsUniqueAndShardsSplitCapacity) {
  auto cache = NewLRUCache(64 << 20);  // picks shards itself
  std::set<uint64_t> ids;
  for (int i = 0; i < 1000; i++) ids.insert(cache->NewId());
  EXPECT_EQ(ids.size(), 1000u);
  for (int i = 0; i < 10000; i++) {
    ASSERT_TRUE(cache->Insert(Key(i), new int(i), 4096, &Deleter).ok());
  }
  EXPECT_LE(cache->GetUsage(), size_t{64} << 20);
  EXPECT_GT(cache->GetUsage(), size_t{30} << 20);
}

TEST(ConcurrentLRUCacheTest, ManyThreadsInsertLookupRelease) {
  auto cache = NewLRUCache(1 << 16, 3);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Random rnd(t + 1);
      for (int i = 0; i < 20000; i++) {
        const int k = static_cast<int>(rnd.Uniform(2000));
        if (rnd.OneIn(3)) {
          Cache::Handle* h = nullptr;
          if (cache->Insert(Key(k), new int(k), 1 + rnd.Uniform(64), &Deleter, &h).ok()) {
            if (*static_cast<int*>(cache->Value(h)) != k) wrong++;
            cache->Release(h);
          }
        } else if (rnd.OneIn(20)) {
          cache->Erase(Key(k));
        } else if (Cache::Handle* h = cache->Lookup(Key(k)); h != nullptr) {
          if (*static_cast<int*>(cache->Value(h)) != k) wrong++;
          cache->Release(h);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache->GetPinnedUsage(), 0u);
  EXPECT_LE(cache->GetUsage(), size_t{1} << 16);
}

}  // namespace
}  // namespace shale
