// The concurrent skiplist and the memtable on top of it: ordering, visibility by sequence,
// deletes and merges, pinning, and concurrent inserts with lock-free readers.
#include "memtable/memtable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "memtable/skiplist.h"
#include "shale/comparator.h"
#include "shale/merge_operator.h"
#include "shale/perf_context.h"
#include "shale/pinnable_slice.h"
#include "src/base/get_context.h"
#include "src/util/coding.h"
#include "src/util/random.h"

namespace shale {
namespace {

// Keys are 8-byte big-endian integers in the arena, so memcmp order is numeric order.
struct U64Cmp {
  int operator()(const char* a, const char* b) const { return std::memcmp(a, b, 8); }
};
using U64List = SkipList<U64Cmp>;

uint64_t KeyOf(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
// Writes v as a key into the list's own node and links it.
void InsertKey(U64List* list, uint64_t v) {
  char* p = list->AllocateKey(8);
  for (int i = 7; i >= 0; i--) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  list->Insert(p);
}

// A probe key (not in any list).
const char* MakeKey(ConcurrentArena* arena, uint64_t v) {
  char* p = arena->Allocate(8);
  for (int i = 7; i >= 0; i--) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return p;
}

TEST(SkipListTest, MatchesOrderedSet) {
  ConcurrentArena arena;
  U64List list(U64Cmp(), &arena);
  std::set<uint64_t> model;
  Random rnd(301);
  for (int i = 0; i < 5000; i++) {
    const uint64_t v = rnd.Uniform(20000);
    if (model.insert(v).second) InsertKey(&list, v);
  }
  for (uint64_t v = 0; v < 20000; v += 7) {
    ConcurrentArena tmp;
    EXPECT_EQ(list.Contains(MakeKey(&tmp, v)), model.count(v) == 1) << v;
  }
  // Forward and backward scans.
  U64List::Iterator it(&list);
  auto m = model.begin();
  for (it.SeekToFirst(); it.Valid(); it.Next(), ++m) {
    ASSERT_NE(m, model.end());
    EXPECT_EQ(KeyOf(it.key()), *m);
  }
  EXPECT_EQ(m, model.end());
  auto rm = model.rbegin();
  for (it.SeekToLast(); it.Valid(); it.Prev(), ++rm) {
    ASSERT_NE(rm, model.rend());
    EXPECT_EQ(KeyOf(it.key()), *rm);
  }
  EXPECT_EQ(rm, model.rend());
  // Seek and SeekForPrev at random targets.
  for (int i = 0; i < 1000; i++) {
    ConcurrentArena tmp;
    const uint64_t target = rnd.Uniform(21000);
    it.Seek(MakeKey(&tmp, target));
    auto lb = model.lower_bound(target);
    if (lb == model.end()) {
      EXPECT_FALSE(it.Valid());
    } else {
      ASSERT_TRUE(it.Valid());
      EXPECT_EQ(KeyOf(it.key()), *lb);
    }
    it.SeekForPrev(MakeKey(&tmp, target));
    auto ub = model.upper_bound(target);
    if (ub == model.begin()) {
      EXPECT_FALSE(it.Valid());
    } else {
      ASSERT_TRUE(it.Valid());
      EXPECT_EQ(KeyOf(it.key()), *std::prev(ub));
    }
  }
}

TEST(SkipListTest, EmptyList) {
  ConcurrentArena arena;
  U64List list(U64Cmp(), &arena);
  U64List::Iterator it(&list);
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  it.Seek(MakeKey(&arena, 5));
  EXPECT_FALSE(it.Valid());
  EXPECT_FALSE(list.Contains(MakeKey(&arena, 5)));
}

// Writers insert disjoint keys while readers scan: every scan is sorted, and each reader sees
// every key whose insert completed before its scan began.
TEST(ConcurrentSkipListTest, InsertersAndReaders) {
  ConcurrentArena arena;
  U64List list(U64Cmp(), &arena);
  constexpr int kWriters = 3;
  constexpr uint64_t kPerWriter = 20000;
  std::atomic<uint64_t> done[kWriters];
  for (auto& d : done) d.store(0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      // Writer w owns keys congruent to w mod kWriters, inserted in a scrambled order; done[w]
      // counts the prefix of its sequence that is complete.
      for (uint64_t i = 0; i < kPerWriter; i++) {
        const uint64_t v = ((i * 7919) % kPerWriter) * kWriters + w;
        InsertKey(&list, v);
        done[w].store(i + 1, std::memory_order_release);
      }
    });
  }
  std::atomic<int> failures{0};
  threads.emplace_back([&] {
    while (!stop.load()) {
      uint64_t before[kWriters];
      for (int w = 0; w < kWriters; w++) before[w] = done[w].load(std::memory_order_acquire);
      std::set<uint64_t> seen;
      U64List::Iterator it(&list);
      uint64_t prev = 0;
      bool first = true;
      for (it.SeekToFirst(); it.Valid(); it.Next()) {
        const uint64_t v = KeyOf(it.key());
        if (!first && v <= prev) failures++;
        first = false;
        prev = v;
        seen.insert(v);
      }
      for (int w = 0; w < kWriters; w++) {
        for (uint64_t i = 0; i < before[w]; i += 97) {
          if (seen.count(((i * 7919) % kPerWriter) * kWriters + w) == 0) failures++;
        }
      }
    }
  });
  for (int w = 0; w < kWriters; w++) threads[w].join();
  stop.store(true);
  threads.back().join();
  EXPECT_EQ(failures.load(), 0);
  U64List::Iterator it(&list);
  uint64_t n = 0;
  for (it.SeekToFirst(); it.Valid(); it.Next()) EXPECT_EQ(KeyOf(it.key()), n++);
  EXPECT_EQ(n, kWriters * kPerWriter);
}

// ---- MemTable ----

class MemTableTest : public ::testing::Test {
 protected:
  MemTableTest() : icmp_(BytewiseComparator()), mem_(new MemTable(icmp_)) { mem_->Ref(); }
  ~MemTableTest() override {
    if (mem_ != nullptr) mem_->Unref();
  }
  // The value visible at seq, "NOT_FOUND", "DELETED" or the error.
  std::string Get(const std::string& key, SequenceNumber seq, bool* seen = nullptr) {
    LookupKey lk(key, seq);
    PinnableSlice value;
    GetContext ctx(merge_.get(), nullptr, key, &value);
    const bool any = mem_->Get(lk, &ctx);
    if (seen != nullptr) *seen = any;
    if (ctx.state() == GetContext::State::kMerge) ctx.Finish();
    switch (ctx.state()) {
      case GetContext::State::kFound:
        return value.ToString();
      case GetContext::State::kDeleted:
        return "DELETED";
      case GetContext::State::kNotFound:
        return "NOT_FOUND";
      default:
        return "ERROR:" + ctx.status().ToString();
    }
  }

