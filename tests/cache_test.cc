// The caches behind NewLRUCache and HyperClockCacheOptions: lookup/insert/replace/erase,
// pinning, eviction order, usage and pinned-usage accounting, strict capacity, and concurrent
// use; then what only the CLOCK cache has (a fixed table of slots, inline and long keys).
#include "shale/cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

enum class Kind { kLRU, kClock };

// One shard; the CLOCK cache's table is sized for entries of charge estimate.
std::shared_ptr<Cache> MakeCache(Kind kind, size_t capacity, bool strict = false,
                                 size_t estimate = 1, int shard_bits = 0) {
  if (kind == Kind::kLRU) return NewLRUCache(capacity, shard_bits, strict);
  return HyperClockCacheOptions(capacity, estimate, shard_bits, strict).MakeSharedCache();
}

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::kLRU ? "LRU" : "Clock";
}

class CacheTest : public ::testing::TestWithParam<Kind> {
 protected:
  static constexpr size_t kCapacity = 1000;
  CacheTest() : cache_(MakeCache(GetParam(), kCapacity)) { g_deleted = &deleted_; }
  ~CacheTest() override {
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

TEST_P(CacheTest, HitAndMiss) {
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

TEST_P(CacheTest, PrefetchChangesNothing) {
  Insert(100, 101);
  const size_t usage = cache_->GetUsage();
  for (int k : {100, 200}) cache_->Prefetch(Key(k));
  cache_->Prefetch(Slice());
  EXPECT_EQ(cache_->GetUsage(), usage);
  EXPECT_EQ(Lookup(100), 101);
  EXPECT_EQ(Lookup(200), -1);
  EXPECT_TRUE(deleted_.empty());
}

TEST_P(CacheTest, EraseAndPinnedEntriesOutliveErase) {
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

TEST_P(CacheTest, ReplacedPinnedEntryStaysValid) {
  Cache::Handle* h1 = InsertPinned(1, 100);
  Insert(1, 200);
  EXPECT_EQ(Lookup(1), 200);
  EXPECT_EQ(*static_cast<int*>(cache_->Value(h1)), 100);
  EXPECT_TRUE(deleted_.empty());
  cache_->Release(h1);
  ASSERT_EQ(deleted_.size(), 1u);
  EXPECT_EQ(deleted_[0], std::make_pair(1, 100));
}

TEST_P(CacheTest, EvictsLeastRecentlyUsedFirst) {
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

TEST_P(CacheTest, PinnedEntriesAreNeverEvicted) {
  Cache::Handle* h = InsertPinned(1, 10, 500);
  for (int i = 0; i < 100; i++) Insert(100 + i, i, 100);
  EXPECT_EQ(*static_cast<int*>(cache_->Value(h)), 10);
  EXPECT_EQ(Lookup(1), 10);
  EXPECT_EQ(cache_->GetPinnedUsage(), 500u);
  cache_->Release(h);
  EXPECT_EQ(cache_->GetPinnedUsage(), 0u);
  EXPECT_LE(cache_->GetUsage(), kCapacity);
}

TEST_P(CacheTest, HeavyEntriesAndOverCapacityPins) {
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
  // One that does not fit still replaces the entry it was inserted over.
  Insert(3, 30);
  EXPECT_EQ(Lookup(3), 30);
  Insert(3, 31, kCapacity + 1);
  EXPECT_EQ(Lookup(3), -1);
  EXPECT_EQ(cache_->GetUsage(), 0u);
  EXPECT_EQ(deleted_.size(), 4u);
}

TEST_P(CacheTest, RefAddsPins) {
  Cache::Handle* h = InsertPinned(1, 10);
  cache_->Ref(h);
  cache_->Erase(Key(1));
  cache_->Release(h);
  EXPECT_TRUE(deleted_.empty());
  cache_->Release(h);
  EXPECT_EQ(deleted_.size(), 1u);
}

TEST_P(CacheTest, SetCapacityEvicts) {
  for (int i = 0; i < 100; i++) Insert(i, i, 10);
  EXPECT_EQ(cache_->GetUsage(), 1000u);
  cache_->SetCapacity(200);
  EXPECT_EQ(cache_->GetCapacity(), 200u);
  EXPECT_LE(cache_->GetUsage(), 200u);
  if (GetParam() == Kind::kLRU) {
    EXPECT_EQ(Lookup(99), 99);  // the most recent survives
  }
  cache_->EraseUnRefEntries();
  EXPECT_EQ(cache_->GetUsage(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CacheTest, ::testing::Values(Kind::kLRU, Kind::kClock), KindName);

class CacheKindTest : public ::testing::TestWithParam<Kind> {};
INSTANTIATE_TEST_SUITE_P(Kinds, CacheKindTest, ::testing::Values(Kind::kLRU, Kind::kClock),
                         KindName);

TEST_P(CacheKindTest, StrictLimitRefusesInsteadOfOvershooting) {
  auto cache = MakeCache(GetParam(), 100, /*strict=*/true);
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
using CacheDeathTest = CacheKindTest;
INSTANTIATE_TEST_SUITE_P(Kinds, CacheDeathTest, ::testing::Values(Kind::kLRU, Kind::kClock),
                         KindName);

TEST_P(CacheDeathTest, DestroyedWhileAHandleIsHeld) {
  if (!kInvariantChecks) GTEST_SKIP() << "SHALE_ASSERT is compiled out";
  const Kind kind = GetParam();
  auto destroy_holding_a_pin = [kind](bool erase, size_t charge) {
    auto cache = MakeCache(kind, 100);
    cache->Insert("k", new int(1), charge, &Deleter).PermitUncheckedError();
    (void)cache->Lookup("k");  // a pin never released
    if (erase) cache->Erase("k");
    cache.reset();
  };
  const char* check = kind == Kind::kLRU ? "pinned_entries_ == 0" : "Refs\\(st\\) == 0";
  EXPECT_DEATH(destroy_holding_a_pin(false, 1), check);
  EXPECT_DEATH(destroy_holding_a_pin(true, 1), check);
  EXPECT_DEATH(destroy_holding_a_pin(true, 0), check);
}

TEST_P(CacheKindTest, NewIdIsUniqueAndShardsSplitCapacity) {
  auto cache = GetParam() == Kind::kLRU ? NewLRUCache(64 << 20)  // picks shards itself
                                        : HyperClockCacheOptions(64 << 20, 4096).MakeSharedCache();
  std::set<uint64_t> ids;
  for (int i = 0; i < 1000; i++) ids.insert(cache->NewId());
  EXPECT_EQ(ids.size(), 1000u);
  for (int i = 0; i < 10000; i++) {
    ASSERT_TRUE(cache->Insert(Key(i), new int(i), 4096, &Deleter).ok());
  }
  EXPECT_LE(cache->GetUsage(), size_t{64} << 20);
  EXPECT_GT(cache->GetUsage(), size_t{30} << 20);
}

using ConcurrentCacheTest = CacheKindTest;
INSTANTIATE_TEST_SUITE_P(Kinds, ConcurrentCacheTest, ::testing::Values(Kind::kLRU, Kind::kClock),
                         KindName);

TEST_P(ConcurrentCacheTest, ManyThreadsInsertLookupRelease) {
  auto cache = MakeCache(GetParam(), 1 << 16, false, /*estimate=*/16, /*shard_bits=*/3);
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

// ---- The CLOCK cache's own behaviour ----

// The walks over every entry (destruction, EraseUnRefEntries, GetPinnedUsage) read only the
// pages of the table that inserts wrote: entries scattered over a table of thousands of pages,
// with the ones between them never written, are all found.
TEST(ClockCacheTest, WalksFindEntriesAnywhereInALargeTable) {
  std::vector<std::pair<int, int>> deleted;
  g_deleted = &deleted;
  // 4 shards of 2^17 slots of 64 bytes (8,192 pages of 4 KiB), of which a few hundred get entries.
  auto cache = HyperClockCacheOptions(200000, 1, 2).MakeSharedCache();
  Random rnd(11);
  std::set<int> live;
  std::vector<Cache::Handle*> pinned;
  for (int i = 0; i < 600; i++) {
    const int key = static_cast<int>(rnd.Uniform(1 << 30));
    if (!live.insert(key).second) continue;
    Cache::Handle* h = nullptr;
    const bool pin = i % 10 == 0;
    ASSERT_TRUE(cache->Insert(Key(key), new int(key), 3, &Deleter, pin ? &h : nullptr).ok());
    if (pin) pinned.push_back(h);
  }
  EXPECT_EQ(cache->GetPinnedUsage(), 3 * pinned.size());
  cache->EraseUnRefEntries();  // frees every unpinned entry
  EXPECT_EQ(deleted.size(), live.size() - pinned.size());
  EXPECT_EQ(cache->GetUsage(), 3 * pinned.size());
  for (Cache::Handle* h : pinned) cache->Release(h);
  cache.reset();  // the rest
  EXPECT_EQ(deleted.size(), live.size());
  std::set<int> deleted_keys;
  for (const auto& [k, v] : deleted) deleted_keys.insert(k);
  EXPECT_EQ(deleted_keys, live);
  g_deleted = nullptr;
}

// Keys of every length class: empty, inline (up to 16 bytes, compared in the slot) and long
// (a heap copy). The deleter gets back the key the entry was inserted with.
TEST(ClockCacheTest, KeysOfEveryLength) {
  auto cache = HyperClockCacheOptions(1 << 20, 64, 0).MakeSharedCache();
  static std::vector<std::string>* deleted_keys = nullptr;
  std::vector<std::string> seen;
  deleted_keys = &seen;
  auto deleter = [](const Slice& key, void* value) {
    delete static_cast<std::string*>(value);
    deleted_keys->push_back(key.ToString());
  };
  std::vector<std::string> keys = {"",
                                   "a",
                                   std::string(8, 'b'),
                                   std::string(15, 'c'),
                                   std::string(16, 'd'),
                                   std::string(17, 'e'),
                                   std::string(100, 'f')};
  // Same prefix, different lengths: the length is part of the comparison.
  keys.push_back(std::string(16, 'd') + "x");
  keys.push_back(std::string("d\0", 2));
  for (const std::string& k : keys) {
    ASSERT_TRUE(cache->Insert(k, new std::string("v" + k), 1, deleter).ok());
  }
  for (const std::string& k : keys) {
    Cache::Handle* h = cache->Lookup(k);
    ASSERT_NE(h, nullptr) << k.size();
    EXPECT_EQ(*static_cast<std::string*>(cache->Value(h)), "v" + k);
    cache->Release(h);
  }
  EXPECT_EQ(cache->Lookup(std::string(18, 'e')), nullptr);
  EXPECT_EQ(cache->Lookup(std::string(9, 'b')), nullptr);
  // Replacing and erasing long keys frees the old copies with the right key.
  ASSERT_TRUE(cache->Insert(std::string(100, 'f'), new std::string("w"), 1, deleter).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], std::string(100, 'f'));
  cache->Erase(std::string(17, 'e'));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], std::string(17, 'e'));
  EXPECT_EQ(cache->GetUsage(), keys.size() - 1);
  cache.reset();
  EXPECT_EQ(seen.size(), keys.size() + 1);
  deleted_keys = nullptr;
}

// A 16-slot table (capacity 11 at charge 1 per entry): every key collides with others, so
// probe paths run over occupied slots and freeing must roll their counts back. Charge-0
// entries leave the table's occupancy limit (13 of 16 slots) as the only bound.
TEST(ClockCacheTest, CollidingPathsInATinyTable) {
  auto cache = HyperClockCacheOptions(11, 1, 0).MakeSharedCache();
  std::vector<std::pair<int, int>> deleted;
  g_deleted = &deleted;
  Random rnd(301);
  std::map<int, int> model;  // what an insert or erase last said of each key
  int inserted = 0;
  for (int i = 0; i < 5000; i++) {
    const int k = static_cast<int>(rnd.Uniform(40));
    if (rnd.OneIn(4)) {
      cache->Erase(Key(k));
      model.erase(k);
    } else if (rnd.OneIn(2)) {
      ASSERT_TRUE(cache->Insert(Key(k), new int(i), 0, &Deleter).ok());
      inserted++;
      model[k] = i;
    } else {
      if (rnd.OneIn(2)) cache->Prefetch(Key(k));  // a hint: changes nothing the model sees
      Cache::Handle* h = cache->Lookup(Key(k));
      auto it = model.find(k);
      if (h != nullptr) {
        // A hit is never stale: erased and replaced values are gone.
        ASSERT_NE(it, model.end()) << k;
        EXPECT_EQ(*static_cast<int*>(cache->Value(h)), it->second);
        cache->Release(h);
      } else if (it != model.end()) {
        model.erase(it);  // evicted
      }
    }
  }
  // The most recent insert is always found.
  ASSERT_TRUE(cache->Insert(Key(99), new int(99), 0, &Deleter).ok());
  inserted++;
  Cache::Handle* last = cache->Lookup(Key(99));
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(*static_cast<int*>(cache->Value(last)), 99);
  cache->Release(last);
  cache.reset();
  EXPECT_EQ(deleted.size(), static_cast<size_t>(inserted));  // each value deleted exactly once
  g_deleted = nullptr;
}

// When every slot the table may fill holds a pinned entry, an unpinned insert is dropped at
// once, a pinned one gets a slot of its own outside the table, and a strict cache refuses.
TEST(ClockCacheTest, TableFullOfPins) {
  for (bool strict : {false, true}) {
    auto cache = HyperClockCacheOptions(11, 1, 0, strict).MakeSharedCache();
    std::vector<std::pair<int, int>> deleted;
    g_deleted = &deleted;
    std::vector<Cache::Handle*> pins;
    for (int k = 0; k < 13; k++) {
      Cache::Handle* h = nullptr;
      ASSERT_TRUE(cache->Insert(Key(k), new int(k), 0, &Deleter, &h).ok()) << k;
      pins.push_back(h);
    }
    int* unpinned = new int(100);
    Status u = cache->Insert(Key(100), unpinned, 0, &Deleter);
    if (strict) {
      EXPECT_TRUE(u.IsIncomplete()) << u.ToString();
      delete unpinned;  // the caller keeps a refused value
    } else {
      EXPECT_TRUE(u.ok()) << u.ToString();
    }
    EXPECT_EQ(cache->Lookup(Key(100)), nullptr);
    Cache::Handle* h = nullptr;
    int* v = new int(200);
    Status s = cache->Insert(Key(200), v, 0, &Deleter, &h);
    if (strict) {
      EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
      EXPECT_EQ(h, nullptr);
      delete v;
      ASSERT_EQ(deleted.size(), 0u);  // the strict cache refused key 100 as well
    } else {
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_NE(h, nullptr);
      EXPECT_EQ(*static_cast<int*>(cache->Value(h)), 200);
      EXPECT_EQ(cache->Lookup(Key(200)), nullptr);  // not in the table
      cache->Ref(h);
      cache->Release(h);
      EXPECT_EQ(deleted.size(), 1u);  // key 100
      cache->Release(h);
      ASSERT_EQ(deleted.size(), 2u);
      EXPECT_EQ(deleted[1], std::make_pair(200, 200));
      // A pinned insert over a pinned key replaces it even outside the table: the old value
      // is no longer found, and is deleted when its pin goes.
      Cache::Handle* h0 = nullptr;
      ASSERT_TRUE(cache->Insert(Key(0), new int(1000), 0, &Deleter, &h0).ok());
      EXPECT_EQ(cache->Lookup(Key(0)), nullptr);
      EXPECT_EQ(*static_cast<int*>(cache->Value(pins[0])), 0);
      cache->Release(pins[0]);
      ASSERT_EQ(deleted.size(), 3u);
      EXPECT_EQ(deleted[2], std::make_pair(0, 0));
      pins[0] = h0;
    }
    for (Cache::Handle* p : pins) cache->Release(p);
    // With the pins gone the table takes new entries again.
    ASSERT_TRUE(cache->Insert(Key(300), new int(300), 0, &Deleter).ok());
    Cache::Handle* found = cache->Lookup(Key(300));
    ASSERT_NE(found, nullptr);
    cache->Release(found);
    cache.reset();
    g_deleted = nullptr;
  }
}

// An entry looked up since the hand last passed it survives the next pass; one never looked
// up is evicted first.
TEST(ClockCacheTest, LookedUpEntriesOutliveColdOnes) {
  auto cache = HyperClockCacheOptions(100, 1, 0).MakeSharedCache();
  for (int k = 0; k < 100; k++) ASSERT_TRUE(cache->Insert(Key(k), new int(k), 1, &Deleter).ok());
  auto hit = [&](int k) {
    Cache::Handle* h = cache->Lookup(Key(k));
    if (h == nullptr) return false;
    cache->Release(h);
    return true;
  };
  for (int k = 0; k < 100; k += 2) ASSERT_TRUE(hit(k));
  // 40 new entries push at least 40 old ones out: cold (odd) keys, all of them before any
  // hot one (the hand frees the whole batch of slots it claims, so it may take all 50).
  for (int k = 100; k < 140; k++) ASSERT_TRUE(cache->Insert(Key(k), new int(k), 1, &Deleter).ok());
  int even_left = 0, odd_left = 0;
  for (int k = 0; k < 100; k++) {
    if (hit(k)) (k % 2 == 0 ? even_left : odd_left)++;
  }
  EXPECT_EQ(even_left, 50);
  EXPECT_LE(odd_left, 10);
  for (int k = 100; k < 140; k++) EXPECT_TRUE(hit(k)) << k;
  EXPECT_LE(cache->GetUsage(), 100u);
}

// Insert, Lookup, Ref, Release, Erase and EraseUnRefEntries on many threads against a table
// of a few dozen slots, with a strict limit: every value is deleted exactly once, with its own
// key, and usage never exceeds capacity.
TEST(ConcurrentClockCacheTest, TinyTableUnderEveryOperation) {
  constexpr int kThreads = 4;
  constexpr size_t kCapacity = 40;
  auto cache = HyperClockCacheOptions(kCapacity, 1, 1, /*strict=*/true).MakeSharedCache();
  struct Value {
    int key;
    std::atomic<int>* deletions;
  };
  static std::atomic<int> bad_deletes{0};
  auto deleter = [](const Slice& key, void* value) {
    auto* v = static_cast<Value*>(value);
    if (static_cast<int>(DecodeFixed32(key.data())) != v->key) bad_deletes++;
    v->deletions->fetch_add(1);
  };
  constexpr int kOps = 20000;
  std::vector<std::vector<std::unique_ptr<Value>>> values(kThreads);
  std::vector<std::atomic<int>> deletions(kThreads * kOps);
  std::atomic<int> wrong{0};
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    while (!done.load()) {
      if (cache->GetUsage() > kCapacity) wrong++;
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(t + 7);
      std::vector<Cache::Handle*> held;
      for (int i = 0; i < kOps; i++) {
        const int k = static_cast<int>(rnd.Uniform(64));
        const int op = static_cast<int>(rnd.Uniform(100));
        if (op < 30) {
          auto v = std::make_unique<Value>(Value{k, &deletions[t * kOps + i]});
          Cache::Handle* h = nullptr;
          Status s = cache->Insert(Key(k), v.get(), 1 + rnd.Uniform(3), deleter,
                                   rnd.OneIn(2) ? &h : nullptr);
          if (s.ok()) {
            values[t].push_back(std::move(v));
            if (h != nullptr) held.push_back(h);
          } else if (!s.IsIncomplete()) {
            wrong++;
          }
        } else if (op < 80) {
          if (Cache::Handle* h = cache->Lookup(Key(k)); h != nullptr) {
            if (static_cast<Value*>(cache->Value(h))->key != k) wrong++;
            if (rnd.OneIn(3)) {
              cache->Ref(h);
              held.push_back(h);
            }
            cache->Release(h);
          }
        } else if (op < 90) {
          cache->Erase(Key(k));
        } else if (op < 91) {
          cache->EraseUnRefEntries();
        } else if (!held.empty()) {
          cache->Release(held.back());
          held.pop_back();
        }
        if (held.size() > 4) {
          cache->Release(held.front());
          held.erase(held.begin());
        }
      }
      for (Cache::Handle* h : held) cache->Release(h);
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  sampler.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache->GetPinnedUsage(), 0u);
  cache.reset();
  EXPECT_EQ(bad_deletes.load(), 0);
  for (int t = 0; t < kThreads; t++) {
    for (const auto& v : values[t]) {
      EXPECT_EQ(v->deletions->load(), 1) << "key " << v->key;
    }
  }
  for (auto& d : deletions) EXPECT_LE(d.load(), 1);
}

// Many threads looking up and releasing one entry while others insert around it: the entry's
// counts stay balanced, so it is freed exactly once at the end.
TEST(ConcurrentClockCacheTest, HotEntryOnManyThreads) {
  auto cache = HyperClockCacheOptions(64, 1, 0).MakeSharedCache();
  std::atomic<int> deleted{0};
  static std::atomic<int>* deleted_count = nullptr;
  deleted_count = &deleted;
  auto deleter = [](const Slice&, void* value) {
    delete static_cast<int*>(value);
    deleted_count->fetch_add(1);
  };
  Cache::Handle* pin = nullptr;
  ASSERT_TRUE(cache->Insert("hot", new int(7), 1, deleter, &pin).ok());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; i++) {
        if (t == 3 && i % 4 == 0) {
          cache->Insert(Key(i), new int(i), 1, deleter).PermitUncheckedError();
          continue;
        }
        Cache::Handle* h = cache->Lookup("hot");
        if (h == nullptr || *static_cast<int*>(cache->Value(h)) != 7) {
          wrong++;
          continue;
        }
        cache->Release(h);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache->GetPinnedUsage(), 1u);
  cache->Release(pin);
  const int inserted = 5000;
  cache.reset();
  EXPECT_EQ(deleted.load(), inserted + 1);
  deleted_count = nullptr;
}

}  // namespace
}  // namespace shale