  InternalKeyComparator icmp_;
  std::shared_ptr<MergeOperator> merge_ = MergeOperators::CreateStringAppendOperator(',');
  MemTable* mem_;
};

TEST_F(MemTableTest, BloomNeverHidesAnEntryAndSkipsMostAbsentKeys) {
  // A roomy filter and one far too small (every line full): both must find every key.
  for (size_t bloom_bytes : {size_t{64} << 10, size_t{64}}) {
    mem_->Unref();
    mem_ = new MemTable(icmp_, Arena::kBlockSize, bloom_bytes);
    mem_->Ref();
    for (int i = 0; i < 5000; i++) {
      mem_->Add(static_cast<SequenceNumber>(i + 1), i % 7 == 0 ? kTypeDeletion : kTypeValue,
                "k" + std::to_string(i * 2), "v" + std::to_string(i));
    }
    int skipped = 0;
    for (int i = 0; i < 5000; i++) {
      EXPECT_TRUE(mem_->MayContain("k" + std::to_string(i * 2)));
      EXPECT_EQ(Get("k" + std::to_string(i * 2), kMaxSequenceNumber),
                i % 7 == 0 ? "DELETED" : "v" + std::to_string(i));
      EXPECT_EQ(Get("k" + std::to_string(i * 2 + 1), kMaxSequenceNumber), "NOT_FOUND");
      skipped += !mem_->MayContain("k" + std::to_string(i * 2 + 1));
    }
    if (bloom_bytes > 64) {
      EXPECT_GT(skipped, 4800);  // about 1% false positives at ~100 bits per key
    }
  }
}

TEST_F(MemTableTest, EmptyMemtableAnswersWithoutItsBloomFilter) {
  mem_->Unref();
  mem_ = new MemTable(icmp_, Arena::kBlockSize, size_t{64} << 10);
  mem_->Ref();
  SetPerfLevel(PerfLevel::kEnableCount);
  get_perf_context()->Reset();
  EXPECT_EQ(Get("a", kMaxSequenceNumber), "NOT_FOUND");
  EXPECT_EQ(get_perf_context()->bloom_memtable_miss_count, 0u);
  EXPECT_EQ(get_perf_context()->bloom_memtable_hit_count, 0u);
  mem_->Add(1, kTypeValue, "a", "a1");
  EXPECT_EQ(Get("a", kMaxSequenceNumber), "a1");
  EXPECT_EQ(Get("b", kMaxSequenceNumber), "NOT_FOUND");
  EXPECT_EQ(
      get_perf_context()->bloom_memtable_hit_count + get_perf_context()->bloom_memtable_miss_count,
      2u);
  SetPerfLevel(PerfLevel::kDisable);
}

TEST_F(MemTableTest, VisibilityBySequence) {
  mem_->Add(1, kTypeValue, "a", "a1");
  mem_->Add(2, kTypeValue, "b", "b2");
  mem_->Add(3, kTypeValue, "a", "a3");
  mem_->Add(4, kTypeDeletion, "b", "");
  mem_->Add(5, kTypeValue, "b", "b5");
  EXPECT_EQ(Get("a", 0), "NOT_FOUND");
  EXPECT_EQ(Get("a", 1), "a1");
  EXPECT_EQ(Get("a", 2), "a1");
  EXPECT_EQ(Get("a", 3), "a3");
  EXPECT_EQ(Get("a", 100), "a3");
  EXPECT_EQ(Get("b", 1), "NOT_FOUND");
  EXPECT_EQ(Get("b", 3), "b2");
  EXPECT_EQ(Get("b", 4), "DELETED");
  EXPECT_EQ(Get("b", 5), "b5");
  bool seen = true;
  EXPECT_EQ(Get("c", 100, &seen), "NOT_FOUND");
  EXPECT_FALSE(seen);
  // A key that is a prefix of another is a different key.
  EXPECT_EQ(Get("", 100), "NOT_FOUND");
  mem_->Add(6, kTypeValue, "", "empty-key");
  EXPECT_EQ(Get("", 100), "empty-key");
  EXPECT_EQ(mem_->num_entries(), 6u);
  EXPECT_EQ(mem_->num_deletes(), 1u);
}

TEST_F(MemTableTest, MergesResolveAgainstBaseOrNothing) {
  mem_->Add(1, kTypeMerge, "m", "x");
  mem_->Add(2, kTypeMerge, "m", "y");
  EXPECT_EQ(Get("m", 2), "x,y");
  mem_->Add(3, kTypeValue, "m", "base");
  mem_->Add(4, kTypeMerge, "m", "z");
  EXPECT_EQ(Get("m", 4), "base,z");
  EXPECT_EQ(Get("m", 1), "x");
  mem_->Add(5, kTypeDeletion, "m", "");
  mem_->Add(6, kTypeMerge, "m", "w");
  EXPECT_EQ(Get("m", 6), "w");
}

// Long merge chains of interleaved keys (each key's operands adjacent in the list but spread
// over the arena, the walk the lookup prefetches for): every operand, in order, at every
// snapshot probed, and the neighbouring keys' operands never leak in.
TEST_F(MemTableTest, LongInterleavedMergeChains) {
  constexpr int kKeys = 4, kOperands = 700;
  std::vector<std::string> expected(kKeys);
  Random rnd(5);
  SequenceNumber seq = 0;
  std::vector<std::vector<std::pair<SequenceNumber, std::string>>> history(kKeys);
  for (int i = 0; i < kKeys * kOperands; i++) {
    const int k = static_cast<int>(rnd.Uniform(kKeys));
    const std::string op = std::to_string(i) + std::string(rnd.Uniform(300), 'p');
    mem_->Add(++seq, kTypeMerge, "key" + std::to_string(k), op);
    expected[k] += (expected[k].empty() ? "" : ",") + op;
    history[k].emplace_back(seq, expected[k]);
  }
  for (int k = 0; k < kKeys; k++) {
    EXPECT_EQ(Get("key" + std::to_string(k), seq), expected[k]) << k;
    for (int probe = 0; probe < 20; probe++) {
      const auto& [at, value] = history[k][rnd.Uniform(static_cast<uint32_t>(history[k].size()))];
      EXPECT_EQ(Get("key" + std::to_string(k), at), value) << k << " at " << at;
    }
  }
}

TEST(MemTableArenaTest, LargeWriteBuffersUseHugePageBlocks) {
  EXPECT_EQ(MemTable::ArenaBlockSizeFor(4 << 20), size_t{512} << 10);
  EXPECT_EQ(MemTable::ArenaBlockSizeFor(64 << 20), size_t{1} << 20);
  EXPECT_EQ(MemTable::ArenaBlockSizeFor(128 << 20), Arena::kHugePageSize);
  EXPECT_EQ(MemTable::ArenaBlockSizeFor(size_t{1} << 30), Arena::kHugePageSize);
}

// A pool hands back the blocks returned to it, newest first, keeps no more than its bound, and
// frees what it holds when it goes (a leak would fail the sanitizer builds).
TEST(ArenaBlockPoolTest, ReturnedBlocksAreTakenAgainUpToTheBound) {
  ArenaBlockPool pool(4096, /*huge=*/false, /*max_bytes=*/2 * 4096);
  char* a = pool.Take();
  char* b = pool.Take();
  char* c = pool.Take();
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  pool.Return(a);
  pool.Return(b);
  pool.Return(c);  // past the bound: freed
  EXPECT_EQ(pool.pooled_bytes(), 2u * 4096);
  EXPECT_EQ(pool.Take(), b);
  EXPECT_EQ(pool.Take(), a);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  std::memset(a, 1, 4096);  // whole blocks, writable
  std::memset(b, 2, 4096);
  pool.Return(a);
  pool.Return(b);
}

// A pool not retaining frees what it holds and every block returned, until retention is back.
TEST(ArenaBlockPoolTest, APoolNotRetainingKeepsNothing) {
  ArenaBlockPool pool(4096, /*huge=*/false, /*max_bytes=*/4 * 4096);
  EXPECT_TRUE(pool.retaining());
  char* a = pool.Take();
  char* b = pool.Take();
  pool.Return(a);
  EXPECT_EQ(pool.pooled_bytes(), 4096u);
  pool.SetRetaining(false);
  EXPECT_FALSE(pool.retaining());
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  pool.Return(b);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  pool.SetRetaining(true);
  char* c = pool.Take();
  std::memset(c, 3, 4096);
  pool.Return(c);
  EXPECT_EQ(pool.pooled_bytes(), 4096u);
  EXPECT_EQ(pool.Take(), c);
  pool.Return(c);
}

// Arenas sharing a pool: one that dies leaves its standard blocks for the next, whose memory
// then comes from them; a large object's block of its own is not pooled.
TEST(ArenaBlockPoolTest, AnArenaReusesTheBlocksOfOneThatDied) {
  constexpr size_t kBlock = 64 << 10;
  auto pool = std::make_shared<ArenaBlockPool>(Arena::BlockSizeFor(kBlock), false, 1 << 20);
  std::set<const char*> block_starts;
  {
    Arena arena(kBlock, pool);
    const char* previous = nullptr;
    for (int i = 0; i < 200; i++) {  // 1 KiB pieces: 64 to a block, 4 blocks
      const char* p = arena.Allocate(1024);
      if (previous == nullptr || p != previous + 1024) block_starts.insert(p);
      previous = p;
    }
    arena.Allocate(60 << 10);  // past the last block's room, over a quarter: a block of its own
    EXPECT_EQ(block_starts.size(), 4u);
    EXPECT_EQ(arena.MemoryUsage(), 4 * (kBlock + sizeof(char*)) + (60 << 10) + sizeof(char*));
  }
  EXPECT_EQ(pool->pooled_bytes(), 4 * kBlock);
  Arena next(kBlock, pool);
  for (int b = 0; b < 4; b++) {
    EXPECT_EQ(block_starts.count(next.Allocate(kBlock / 4)), 1u) << b;  // a block each
    next.Allocate(kBlock - kBlock / 4);                                 // its rest
  }
  EXPECT_EQ(pool->pooled_bytes(), 0u);
}

// Memtables of a family share its pool: the second memtable's entries live in blocks the first
// one held, and read back whole.
TEST_F(MemTableTest, MemTablesOfAFamilyShareABlockPool) {
  const size_t block = MemTable::ArenaBlockSizeFor(4 << 20);
  auto pool = MemTable::NewBlockPool(block, 4 << 20);
  for (const char fill : {'a', 'b'}) {
    mem_->Unref();
    const size_t pooled = pool->pooled_bytes();
    mem_ = new MemTable(icmp_, block, 0, nullptr, pool);
    mem_->Ref();
    for (int i = 0; i < 2000; i++) {
      mem_->Add(static_cast<SequenceNumber>(i + 1), kTypeValue, "k" + std::to_string(i),
                std::string(500, fill));
    }
    if (fill == 'b') {
      EXPECT_LT(pool->pooled_bytes(), pooled);  // taken from the pool
    }
    for (int i = 0; i < 2000; i += 97) {
      EXPECT_EQ(Get("k" + std::to_string(i), kMaxSequenceNumber), std::string(500, fill)) << i;
    }
    if (fill == 'a') {
      const size_t used = mem_->ApproximateMemoryUsage();
      mem_->Unref();
      // Every standard block went to the pool (the skiplist head's is one of them).
      EXPECT_GE(pool->pooled_bytes() + 2 * (block + sizeof(char*)), used);
      mem_ = new MemTable(icmp_);
      mem_->Ref();
    }
  }
}

// Under AddressSanitizer a pooled block is poisoned: a read of a dropped arena's memory is
// reported although the pool still holds it.
TEST(ArenaBlockPoolDeathTest, PooledBlocksArePoisoned) {
  if (!ArenaBlockPool::kPoisons) GTEST_SKIP() << "not an AddressSanitizer build";
  ArenaBlockPool pool(4096, false, 4096);
  char* p = pool.Take();
  pool.Return(p);
  EXPECT_DEATH(
      {
        volatile char c = p[100];
        (void)c;
      },
      "use-after-poison");
  EXPECT_EQ(pool.Take(), p);
  p[100] = 1;  // unpoisoned again
  pool.Return(p);
}

TEST_F(MemTableTest, IteratorOrderIsUserKeyThenNewestFirst) {
  Random rnd(7);
  std::vector<std::string> expected;
  SequenceNumber seq = 0;
  for (int i = 0; i < 500; i++) {
    std::string k = "k" + std::to_string(rnd.Uniform(50));
    ++seq;
    mem_->Add(seq, kTypeValue, k, "v" + std::to_string(seq));
  }
  auto it = mem_->NewIterator();
  std::string prev;
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    if (!prev.empty()) {
      EXPECT_LT(icmp_.Compare(prev, it->key()), 0);
    }
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(it->key(), &p));
    EXPECT_EQ(it->value().ToString(), "v" + std::to_string(p.sequence));
    prev = it->key().ToString();
  }
  EXPECT_EQ(n, 500);
  // Backwards gives the reverse.
  n = 0;
  prev.clear();
  for (it->SeekToLast(); it->Valid(); it->Prev(), n++) {
    if (!prev.empty()) {
      EXPECT_GT(icmp_.Compare(prev, it->key()), 0);
    }
    prev = it->key().ToString();
  }
  EXPECT_EQ(n, 500);
  // Seek to (k1, seq) lands on the newest k1 entry at or below seq.
  std::string target;
  AppendInternalKey(&target, "k1", 250, kValueTypeForSeek);
  it->Seek(target);
  ASSERT_TRUE(it->Valid());
  ParsedInternalKey p;
  ASSERT_TRUE(ParseInternalKey(it->key(), &p));
  EXPECT_GE(icmp_.Compare(it->key(), target), 0);
  if (p.user_key == Slice("k1")) {
    EXPECT_LE(p.sequence, 250u);
  }
}

TEST_F(MemTableTest, OrderIsBytewiseForAnyBytesAndLengths) {
  // Keys of 0..24 bytes drawn from a few byte values (0x00, 0x7f, 0x80, 0xff among them), so
  // that many share prefixes, differ only past an eight-byte boundary, or are prefixes of one
  // another: the memtable's order must be std::string's (unsigned bytes, shorter first).
  Random rnd(301);
  const char bytes[] = {'\x00', '\x01', '\x7f', '\x80', '\xfe', '\xff'};
  std::map<std::string, SequenceNumber> model;
  SequenceNumber seq = 0;
  for (int i = 0; i < 3000; i++) {
    std::string k(rnd.Uniform(25), '\0');
    for (char& c : k) c = bytes[rnd.Uniform(sizeof(bytes))];
    ++seq;
    mem_->Add(seq, kTypeValue, k, "v" + std::to_string(seq));
    model[k] = seq;
  }
  auto it = mem_->NewIterator();
  auto m = model.begin();
  std::string last_user_key;
  bool first = true;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(it->key(), &p));
    if (!first && p.user_key.ToString() == last_user_key) continue;  // older versions
    ASSERT_NE(m, model.end());
    ASSERT_EQ(p.user_key.ToString(), m->first);
    EXPECT_EQ(p.sequence, m->second);  // the newest version comes first
    last_user_key = m->first;
    first = false;
    ++m;
  }
  EXPECT_EQ(m, model.end());
  for (const auto& [k, s] : model) {
    EXPECT_EQ(Get(k, seq), "v" + std::to_string(s));
  }
}

TEST_F(MemTableTest, LargeKeysAndValues) {
  const std::string big_key(100000, 'k');
  const std::string big_value(1 << 20, 'v');
  mem_->Add(1, kTypeValue, big_key, big_value);
  EXPECT_EQ(Get(big_key, 1), big_value);
  EXPECT_GE(mem_->ApproximateMemoryUsage(), big_key.size() + big_value.size());
}

// Values up to kMaxInlineValue live in the entry, longer ones in the value arena: both kinds,
// the sizes around the boundary, merges mixing them and pinned results all read back exactly.
TEST_F(MemTableTest, ValuesInlineAndOutOfLineReadBackExactly) {
  constexpr size_t kLimit = MemTable::kMaxInlineValue;
  const std::vector<size_t> sizes = {0, 1, kLimit - 1, kLimit, kLimit + 1, 2 * kLimit, 100000};
  Random rnd(11);
  std::map<std::string, std::string> expected;
  SequenceNumber seq = 0;
  for (size_t i = 0; i < sizes.size(); i++) {
    std::string value;
    for (size_t j = 0; j < sizes[i]; j++) value.push_back(static_cast<char>('a' + rnd.Uniform(26)));
    const std::string key = "key" + std::to_string(i);
    mem_->Add(++seq, kTypeValue, key, value);
    expected[key] = value;
  }
  // A merge chain whose operands straddle the limit, on a base stored out of line.
  const std::string base(kLimit + 10, 'b');
  mem_->Add(++seq, kTypeValue, "merged", base);
  std::string want = base;
  for (size_t size : {size_t{3}, kLimit, kLimit + 1, size_t{5000}}) {
    const std::string operand(size, static_cast<char>('0' + size % 10));
    mem_->Add(++seq, kTypeMerge, "merged", operand);
    want += "," + operand;
  }
  expected["merged"] = want;
  for (const auto& [key, value] : expected) {
    EXPECT_EQ(Get(key, seq), value) << key;
  }
  // The iterator sees the same bytes (the merge operands individually, newest first).
  auto it = mem_->NewIterator();
  size_t values = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(it->key(), &p));
    if (p.type == kTypeValue) {
      EXPECT_EQ(it->value().ToString(),
                p.user_key == Slice("merged") ? base : expected[p.user_key.ToString()]);
      values++;
    }
  }
  EXPECT_EQ(values, sizes.size() + 1);
  // Out-of-line bytes count as memtable memory.
  EXPECT_GE(mem_->ApproximateMemoryUsage(), size_t{100000} + 5000 + 2 * kLimit);
  // A pinned out-of-line value outlives the memtable's last other reference.
  PinnableSlice pinned;
  {
    LookupKey lk("key6", seq);
    GetContext ctx(nullptr, nullptr, "key6", &pinned);
    mem_->Get(lk, &ctx);
    ASSERT_EQ(ctx.state(), GetContext::State::kFound);
  }
  ASSERT_TRUE(pinned.IsPinned());
  mem_->Unref();
  mem_ = nullptr;
  EXPECT_EQ(pinned.ToString(), expected["key6"]);
  pinned.Reset();
}

TEST_F(MemTableTest, PinKeepsEntriesAliveAfterLastReference) {
  mem_->Add(1, kTypeValue, "k", "pinned-value");
  PinnableSlice value;
  {
    LookupKey lk("k", 1);
    GetContext ctx(nullptr, nullptr, "k", &value);
    mem_->Get(lk, &ctx);
    ASSERT_EQ(ctx.state(), GetContext::State::kFound);
  }
  EXPECT_TRUE(value.IsPinned());
  mem_->Unref();  // the fixture's reference; the pin holds the last one
  mem_ = nullptr;
  EXPECT_EQ(value.ToString(), "pinned-value");
  value.Reset();  // frees the memtable (ASan would flag a leak or use-after-free)
}

TEST(ConcurrentMemTableTest, ConcurrentAddsAndGets) {
  InternalKeyComparator icmp(BytewiseComparator());
  MemTable* mem = new MemTable(icmp);
  mem->Ref();
  constexpr int kThreads = 3;
  constexpr int kPerThread = 5000;
  std::atomic<int> published{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i++) {
        const int id = t * kPerThread + i;
        mem->Add(static_cast<SequenceNumber>(id + 1), kTypeValue, "key" + std::to_string(id),
                 "value" + std::to_string(id));
      }
      published.fetch_add(1);
    });
  }
  std::atomic<int> wrong{0};
  threads.emplace_back([&] {
    Random rnd(1);
    while (published.load() < kThreads) {
      const int id = static_cast<int>(rnd.Uniform(kThreads * kPerThread));
      const std::string key = "key" + std::to_string(id);
      LookupKey lk(key, kMaxSequenceNumber);
      PinnableSlice value;
      GetContext ctx(nullptr, nullptr, key, &value);
      mem->Get(lk, &ctx);
      if (ctx.state() == GetContext::State::kFound &&
          value.ToString() != "value" + std::to_string(id)) {
        wrong++;
      }
    }
  });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(mem->num_entries(), static_cast<uint64_t>(kThreads * kPerThread));
  auto it = mem->NewIterator();
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_EQ(n, kThreads * kPerThread);
  it.reset();
  mem->Unref();
}

}  // namespace
}  // namespace shale
