// Blocks, filters and block-based tables: round trips over many shapes through one iterator
// contract (shared with the memtable), point lookups with versions, pinning through the block
// cache, the table cache, and malformed input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "memtable/memtable.h"
#include "shale/cache.h"
#include "shale/comparator.h"
#include "shale/statistics.h"
#include "src/base/dbformat.h"
#include "src/base/filename.h"
#include "src/base/get_context.h"
#include "src/base/range_tombstone.h"
#include "src/db/table_cache.h"
#include "src/util/coding.h"
#include "src/util/random.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/filter_block.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/fault_injection_fs.h"
#include "tests/iterator_contract.h"

namespace shale {
namespace {

using test::Entries;

std::string IKey(const std::string& user_key, SequenceNumber seq, ValueType t = kTypeValue) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, t);
  return k;
}

// Seek targets for internal-key iterators: each user key at several sequences, plus user keys
// around them.
std::vector<std::string> InternalTargets(const Entries& entries, Random* rnd) {
  std::vector<std::string> out = {IKey("", kMaxSequenceNumber), IKey("\xff\xff\xff\xff", 0)};
  for (const auto& [k, v] : entries) {
    const std::string user = ExtractUserKey(k).ToString();
    for (SequenceNumber s :
         {SequenceNumber{0}, SequenceNumber{5}, ExtractTag(k) >> 8, kMaxSequenceNumber}) {
      out.push_back(IKey(user, s, kValueTypeForSeek));
    }
    out.push_back(IKey(user + '\0', kMaxSequenceNumber));
    out.push_back(IKey(user.substr(0, rnd->Uniform(user.size() + 1)), kMaxSequenceNumber));
  }
  return out;
}

// Random internal-key entries: distinct user keys (some binary, with 0x00/0xff), a few
// versions each, values of mixed sizes.
Entries RandomEntries(Random* rnd, int n, size_t max_value, bool binary) {
  InternalKeyComparator icmp(BytewiseComparator());
  std::map<std::string, std::string, std::function<bool(const std::string&, const std::string&)>>
      sorted([&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
  SequenceNumber seq = 1;
  while (static_cast<int>(sorted.size()) < n) {
    std::string user;
    if (binary) {
      user = std::string(rnd->Uniform(12), '\0');
      for (char& c : user)
        c = static_cast<char>(rnd->OneIn(3) ? 0xff : rnd->OneIn(2) ? 0 : rnd->Uniform(256));
    } else {
      user = "key" + std::to_string(rnd->Uniform(n * 4));
    }
    const int versions = rnd->OneIn(4) ? 1 + static_cast<int>(rnd->Uniform(3)) : 1;
    for (int v = 0; v < versions && static_cast<int>(sorted.size()) < n; v++) {
      const ValueType t = rnd->OneIn(8) ? kTypeDeletion : (rnd->OneIn(8) ? kTypeMerge : kTypeValue);
      std::string value =
          t == kTypeDeletion ? "" : rnd->RandomString(rnd->Skewed(20) % (max_value + 1));
      sorted.emplace(IKey(user, seq++, t), std::move(value));
    }
  }
  return Entries(sorted.begin(), sorted.end());
}

// ---- Blocks ----

// prefix_index: with the RestartPrefixIndex a table reader builds for its index block and the
// data blocks it caches.
std::unique_ptr<Block> BuildBlock(const Entries& entries, int restart_interval,
                                  bool prefix_index = false) {
  BlockBuilder b(restart_interval);
  for (const auto& [k, v] : entries) b.Add(k, v);
  Slice raw = b.Finish();
  auto block = std::make_unique<Block>(BlockContents::CopyOf(raw));
  if (prefix_index) block->BuildRestartPrefixIndex();
  return block;
}

// Internal-key entries whose user keys defeat a search by 8-byte numbers: a long shared
// prefix, then bytes from {0x00, 0x01, 0xff} (keys equal in the 8 bytes after the shared
// prefix and differing later, keys that are prefixes of others, trailing zero bytes that
// zero-padding cannot tell apart), some keys with many versions (equal user keys across
// restart points).
Entries TieHeavyEntries(Random* rnd, int n) {
  InternalKeyComparator icmp(BytewiseComparator());
  std::map<std::string, std::string, std::function<bool(const std::string&, const std::string&)>>
      sorted([&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
  const char kBytes[] = {'\x00', '\x01', '\xff'};
  SequenceNumber seq = 1;
  while (static_cast<int>(sorted.size()) < n) {
    std::string user = "tenant/42/";
    const size_t len = rnd->Uniform(14);
    for (size_t i = 0; i < len; i++) user += kBytes[rnd->Uniform(3)];
    const int versions = rnd->OneIn(10) ? 1 + static_cast<int>(rnd->Uniform(40)) : 1;
    for (int v = 0; v < versions && static_cast<int>(sorted.size()) < n; v++, seq++) {
      sorted.emplace(IKey(user, seq), "v" + std::to_string(seq));
    }
  }
  return Entries(sorted.begin(), sorted.end());
}

TEST(BlockTest, IteratorContractAcrossRestartIntervals) {
  InternalKeyComparator icmp(BytewiseComparator());
  for (bool indexed : {false, true}) {
    for (int restart = 1; restart <= 32; restart++) {
      SCOPED_TRACE("restart interval " + std::to_string(restart) +
                   (indexed ? ", prefix index" : ""));
      Random rnd(restart);
      for (int n : {0, 1, 2, 17, 300}) {
        Entries entries = restart % 3 == 0 ? TieHeavyEntries(&rnd, n)
                                           : RandomEntries(&rnd, n, 200, restart % 2 == 0);
        auto block = BuildBlock(entries, restart, indexed);
        auto it = block->NewIterator(&icmp);
        auto targets = InternalTargets(entries, &rnd);
        test::CheckIteratorContract(it.get(), entries, &icmp, restart * 100 + n, &targets);
      }
    }
  }
}

// Bounds against a brute-force comparison of every restart key: keys before lo are below the
// target, keys from hi on above it, whatever the keys share; and the range left between them
// holds only ties, keys whose 8 bytes after the prefix all user keys share (zero-padded) equal
// the target's.
TEST(BlockTest, RestartPrefixIndexBoundsAreExact) {
  const auto eight_after = [](Slice key, size_t offset) {
    std::string bytes(8, '\0');
    if (key.size() > offset)
      bytes.replace(0, std::min<size_t>(8, key.size() - offset), key.data() + offset,
                    std::min<size_t>(8, key.size() - offset));
    return bytes;
  };
  InternalKeyComparator icmp(BytewiseComparator());
  for (int round = 0; round < 60; round++) {
    Random rnd(1000 + round);
    // Every third round at most the inline count (numbers and offsets inside the object).
    const int n = 1 + static_cast<int>(rnd.Uniform(round % 3 == 0 ? 10 : 400));
    Entries entries = round % 2 == 0 ? TieHeavyEntries(&rnd, n) : RandomEntries(&rnd, n, 0, true);
    std::vector<Slice> users;
    for (const auto& [k, v] : entries) users.push_back(ExtractUserKey(k));
    RestartPrefixIndex index;
    index.Start(users.front(), users.back(), static_cast<uint32_t>(users.size()));
    for (size_t i = 0; i < users.size(); i++) index.Add(users[i], static_cast<uint32_t>(7 * i));
    ASSERT_EQ(index.size(), entries.size());
    ASSERT_EQ(index.has_offsets(), entries.size() <= RestartPrefixIndex::kInlineRestarts);
    if (index.has_offsets()) {
      for (uint32_t i = 0; i < index.size(); i++) ASSERT_EQ(index.Offset(i), 7 * i);
    }
    std::string common = users.front().ToString();
    for (const Slice& u : users) {
      size_t k = 0;
      while (k < common.size() && k < u.size() && common[k] == u[k]) k++;
      common.resize(k);
    }
    std::vector<std::string> targets = InternalTargets(entries, &rnd);
    targets.push_back(IKey(std::string(20, '\xff'), 0));
    targets.push_back(IKey("tenant/", kMaxSequenceNumber));
    targets.push_back(IKey("tenant/42/zzz", 0));
    targets.push_back(IKey("tenant/41/\xff", 0));
    targets.push_back("short");  // not an internal key: the whole range
    for (const std::string& target : targets) {
      uint32_t lo = 99999, hi = 99999;
      index.Bounds(target, &lo, &hi);
      ASSERT_LE(lo, hi);
      ASSERT_LE(hi, entries.size());
      if (target.size() < 8) {
        EXPECT_EQ(lo, 0u);
        EXPECT_EQ(hi, entries.size());
        continue;
      }
      for (uint32_t i = 0; i < lo; i++) ASSERT_LT(icmp.Compare(entries[i].first, target), 0) << i;
      for (uint32_t i = hi; i < entries.size(); i++) {
        ASSERT_GT(icmp.Compare(entries[i].first, target), 0) << i;
      }
      const Slice user = ExtractUserKey(target);
      for (uint32_t i = lo; i < hi; i++) {
        ASSERT_TRUE(user.starts_with(Slice(common)));
        ASSERT_EQ(eight_after(users[i], common.size()), eight_after(user, common.size())) << i;
      }
    }
  }
}

// The batched seek (FindRestarts for many ascending targets, then SeekFromRestart for each)
// finds for every target the restart point a single search finds (the last whose key is below
// the target, else the first) and lands where Seek does: dense and sparse targets, batches of
// every size class around the chunk of 32 and its anchors of 8. A restart point past the last
// is Corruption, not a read out of bounds.
TEST(BlockTest, BatchedSeeksLandWhereSeekDoes) {
  InternalKeyComparator icmp(BytewiseComparator());
  for (int restart : {1, 2, 16, -1, -16}) {
    // Negative: the same interval, the block with a prefix index and tie-heavy keys.
    const bool indexed = restart < 0;
    restart = std::abs(restart);
    Random rnd(restart);
    for (int n : {1, 17, 300, 3000}) {
      SCOPED_TRACE("restart interval " + std::to_string(restart) + ", " + std::to_string(n) +
                   (indexed ? ", prefix index" : ""));
      Entries entries =
          indexed ? TieHeavyEntries(&rnd, n) : RandomEntries(&rnd, n, 50, restart == 2);
      auto block = BuildBlock(entries, restart, indexed);
      std::vector<std::string> all = InternalTargets(entries, &rnd);
      std::sort(all.begin(), all.end(),
                [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
      // The restart point a single binary search starts its scan from: the last whose key is
      // below the target, else the first (restart j holds entry j * restart).
      const size_t num_restarts = (entries.size() + restart - 1) / restart;
      const auto expected_restart = [&](const std::string& target) {
        size_t lo = 1, hi = num_restarts;  // the first j >= 1 whose key is >= target
        while (lo < hi) {
          const size_t mid = (lo + hi) / 2;
          if (icmp.Compare(entries[mid * restart].first, target) < 0) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        return static_cast<uint32_t>(lo - 1);
      };
      for (size_t step : {size_t{1}, size_t{7}}) {  // dense, then sparse
        for (size_t count : {1, 2, 9, 17, 25, 32, 33, 41, 100000}) {
          std::vector<Slice> targets;
          for (size_t i = 0; i < all.size() && targets.size() < count; i += step) {
            targets.emplace_back(all[i]);
          }
          SCOPED_TRACE("step " + std::to_string(step) + ", " + std::to_string(targets.size()));
          std::vector<uint32_t> restarts(targets.size());
          auto batched = block->NewIterator(&icmp);
          auto single = block->NewIterator(&icmp);
          ASSERT_TRUE(batched->FindRestarts(targets.data(), targets.size(), restarts.data()));
          for (size_t i = 0; i < targets.size(); i++) {
            ASSERT_EQ(restarts[i], expected_restart(targets[i].ToString())) << i;
            batched->SeekFromRestart(restarts[i], targets[i]);
            single->Seek(targets[i]);
            ASSERT_EQ(batched->Valid(), single->Valid()) << i;
            if (single->Valid()) {
              ASSERT_EQ(batched->key().ToString(), single->key().ToString()) << i;
              ASSERT_EQ(batched->value().ToString(), single->value().ToString()) << i;
            }
            ASSERT_TRUE(batched->status().ok());
          }
          batched->SeekFromRestart(1u << 30, targets[0]);
          EXPECT_TRUE(batched->status().IsCorruption()) << batched->status().ToString();
          EXPECT_FALSE(batched->Valid());
        }
      }
    }
  }
}

TEST(BlockTest, BytewiseKeysWithSharedPrefixes) {
  Entries entries;
  for (int i = 0; i < 500; i++) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "prefix/%05d", i * 3);
    entries.emplace_back(buf, std::string(i % 7, 'v'));
  }
  auto block = BuildBlock(entries, 16);
  auto it = block->NewIterator(BytewiseComparator());
  test::CheckIteratorContract(it.get(), entries, BytewiseComparator(), 9);
}

// Calls f with every truncation of good, then with `copies` copies of it with `bytes` random
// bytes overwritten (seeded).
template <typename F>
void ForEachDamagedCopy(const std::string& good, uint32_t seed, int copies, int bytes, F f) {
  for (size_t n = 0; n < good.size(); n++) f(good.substr(0, n));
  Random rnd(seed);
  for (int i = 0; i < copies; i++) {
    std::string junk = good;
    for (int j = 0; j < bytes; j++) {
      junk[rnd.Uniform(junk.size())] = static_cast<char>(rnd.Uniform(256));
    }
    f(junk);
  }
}

TEST(BlockTest, MalformedBlocksAreCorruptionNeverOutOfBounds) {
  Entries entries;
  for (int i = 0; i < 40; i++) entries.emplace_back("key" + std::to_string(1000 + i), "value");
  BlockBuilder b(4);
  for (const auto& [k, v] : entries) b.Add(k, v);
  const std::string good = b.Finish().ToString();

  auto check = [](const std::string& bytes, bool expect_corrupt) {
    Block block(BlockContents::CopyOf(bytes));
    auto it = block.NewIterator(BytewiseComparator());
    int n = 0;
    for (it->SeekToFirst(); it->Valid() && n < 1000; it->Next()) n++;
    for (it->SeekToLast(); it->Valid() && n < 2000; it->Prev()) n++;
    it->Seek("key1020");
    it->SeekForPrev("key1020");
    const Slice targets[] = {"key1003", "key1020", "key1039", "key2"};
    uint32_t restarts[4];
    auto batched = block.NewIterator(BytewiseComparator());
    if (batched->FindRestarts(targets, 4, restarts)) {
      for (int i = 0; i < 4; i++) batched->SeekFromRestart(restarts[i], targets[i]);
    } else {
      EXPECT_TRUE(batched->status().IsCorruption()) << batched->status().ToString();
      EXPECT_FALSE(batched->Valid());
    }
    if (expect_corrupt) {
      EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    }
  };
  check("", true);
  check("abc", true);
  // Restart count larger than the block.
  std::string bad = good;
  EncodeFixed32(bad.data() + bad.size() - 4, 1000000);
  check(bad, true);
  // Restart count zero.
  bad = good;
  EncodeFixed32(bad.data() + bad.size() - 4, 0);
  check(bad, true);
  // A restart point past the entries.
  bad = good;
  EncodeFixed32(bad.data() + bad.size() - 8, static_cast<uint32_t>(bad.size()));
  check(bad, true);
  // Shared prefix longer than the previous key (the first entry claims to share 5 bytes).
  bad = good;
  bad[0] = 5;
  check(bad, true);
  // An entry length running past the restarts.
  bad = good;
  bad[1] = 0x7f;
  check(bad, true);
  // Overlong varint.
  bad = good;
  for (int i = 0; i < 6; i++) bad[i] = '\x80';
  check(bad, true);
  // Every truncation and random garbage: no crash, no out-of-bounds read (ASan).
  ForEachDamagedCopy(good, 5, 2000, 3, [&](const std::string& bad) { check(bad, false); });
}

// Blocks whose values are BlockHandles without a length (format 3 index blocks), of user keys
// with the prefix index a reader builds for them or without: every seek and step lands as a
// plain block's does, values come back whole; a handle cut short or running past the entries is
// Corruption, and no damage reads out of bounds.
TEST(BlockTest, HandleValuedBlocksReadAsSizedOnesAndRefuseBadHandles) {
  Random rnd(99);
  std::set<std::string> users;
  while (users.size() < 300) users.insert("user" + std::to_string(rnd.Uniform(1000000)));
  Entries entries;
  uint64_t offset = 0;
  for (const std::string& u : users) {
    std::string handle;
    const uint64_t size = 1 + rnd.Uniform(1 << (1 + rnd.Uniform(20)));
    BlockHandle(offset, size).EncodeTo(&handle);
    offset += size + kBlockTrailerSize;
    entries.emplace_back(u, handle);
  }
  BlockBuilder sized(1), handles(1, BlockValueFormat::kHandle);
  for (const auto& [k, v] : entries) {
    sized.Add(k, v);
    handles.Add(k, v);
  }
  const std::string good = handles.Finish().ToString();
  // Two bytes of header per entry (shared, unshared) instead of three.
  EXPECT_EQ(sized.Finish().size() - good.size(), entries.size());
  for (bool indexed : {false, true}) {
    Block block(BlockContents::CopyOf(good), BlockValueFormat::kHandle);
    if (indexed) block.BuildRestartPrefixIndex(/*user_keys=*/true);
    EXPECT_EQ(block.has_prefix_index(), indexed);
    auto it = block.NewIterator(BytewiseComparator());
    std::vector<std::string> targets;
    for (const auto& [k, v] : entries) {
      targets.push_back(k);
      targets.push_back(k + '\0');
      targets.push_back(k.substr(0, k.size() - 1));
    }
    test::CheckIteratorContract(it.get(), entries, BytewiseComparator(), indexed ? 1 : 2, &targets);
  }
  const auto check = [](const std::string& bytes, bool expect_corrupt) {
    for (bool indexed : {false, true}) {
      Block block(BlockContents::CopyOf(bytes), BlockValueFormat::kHandle);
      if (indexed) block.BuildRestartPrefixIndex(/*user_keys=*/true);
      auto it = block.NewIterator(BytewiseComparator());
      int n = 0;
      for (it->SeekToFirst(); it->Valid() && n < 1000; it->Next()) n++;
      for (it->SeekToLast(); it->Valid() && n < 2000; it->Prev()) n++;
      it->Seek("user5");
      if (expect_corrupt) {
        EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
      }
    }
  };
  // The last entry's handle runs into the restart array: its size varint never ends.
  std::string bad = good;
  const size_t restarts_at = bad.size() - (entries.size() + 1) * sizeof(uint32_t);
  bad[restarts_at - 1] = static_cast<char>(0x80);
  check(bad, true);
  ForEachDamagedCopy(good, 5, 2000, 3, [&](const std::string& damaged) { check(damaged, false); });
}

// A damaged index block behind a valid checksum: building its prefix index never reads out of
// bounds, and seeks through it report Corruption or land somewhere, never crash; restart keys
// out of order give no prefix index (the seeks then search the keys, as before).
void CheckPrefixIndexOfMalformedBlocks(int interval);

TEST(BlockTest, PrefixIndexOfMalformedBlocksIsSafe) {
  // 40 restart points (numbers on the heap), then 5 (numbers and offsets inline).
  for (int interval : {1, 8}) {
    SCOPED_TRACE("restart interval " + std::to_string(interval));
    CheckPrefixIndexOfMalformedBlocks(interval);
  }
}

void CheckPrefixIndexOfMalformedBlocks(int interval) {
  InternalKeyComparator icmp(BytewiseComparator());
  Entries entries;
  for (int i = 0; i < 40; i++) entries.emplace_back(IKey("key" + std::to_string(1000 + i), 7), "v");
  const int restarts = (40 + interval - 1) / interval;
  BlockBuilder b(interval);
  for (const auto& [k, v] : entries) b.Add(k, v);
  const std::string good = b.Finish().ToString();
  const std::string targets_storage[] = {IKey("key1003", 9), IKey("key1020", 0), IKey("key1039", 9),
                                         IKey("key2", 9)};
  const Slice targets[] = {targets_storage[0], targets_storage[1], targets_storage[2],
                           targets_storage[3]};

  auto check = [&](const std::string& bytes, bool intact) {
    Block block(BlockContents::CopyOf(bytes));
    block.BuildRestartPrefixIndex();
    auto it = block.NewIterator(&icmp);
    for (const Slice& t : targets) {
      it->Seek(t);
      if (intact) {
        ASSERT_TRUE(it->status().ok());
        if (it->Valid()) {
          EXPECT_GE(icmp.Compare(it->key(), t), 0);
        }
      }
    }
    uint32_t restarts[4];
    auto batched = block.NewIterator(&icmp);
    if (batched->FindRestarts(targets, 4, restarts)) {
      for (int i = 0; i < 4; i++) batched->SeekFromRestart(restarts[i], targets[i]);
    } else {
      EXPECT_TRUE(batched->status().IsCorruption()) << batched->status().ToString();
    }
  };
  check(good, true);
  ForEachDamagedCopy(good, 6, 3000, 2, [&](const std::string& bad) { check(bad, false); });
  // Two restart entries swapped: the block is out of order, so no prefix index is built and a
  // seek gives what the plain binary search gives.
  std::string swapped = good;
  const size_t restarts_at = swapped.size() - 4 - restarts * 4;
  const int x = restarts / 4, y = 3 * restarts / 4;
  std::string a = swapped.substr(restarts_at + x * 4, 4),
              c = swapped.substr(restarts_at + y * 4, 4);
  swapped.replace(restarts_at + x * 4, 4, c);
  swapped.replace(restarts_at + y * 4, 4, a);
  Block plain(BlockContents::CopyOf(swapped));
  Block indexed(BlockContents::CopyOf(swapped));
  indexed.BuildRestartPrefixIndex();
  EXPECT_FALSE(indexed.has_prefix_index());
  EXPECT_EQ(indexed.usable_size(), plain.usable_size());
  auto pi = plain.NewIterator(&icmp);
  auto ii = indexed.NewIterator(&icmp);
  for (const Slice& t : targets) {
    pi->Seek(t);
    ii->Seek(t);
    ASSERT_EQ(pi->Valid(), ii->Valid());
    if (pi->Valid()) {
      EXPECT_EQ(pi->key().ToString(), ii->key().ToString());
    }
  }
  Block good_block(BlockContents::CopyOf(good));
  const size_t before = good_block.usable_size();
  good_block.BuildRestartPrefixIndex();
  EXPECT_TRUE(good_block.has_prefix_index());
  if (restarts > static_cast<int>(RestartPrefixIndex::kInlineRestarts)) {
    EXPECT_GE(good_block.usable_size(), before + restarts * sizeof(uint64_t));  // on the heap
  } else {
    EXPECT_EQ(good_block.usable_size(), before);  // inside the Block
  }
}

// Seeks, SeekForPrev, Prev and the batched seeks of a block with a prefix index give exactly
// what the same block without one gives, for restart counts on both sides of the inline count
// (numbers and offsets inside the Block up to 8 restart points, numbers on the heap above).
TEST(BlockTest, PrefixIndexedBlocksAnswerAsPlainOnes) {
  InternalKeyComparator icmp(BytewiseComparator());
  for (uint32_t restarts = 1; restarts <= 12; restarts++) {
    for (int interval : {1, 3, 16}) {
      SCOPED_TRACE(std::to_string(restarts) + " restart points, interval " +
                   std::to_string(interval));
      Random rnd(restarts * 100 + interval);
      const int n = static_cast<int>(restarts) * interval;
      Entries entries = interval == 3 ? TieHeavyEntries(&rnd, n) : RandomEntries(&rnd, n, 30, true);
      auto plain = BuildBlock(entries, interval, false);
      auto indexed = BuildBlock(entries, interval, true);
      ASSERT_TRUE(indexed->has_prefix_index());
      auto p = plain->NewIterator(&icmp);
      auto q = indexed->NewIterator(&icmp);
      const auto same = [&](const char* what) {
        ASSERT_EQ(p->Valid(), q->Valid()) << what;
        if (p->Valid()) {
          ASSERT_EQ(p->key().ToString(), q->key().ToString()) << what;
        }
        ASSERT_TRUE(q->status().ok()) << q->status().ToString();
      };
      std::vector<std::string> targets = InternalTargets(entries, &rnd);
      std::sort(targets.begin(), targets.end(),
                [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
      for (const std::string& t : targets) {
        p->Seek(t);
        q->Seek(t);
        same("Seek");
        if (p->Valid()) {
          p->Prev();
          q->Prev();
          same("Prev");
        }
        p->SeekForPrev(t);
        q->SeekForPrev(t);
        same("SeekForPrev");
      }
      std::vector<Slice> slices(targets.begin(), targets.end());
      std::vector<uint32_t> rp(slices.size()), rq(slices.size());
      ASSERT_TRUE(p->FindRestarts(slices.data(), slices.size(), rp.data()));
      ASSERT_TRUE(q->FindRestarts(slices.data(), slices.size(), rq.data()));
      ASSERT_EQ(rp, rq);
    }
  }
}

// ---- Filters ----

// A file held in memory that refuses reads as O_DIRECT does (offset, length and buffer not
// aligned to its alignment) and counts the reads and the buffers they went to.
class DirectIoMemoryFile final : public RandomAccessFile {
 public:
  DirectIoMemoryFile(std::string data, size_t align) : data_(std::move(data)), align_(align) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset % align_ != 0 || n % align_ != 0 ||
        reinterpret_cast<uintptr_t>(scratch) % align_ != 0) {
      return Status::InvalidArgument("unaligned direct read");
    }
    reads++;
    buffers.insert(scratch);
    const size_t have = offset < data_.size() ? std::min(n, data_.size() - offset) : 0;
    if (have > 0) std::memcpy(scratch, data_.data() + offset, have);
    *result = Slice(scratch, have);
    return Status::OK();
  }
  size_t GetRequiredBufferAlignment() const override { return align_; }
  bool use_direct_io() const override { return true; }
  mutable int reads = 0;
  mutable std::set<const char*> buffers;

 private:
  const std::string data_;
  const size_t align_;
};

// Under direct IO the readahead window reads aligned ranges straight into one buffer of its own
// (growing with the readahead), and serves the blocks inside them; a block cut off by the end of
// the file is Corruption.
TEST(ReadaheadBufferTest, DirectIoReadsAlignedRangesIntoOneWindow) {
  std::string data;
  std::vector<BlockHandle> handles;
  for (int i = 0; i < 100; i++) {
    const std::string contents(700 + 37 * (i % 5), static_cast<char>('a' + i % 26));
    handles.emplace_back(data.size(), contents.size());
    data += contents;
    data.push_back(static_cast<char>(CompressionType::kNoCompression));
    PutFixed32(&data, 0);  // checksums are not verified here
  }
  const uint64_t size = data.size();
  const std::string tail = "cut";  // a block whose trailer the file does not hold
  data += tail;
  DirectIoMemoryFile file(data, 512);
  ReadaheadBuffer window(4096, 16384);
  for (int i = 0; i < 100; i++) {
    BlockContents contents;
    Status s = window.ReadBlock(&file, data.size(), "f", handles[i], false, &contents);
    ASSERT_TRUE(s.ok()) << i << " " << s.ToString();
    ASSERT_EQ(contents.data.size(), handles[i].size());
    EXPECT_EQ(contents.data[0], static_cast<char>('a' + i % 26)) << i;
    EXPECT_EQ(contents.data[contents.data.size() - 1], static_cast<char>('a' + i % 26)) << i;
  }
  // ~80 KB read 4, 8, then 16 KiB at a time; a buffer for each size the window grew to.
  EXPECT_LE(file.reads, 10);
  EXPECT_LE(file.buffers.size(), 3u);
  BlockContents contents;
  // The file is shorter than the size it was opened with.
  Status s = window.ReadBlock(&file, data.size() + 64, "f", BlockHandle(size, tail.size()), false,
                              &contents);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("truncated"), std::string::npos) << s.ToString();
}

TEST(FilterTest, NoFalseNegativesAndFalsePositiveRate) {
  constexpr int kKeys = 1000000;
  FilterBlockBuilder builder(10);
  for (int i = 0; i < kKeys; i++) builder.AddKey("present" + std::to_string(i));
  const std::string block = builder.Finish();
  FilterBlockReader reader(block);
  ASSERT_TRUE(reader.valid());
  EXPECT_EQ(reader.num_probes(), 6);
  // ~10 bits per key.
  EXPECT_NEAR(static_cast<double>(block.size()) * 8 / kKeys, 10, 0.1);
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(reader.KeyMayMatch("present" + std::to_string(i))) << i;
  }
  int fp = 0;
  for (int i = 0; i < kKeys; i++) fp += reader.KeyMayMatch("absent" + std::to_string(i)) ? 1 : 0;
  const double rate = static_cast<double>(fp) / kKeys;
  RecordProperty("false_positive_rate", std::to_string(rate));
  EXPECT_LE(rate, 0.012) << fp << " false positives";
  EXPECT_GT(rate, 0.002);  // a filter this small cannot be better: the probes are real
}

TEST(FilterTest, SmallAndEmptyFiltersAndOtherBitsPerKey) {
  {
    FilterBlockBuilder b(10);
    FilterBlockReader r(b.Finish());
    ASSERT_TRUE(r.valid());
    EXPECT_FALSE(r.KeyMayMatch("anything"));
  }
  for (double bpk : {1.0, 5.0, 15.0, 20.0}) {
    FilterBlockBuilder b(bpk);
    for (int i = 0; i < 10000; i++) b.AddKey(std::to_string(i));
    const std::string block = b.Finish();
    FilterBlockReader r(block);
    EXPECT_EQ(r.num_probes(), BloomProbesForBitsPerKey(bpk));
    for (int i = 0; i < 10000; i++) ASSERT_TRUE(r.KeyMayMatch(std::to_string(i)));
    int fp = 0;
    for (int i = 0; i < 10000; i++) fp += r.KeyMayMatch("x" + std::to_string(i)) ? 1 : 0;
    // Each extra bit per key buys a better rate.
    if (bpk >= 15) {
      EXPECT_LT(fp, 60) << bpk;
    }
  }
}

TEST(FilterTest, UnknownOrMalformedFilterMatchesEverything) {
  FilterBlockBuilder b(10);
  for (int i = 0; i < 100; i++) b.AddKey(std::to_string(i));
  std::string block = b.Finish();
  std::string unknown_kind = block;
  unknown_kind.back() = 9;
  EXPECT_FALSE(FilterBlockReader(unknown_kind).valid());
  EXPECT_TRUE(FilterBlockReader(unknown_kind).KeyMayMatch("not there"));
  EXPECT_TRUE(FilterBlockReader(Slice("ab")).KeyMayMatch("x"));
  std::string wrong_lines = block;
  EncodeFixed32(wrong_lines.data() + wrong_lines.size() - 6, 1000);
  EXPECT_FALSE(FilterBlockReader(wrong_lines).valid());
}

// ---- Tables ----

struct TableShape {
  const char* name;
  int entries;
  size_t max_value;
  bool binary;
  size_t block_size;
  int restart_interval;
  CompressionType compression;
  double bloom_bits;
};

class TableTest : public ::testing::Test {
 protected:
  TableTest() { EXPECT_TRUE(fs_.CreateDirIfMissing("/t").ok()); }

  // Builds a table at path from entries.
  void Build(const std::string& path, const Entries& entries, const TableShape& shape,
             TableProperties* props = nullptr) {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(fs_.NewWritableFile(path, FileOptions(), &file).ok());
    TableBuilderOptions o;
    o.comparator = &icmp_;
    o.block_size = shape.block_size;
    o.block_restart_interval = shape.restart_interval;
    o.compression = shape.compression;
    o.bloom_bits_per_key = shape.bloom_bits;
    o.prefix_extractor = prefix_extractor_.get();
    o.whole_key_filtering = whole_key_filtering_;
    o.format_version = format_version_;
    TableBuilder builder(o, file.get());
    for (const auto& [k, v] : entries) ASSERT_TRUE(builder.Add(k, v).ok());
    FragmentedRangeTombstoneList list(BytewiseComparator(), tombstones_);
    for (const auto& f : list.fragments()) {
      for (SequenceNumber seq : list.seqs(f)) {
        ASSERT_TRUE(builder.AddRangeTombstone(f.start, f.end, seq).ok());
      }
    }
    ASSERT_TRUE(builder.Finish().ok());
    EXPECT_EQ(builder.FileSize(), fs_.FileSize(path));
    EXPECT_EQ(builder.NumEntries(), entries.size());
    if (props != nullptr) *props = builder.properties();
    ASSERT_TRUE(file->Sync().ok());
    ASSERT_TRUE(file->Close().ok());
  }
  // The body of EveryBitFlipIsDetected, under the filter options and format below; the
  // fixture's keys have one version each, or several whose runs span data blocks.
  void CheckEveryBitFlipIsDetected(bool versions_span_blocks = false);
  // Filter contents of the tables Build writes, and the extractor Open's readers have.
  std::shared_ptr<const SliceTransform> prefix_extractor_;
  bool whole_key_filtering_ = true;
  // Range tombstones Build adds (fragmented) besides the entries.
  std::vector<RangeTombstone> tombstones_;
  // The format Build writes.
  uint32_t format_version_ = kTableFormatVersionCompactIndex;
  // Whether some user key of reader's table has entries in two data blocks (read block by
  // block, independently of the index's key kind).
  bool UserKeySpansBlocks(const TableReader& reader) {
    auto index = reader.NewIndexIterator();
    std::string previous_last;
    bool have_previous = false;
    for (index->SeekToFirst(); index->Valid(); index->Next()) {
      Slice v = index->value();
      BlockHandle h;
      EXPECT_TRUE(h.DecodeFrom(&v).ok());
      BlockRef ref;
      EXPECT_TRUE(reader.GetDataBlock(ReadOptions(), h, &ref).ok());
      if (ref.get() == nullptr) return false;
      BlockIter it;
      ref.get()->InitIterator(&icmp_, &it);
      it.SeekToFirst();
      if (!it.Valid()) continue;
      if (have_previous && ExtractUserKey(it.key()) == Slice(previous_last)) return true;
      it.SeekToLast();
      previous_last = ExtractUserKey(it.key()).ToString();
      have_previous = true;
    }
    EXPECT_TRUE(index->status().ok());
    return false;
  }
  // Whether reader's tombstones answer every covering query as tombstones_ do.
  void ExpectTombstonesOf(const TableReader& reader) {
    const auto& list = reader.range_tombstones();
    if (tombstones_.empty()) {
      EXPECT_EQ(list, nullptr);
      return;
    }
    ASSERT_NE(list, nullptr);
    FragmentedRangeTombstoneList want(BytewiseComparator(), tombstones_);
    ASSERT_EQ(list->num_entries(), want.num_entries());
    for (const auto& t : tombstones_) {
      for (const std::string& key : {t.start, t.end, t.start + '\0', t.end + '\0'}) {
        for (SequenceNumber read : {t.seq - 1, t.seq, kMaxSequenceNumber}) {
          ASSERT_EQ(list->MaxCoveringSeq(key, read), want.MaxCoveringSeq(key, read));
        }
      }
    }
  }

  Status Open(const std::string& path, std::unique_ptr<TableReader>* reader,
              std::shared_ptr<Cache> cache = nullptr) {
    std::unique_ptr<RandomAccessFile> file;
    Status s = fs_.NewRandomAccessFile(path, FileOptions(), &file);
    if (!s.ok()) return s;
    TableReaderOptions o;
    o.comparator = &icmp_;
    o.block_cache = std::move(cache);
    o.statistics = stats_.get();
    o.file_name = path;
    o.prefix_extractor = prefix_extractor_.get();
    return TableReader::Open(o, std::move(file), fs_.FileSize(path), reader);
  }
  // Get through the reader: value, "NOT_FOUND", "DELETED", "MERGE:<operands>" or "ERROR:...".
  std::string Get(TableReader* reader, const std::string& user_key, SequenceNumber seq,
                  PinnableSlice* out = nullptr, const ReadOptions& ro = ReadOptions()) {
    PinnableSlice local;
    PinnableSlice* value = out != nullptr ? out : &local;
    value->Reset();
    GetContext ctx(nullptr, nullptr, user_key, value);
    LookupKey lk(user_key, seq);
    Status s = reader->Get(ro, lk.internal_key(), &ctx);
    if (!s.ok()) return "ERROR:" + s.ToString();
    switch (ctx.state()) {
      case GetContext::State::kFound:
        return value->ToString();
      case GetContext::State::kDeleted:
        return "DELETED";
      case GetContext::State::kNotFound:
        return "NOT_FOUND";
      default:
        return "MERGE";  // no operator given: merges are reported as such
    }
  }
  // What Get should return for user_key at seq, from the entries.
  static std::string Expected(const Entries& entries, const std::string& user_key,
                              SequenceNumber seq) {
    for (const auto& [k, v] : entries) {
      ParsedInternalKey p;
      EXPECT_TRUE(ParseInternalKey(k, &p));
      if (p.user_key != Slice(user_key) || p.sequence > seq) continue;
      if (p.type == kTypeValue) return v;
      if (p.type == kTypeDeletion) return "DELETED";
      return "MERGE";
    }
    return "NOT_FOUND";
  }
  // /t/good.sst: keys k1000..k1099 (sequence 1, value "v") in 256-byte blocks, uncompressed;
  // *file gets its bytes and *first its first data block's handle.
  void BuildSmallBlocksFixture(std::string* file, BlockHandle* first) {
    Entries entries;
    for (int i = 0; i < 100; i++) {
      entries.emplace_back(IKey("k" + std::to_string(1000 + i), 1), "v");
    }
    ASSERT_NO_FATAL_FAILURE(Build("/t/good.sst", entries,
                                  {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10}));
    *file = fs_.FileContents("/t/good.sst");
    const std::vector<BlockHandle> blocks = DataBlocks("/t/good.sst");
    ASSERT_GT(blocks.size(), 1u);
    *first = blocks[0];
  }
  // The handles of the data blocks of the table at path, in index order.
  std::vector<BlockHandle> DataBlocks(const std::string& path) {
    std::vector<BlockHandle> handles;
    std::unique_ptr<TableReader> reader;
    Status s = Open(path, &reader);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return handles;
    auto index = reader->NewIndexIterator();
    for (index->SeekToFirst(); index->Valid(); index->Next()) {
      Slice v = index->value();
      BlockHandle h;
      EXPECT_TRUE(h.DecodeFrom(&v).ok());
      handles.push_back(h);
    }
    return handles;
  }
  // Puts contents (as many bytes as the block holds) in place of the block at h in *file, with a
  // trailer that matches them: the block passes its checksum and only its contents are bad.
  static void ReplaceBlock(std::string* file, const BlockHandle& h, const std::string& contents,
                           CompressionType type = CompressionType::kNoCompression) {
    ASSERT_EQ(contents.size(), h.size());
    std::string block = contents;
    AppendBlockTrailer(&block, contents, type);
    file->replace(h.offset(), block.size(), block);
  }

  InternalKeyComparator icmp_{BytewiseComparator()};
  test::FaultInjectionFileSystem fs_{11};
  std::shared_ptr<Statistics> stats_ = CreateDBStatistics();
};

const TableShape kShapes[] = {
    {"empty", 0, 10, false, 4096, 16, CompressionType::kNoCompression, 10},
    {"one_key", 1, 10, false, 4096, 16, CompressionType::kNoCompression, 10},
    {"small_blocks", 500, 100, false, 64, 16, CompressionType::kNoCompression, 10},
    {"binary_keys", 400, 50, true, 512, 3, CompressionType::kNoCompression, 10},
    {"restart_1", 300, 50, false, 1024, 1, CompressionType::kNoCompression, 10},
    {"restart_32", 300, 50, false, 4096, 32, CompressionType::kNoCompression, 10},
    {"large_values", 60, 200000, false, 4096, 16, CompressionType::kNoCompression, 10},
    {"zstd", 2000, 300, false, 4096, 16, CompressionType::kZSTD, 10},
    {"zstd_binary", 500, 3000, true, 1024, 8, CompressionType::kZSTD, 10},
    {"no_filter", 300, 50, false, 4096, 16, CompressionType::kNoCompression, 0},
};

// Every shape in both formats a builder writes.
TEST_F(TableTest, RoundTripsAcrossShapes) {
  for (const TableShape& shape : kShapes) {
    for (uint32_t format : {kTableFormatVersionCompactIndex, kTableFormatVersion}) {
      SCOPED_TRACE(std::string(shape.name) + " format " + std::to_string(format));
      format_version_ = format;
      Random rnd(std::hash<std::string>()(shape.name));
      Entries entries = RandomEntries(&rnd, shape.entries, shape.max_value, shape.binary);
      const std::string path = std::string("/t/") + shape.name + ".sst";
      TableProperties written;
      ASSERT_NO_FATAL_FAILURE(Build(path, entries, shape, &written));

      for (bool cached : {false, true}) {
        std::unique_ptr<TableReader> reader;
        ASSERT_TRUE(Open(path, &reader, cached ? NewLRUCache(1 << 20) : nullptr).ok());
        EXPECT_EQ(reader->properties().format_version, format);
        // Format 3 keys its index by user keys unless a user key spans two blocks.
        EXPECT_EQ(reader->index_keys_are_user_keys(),
                  format == kTableFormatVersionCompactIndex && !UserKeySpansBlocks(*reader));
        EXPECT_EQ(reader->properties().num_entries, entries.size());
        EXPECT_EQ(reader->properties().num_data_blocks, written.num_data_blocks);
        EXPECT_EQ(reader->properties().filter_kind, shape.bloom_bits > 0 ? "cachelocalbloom" : "");
        auto targets = InternalTargets(entries, &rnd);
        // Block by block, and through readahead windows smaller and larger than a block.
        for (size_t readahead : {size_t{0}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
          ReadOptions ro;
          ro.readahead_size = readahead;
          auto it = reader->NewIterator(ro);
          test::CheckIteratorContract(it.get(), entries, &icmp_, 1, &targets);
        }

        // Point lookups: every user key at its own and neighbouring sequences, and absent keys.
        std::set<std::string> users;
        for (const auto& [k, v] : entries) users.insert(ExtractUserKey(k).ToString());
        for (const std::string& u : users) {
          for (SequenceNumber s :
               {SequenceNumber{0}, SequenceNumber{3}, SequenceNumber{1000}, kMaxSequenceNumber}) {
            ASSERT_EQ(Get(reader.get(), u, s), Expected(entries, u, s)) << Slice(u).ToString(true);
          }
        }
        for (int i = 0; i < 200; i++) {
          const std::string absent = "absent" + std::to_string(i);
          ASSERT_EQ(Get(reader.get(), absent, kMaxSequenceNumber), "NOT_FOUND");
        }
        EXPECT_TRUE(reader->VerifyChecksum().ok());
      }
    }
  }
}

// Iterators read ahead on their own once a scan is sequential: a full scan of a table of
// ~300 small blocks takes a few dozen reads (windows doubling from 8 KiB to 256 KiB), while
// seeks that each touch a block or two read block by block. Both see every entry.
TEST_F(TableTest, IteratorsReadAheadOnlyWhenScanningSequentially) {
  Entries entries;
  for (int i = 0; i < 3000; i++) {
    entries.emplace_back(IKey("k" + std::to_string(100000 + i), 1), std::string(100, 'a' + i % 26));
  }
  ASSERT_NO_FATAL_FAILURE(Build("/t/scan.sst", entries,
                                {"", 0, 0, false, 1024, 16, CompressionType::kNoCompression, 10}));
  const size_t blocks = DataBlocks("/t/scan.sst").size();
  ASSERT_GT(blocks, 250u);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/scan.sst", &reader).ok());  // no block cache: every load reads

  uint64_t before = fs_.operation_count();
  auto it = reader->NewIterator(ReadOptions());
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++)
    ASSERT_EQ(it->key(), Slice(entries[n].first));
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(n, entries.size());
  const uint64_t scan_reads = fs_.operation_count() - before;
  EXPECT_LT(scan_reads, blocks / 4) << blocks << " blocks";

  // Seeks far apart, two entries each: one read per block they touch.
  before = fs_.operation_count();
  size_t touched = 0;
  for (int i = 0; i < 40; i++) {
    const size_t at = static_cast<size_t>((i * 7919) % 2990);
    it->Seek(entries[at].first);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), Slice(entries[at].first));
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), Slice(entries[at + 1].first));
    touched++;
  }
  const uint64_t seek_reads = fs_.operation_count() - before;
  EXPECT_GE(seek_reads, touched);
  EXPECT_LE(seek_reads, 2 * touched);
}

TEST_F(TableTest, CompressionShrinksCompressibleDataOnly) {
  Entries compressible, random;
  Random rnd(3);
  for (int i = 0; i < 2000; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%06d", i);
    compressible.emplace_back(IKey(key, i + 1), std::string(100, 'a' + i % 3));
    std::string noise(100, '\0');
    for (char& c : noise) c = static_cast<char>(rnd.Uniform(256));
    random.emplace_back(IKey(key, i + 1), noise);
  }
  TableShape shape{"", 0, 0, false, 4096, 16, CompressionType::kZSTD, 10};
  TableProperties pc, pr;
  ASSERT_NO_FATAL_FAILURE(Build("/t/c.sst", compressible, shape, &pc));
  ASSERT_NO_FATAL_FAILURE(Build("/t/r.sst", random, shape, &pr));
  EXPECT_LT(pc.data_size * 4, pc.raw_key_size + pc.raw_value_size);
  // Random bytes do not compress: stored raw.
  EXPECT_GT(pr.data_size, pr.raw_value_size);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/c.sst", &reader).ok());
  EXPECT_EQ(reader->properties().compression, "ZSTD");
  EXPECT_EQ(Get(reader.get(), "k000007", kMaxSequenceNumber), std::string(100, 'b'));
}

TEST_F(TableTest, BuilderRejectsOutOfOrderAndMalformedKeys) {
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(fs_.NewWritableFile("/t/bad.sst", FileOptions(), &file).ok());
  TableBuilderOptions o;
  o.comparator = &icmp_;
  TableBuilder b(o, file.get());
  ASSERT_TRUE(b.Add(IKey("b", 5), "x").ok());
  EXPECT_TRUE(b.Add(IKey("a", 6), "x").IsInvalidArgument());
  EXPECT_TRUE(b.Add(IKey("c", 6), "x").IsInvalidArgument());  // the builder stays failed
  TableBuilder b2(o, file.get());
  EXPECT_TRUE(b2.Add("short", "x").IsInvalidArgument());
  TableBuilder b3(o, file.get());
  ASSERT_TRUE(b3.Add(IKey("k", 5), "x").ok());
  EXPECT_TRUE(b3.Add(IKey("k", 5), "x").IsInvalidArgument());  // duplicate internal key
}

TEST_F(TableTest, CachedValuesArePinnedNotCopied) {
  Entries entries;
  for (int i = 0; i < 1000; i++) {
    entries.emplace_back(IKey("key" + std::to_string(100000 + i), 1), "value" + std::to_string(i));
  }
  ASSERT_NO_FATAL_FAILURE(Build("/t/pin.sst", entries,
                                {"", 0, 0, false, 1024, 16, CompressionType::kNoCompression, 10}));
  auto cache = NewLRUCache(1 << 20, 0);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/pin.sst", &reader, cache).ok());
  PinnableSlice v;
  ASSERT_EQ(Get(reader.get(), "key100010", 5, &v), "value10");
  EXPECT_TRUE(v.IsPinned());
  EXPECT_GT(cache->GetPinnedUsage(), 0u);
  // The pinned block survives the cache dropping everything else, and even the reader.
  cache->EraseUnRefEntries();
  reader.reset();
  EXPECT_EQ(v.ToString(), "value10");
  v.Reset();
  EXPECT_EQ(cache->GetPinnedUsage(), 0u);

  // Hits and misses are counted; fill_cache=false reads without caching (and copies).
  ASSERT_TRUE(Open("/t/pin.sst", &reader, cache).ok());
  const uint64_t misses = stats_->getTickerCount(BLOCK_CACHE_MISS);
  ASSERT_EQ(Get(reader.get(), "key100500", 5), "value500");
  ASSERT_EQ(Get(reader.get(), "key100500", 5), "value500");
  EXPECT_EQ(stats_->getTickerCount(BLOCK_CACHE_MISS), misses + 1);
  EXPECT_GE(stats_->getTickerCount(BLOCK_CACHE_HIT), 1u);
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  PinnableSlice copied;
  ASSERT_EQ(Get(reader.get(), "key100900", 5, &copied, no_fill), "value900");
  EXPECT_FALSE(copied.IsPinned());
  // The filter answers for absent keys.
  const uint64_t useful = stats_->getTickerCount(BLOOM_FILTER_USEFUL);
  for (int i = 0; i < 100; i++) Get(reader.get(), "nothere" + std::to_string(i), 5);
  EXPECT_GT(stats_->getTickerCount(BLOOM_FILTER_USEFUL), useful + 90);
}

// A cache that records the values inserted into it, passing everything on to an LRU cache.
class RecordingCache : public Cache {
 public:
  explicit RecordingCache(size_t capacity) : base_(NewLRUCache(capacity, 0)) {}
  const char* Name() const override { return "RecordingCache"; }
  Status Insert(const Slice& key, void* value, size_t charge, Deleter deleter,
                Handle** handle) override {
    inserted.push_back(value);
    return base_->Insert(key, value, charge, deleter, handle);
  }
  Handle* Lookup(const Slice& key) override { return base_->Lookup(key); }
  void Ref(Handle* handle) override { base_->Ref(handle); }
  void Release(Handle* handle) override { base_->Release(handle); }
  void* Value(Handle* handle) override { return base_->Value(handle); }
  void Erase(const Slice& key) override { base_->Erase(key); }
  uint64_t NewId() override { return base_->NewId(); }
  void SetCapacity(size_t capacity) override { base_->SetCapacity(capacity); }
  size_t GetCapacity() const override { return base_->GetCapacity(); }
  size_t GetUsage() const override { return base_->GetUsage(); }
  size_t GetPinnedUsage() const override { return base_->GetPinnedUsage(); }
  void EraseUnRefEntries() override { base_->EraseUnRefEntries(); }

  std::vector<void*> inserted;

 private:
  std::shared_ptr<Cache> base_;
};

// Data blocks entering the block cache carry a prefix index (a small block's inside the Block
// object), and reads through it find every key; blocks read without filling the cache do not
// enter it.
TEST_F(TableTest, CachedDataBlocksCarryAPrefixIndex) {
  Entries entries;
  for (int i = 0; i < 2000; i++) {
    entries.emplace_back(IKey("key" + std::to_string(100000 + i), 1), "value" + std::to_string(i));
  }
  ASSERT_NO_FATAL_FAILURE(Build("/t/pfx.sst", entries,
                                {"", 0, 0, false, 1024, 16, CompressionType::kNoCompression, 10}));
  auto cache = std::make_shared<RecordingCache>(4 << 20);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/pfx.sst", &reader, cache).ok());
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  ASSERT_EQ(Get(reader.get(), "key100010", 5, nullptr, no_fill), "value10");
  EXPECT_TRUE(cache->inserted.empty());
  for (int i = 0; i < 2000; i += 7) {
    ASSERT_EQ(Get(reader.get(), "key" + std::to_string(100000 + i), 5),
              "value" + std::to_string(i));
    ASSERT_EQ(Get(reader.get(), "key" + std::to_string(100000 + i) + "x", 5), "NOT_FOUND");
  }
  ASSERT_FALSE(cache->inserted.empty());
  for (void* value : cache->inserted) {
    EXPECT_TRUE(static_cast<const Block*>(value)->has_prefix_index());
  }
  // Served from the cached, indexed blocks.
  for (int i = 0; i < 2000; i++) {
    ASSERT_EQ(Get(reader.get(), "key" + std::to_string(100000 + i), 5),
              "value" + std::to_string(i));
  }
}

TEST_F(TableTest, VersionsOfOneKeySpanningBlocks) {
  Entries entries;
  for (SequenceNumber s = 200; s >= 1; s--)
    entries.emplace_back(IKey("hot", s), "v" + std::to_string(s));
  entries.emplace_back(IKey("later", 1), "x");
  ASSERT_NO_FATAL_FAILURE(Build("/t/span.sst", entries,
                                {"", 0, 0, false, 128, 4, CompressionType::kNoCompression, 10}));
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/span.sst", &reader).ok());
  EXPECT_GT(reader->properties().num_data_blocks, 5u);
  for (SequenceNumber s : {1, 2, 50, 99, 150, 200, 1000}) {
    EXPECT_EQ(Get(reader.get(), "hot", s), "v" + std::to_string(std::min<SequenceNumber>(s, 200)));
  }
  EXPECT_EQ(Get(reader.get(), "hot", 0), "NOT_FOUND");
}

TEST_F(TableTest, BadFilesGiveClearErrors) {
  Entries entries;
  for (int i = 0; i < 100; i++) entries.emplace_back(IKey("k" + std::to_string(1000 + i), 1), "v");
  ASSERT_NO_FATAL_FAILURE(Build("/t/good.sst", entries,
                                {"", 0, 0, false, 256, 16, CompressionType::kNoCompression, 10}));
  const std::string good = fs_.FileContents("/t/good.sst");
  std::unique_ptr<TableReader> reader;

  fs_.SetFileContents("/t/x.sst", good.substr(0, 20));
  Status s = Open("/t/x.sst", &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("/t/x.sst"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("too short"), std::string::npos) << s.ToString();

  std::string bad = good;
  bad[bad.size() - 1] ^= 1;  // magic
  fs_.SetFileContents("/t/x.sst", bad);
  s = Open("/t/x.sst", &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("magic"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("/t/x.sst: footer at offset " +
                              std::to_string(good.size() - Footer::kEncodedLength)),
            std::string::npos)
      << s.ToString();

  // A truncated file: the footer is gone.
  fs_.SetFileContents("/t/x.sst", good.substr(0, good.size() - 1));
  EXPECT_TRUE(Open("/t/x.sst", &reader).IsCorruption());

  // A data block with a bad checksum: open works (meta blocks are fine), reads fail.
  bad = good;
  bad[10] ^= 0x20;
  fs_.SetFileContents("/t/x.sst", bad);
  ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
  {
    const std::string got = Get(reader.get(), "k1000", 5);
    EXPECT_TRUE(got.starts_with("ERROR:Corruption: /t/x.sst: block at offset 0:")) << got;
    EXPECT_NE(got.find("checksum mismatch"), std::string::npos) << got;
  }
  s = reader->VerifyChecksum();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("offset 0"), std::string::npos) << s.ToString();
  for (size_t readahead : {size_t{0}, size_t{1} << 20}) {
    ReadOptions ro;
    ro.readahead_size = readahead;
    auto it = reader->NewIterator(ro);
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    EXPECT_NE(it->status().ToString().find("/t/x.sst"), std::string::npos)
        << it->status().ToString();
  }
  // Without checksum verification the damaged byte could be returned: verify is the default.
  EXPECT_TRUE(ReadOptions().verify_checksums);

  // Unknown compression byte with a matching checksum.
  bad = good;
  {
    std::unique_ptr<TableReader> r;
    ASSERT_TRUE(Open("/t/good.sst", &r).ok());
    auto idx = r->NewIndexIterator();
    idx->SeekToFirst();
    Slice hv = idx->value();
    BlockHandle h;
    ASSERT_TRUE(h.DecodeFrom(&hv).ok());
    const size_t type_at = static_cast<size_t>(h.offset() + h.size());
    bad[type_at] = 0x55;
    std::string trailer;
    AppendBlockTrailer(&trailer, Slice(bad.data() + h.offset(), h.size()),
                       static_cast<CompressionType>(0x55));
    bad.replace(type_at, kBlockTrailerSize, trailer);
  }
  fs_.SetFileContents("/t/x.sst", bad);
  ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
  {
    const std::string got = Get(reader.get(), "k1000", 5);
    EXPECT_TRUE(got.starts_with("ERROR:Corruption: /t/x.sst: block at offset 0:")) << got;
    EXPECT_NE(got.find("unknown compression"), std::string::npos) << got;
    s = reader->VerifyChecksum();
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find("unknown compression"), std::string::npos) << s.ToString();
  }
}

// A block handle pointing past the end of the file, in the footer or in an index entry.
TEST_F(TableTest, BlockHandlePastEndOfFileIsCorruption) {
  Entries entries;
  for (int i = 0; i < 100; i++) entries.emplace_back(IKey("k" + std::to_string(1000 + i), 1), "v");
  ASSERT_NO_FATAL_FAILURE(Build("/t/good.sst", entries,
                                {"", 0, 0, false, 256, 16, CompressionType::kNoCompression, 10}));
  const std::string good = fs_.FileContents("/t/good.sst");
  const size_t footer_at = good.size() - Footer::kEncodedLength;
  Footer footer;
  ASSERT_TRUE(footer.DecodeFrom(Slice(good.data() + footer_at, Footer::kEncodedLength)).ok());
  std::unique_ptr<TableReader> reader;

  // The footer's index handle: starting past the end, and starting inside but running past it.
  for (const BlockHandle& h : {BlockHandle(good.size() + 100, 50), BlockHandle(10, good.size())}) {
    Footer f = footer;
    f.index_handle = h;
    std::string bad = good.substr(0, footer_at);
    f.EncodeTo(&bad);
    fs_.SetFileContents("/t/x.sst", bad);
    Status s = Open("/t/x.sst", &reader);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find("/t/x.sst: block handle (offset " + std::to_string(h.offset())),
              std::string::npos)
        << s.ToString();
    EXPECT_NE(s.ToString().find("past the end"), std::string::npos) << s.ToString();
  }

  // An index entry: a copy of the index whose first handle points past the end, written after
  // the original index, with a footer naming the copy.
  ASSERT_TRUE(Open("/t/good.sst", &reader).ok());
  ASSERT_EQ(reader->properties().format_version, kTableFormatVersionCompactIndex);
  BlockBuilder index(1, BlockValueFormat::kHandle);
  size_t num_blocks = 0;
  auto it = reader->NewIndexIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next(), num_blocks++) {
    std::string value = it->value().ToString();
    if (num_blocks == 0) {
      value.clear();
      BlockHandle(uint64_t{1} << 32, 100).EncodeTo(&value);
    }
    index.Add(it->key(), value);
  }
  ASSERT_GT(num_blocks, 2u);
  it.reset();
  const std::string index_contents = index.Finish().ToString();
  std::string bad = good.substr(0, footer_at);
  Footer f = footer;
  f.index_handle = BlockHandle(bad.size(), index_contents.size());
  bad += index_contents;
  AppendBlockTrailer(&bad, index_contents, CompressionType::kNoCompression);
  f.EncodeTo(&bad);
  fs_.SetFileContents("/t/x.sst", bad);
  ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
  const std::string got = Get(reader.get(), "k1000", 5);
  EXPECT_TRUE(got.starts_with("ERROR:Corruption: /t/x.sst: block handle (offset 4294967296"))
      << got;
  EXPECT_NE(got.find("past the end"), std::string::npos) << got;
  EXPECT_EQ(Get(reader.get(), "k1099", 5), "v");  // the other blocks still read
  auto scan = reader->NewIterator(ReadOptions());
  scan->SeekToFirst();
  EXPECT_FALSE(scan->Valid());
  EXPECT_TRUE(scan->status().IsCorruption()) << scan->status().ToString();
  EXPECT_NE(scan->status().ToString().find("past the end"), std::string::npos)
      << scan->status().ToString();
  Status s = reader->VerifyChecksum();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("/t/x.sst: block handle"), std::string::npos) << s.ToString();
}

// A user comparator whose FindShortestSeparator gives the limit itself (against its contract,
// but as an internal key with the largest tag still a valid separator): the builder keeps
// internal keys in the index, and every read, SeekForPrev among them, finds the right entry.
TEST_F(TableTest, SeparatorAtTheLimitUserKeyKeepsInternalKeys) {
  class LimitSeparator final : public Comparator {
   public:
    int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
    const char* Name() const override { return BytewiseComparator()->Name(); }
    void FindShortestSeparator(std::string* start, const Slice& limit) const override {
      if (limit.size() < start->size()) start->assign(limit.data(), limit.size());
    }
    void FindShortSuccessor(std::string*) const override {}
  };
  const LimitSeparator limit_separator;
  const InternalKeyComparator icmp(&limit_separator);
  // One entry per block: "abc"@1 | "b"@7 | "c"@2.
  const Entries entries = {{IKey("abc", 1), "x"}, {IKey("b", 7), "y"}, {IKey("c", 2), "z"}};
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(fs_.NewWritableFile("/t/limit.sst", FileOptions(), &file).ok());
  TableBuilderOptions o;
  o.comparator = &icmp;
  o.block_size = 1;
  TableBuilder builder(o, file.get());
  for (const auto& [k, v] : entries) ASSERT_TRUE(builder.Add(k, v).ok());
  ASSERT_TRUE(builder.Finish().ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(builder.properties().num_data_blocks, 3u);
  EXPECT_EQ(builder.properties().index_key_is_user_key, 0u);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/limit.sst", &reader).ok());
  EXPECT_FALSE(reader->index_keys_are_user_keys());
  EXPECT_TRUE(reader->VerifyChecksum().ok());
  EXPECT_EQ(Get(reader.get(), "b", 10), "y");
  auto it = reader->NewIterator(ReadOptions());
  it->SeekForPrev(IKey("b", 5));  // b@7 sorts before b@5
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Slice(IKey("b", 7)));
  it->SeekForPrev(IKey("b", 9));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Slice(IKey("abc", 1)));
}

// An index whose separator sits at or above the next block's first key (behind a valid
// checksum) sends that key's reads to the wrong block: VerifyChecksum reports it, in both index
// key kinds.
TEST_F(TableTest, IndexSeparatorAtTheNextBlocksFirstKeyIsCorruption) {
  for (bool span : {false, true}) {
    SCOPED_TRACE(span ? "internal-key separators" : "user-key separators");
    Entries entries;
    for (int i = 0; i < 100; i++) {
      // Spanning: 30 versions of k1040, several blocks' worth.
      const int key = span && i >= 40 && i < 70 ? 40 : i;
      entries.emplace_back(IKey("k" + std::to_string(1000 + key), 1000 - i), "v");
    }
    ASSERT_NO_FATAL_FAILURE(Build("/t/good.sst", entries,
                                  {"", 0, 0, false, 128, 4, CompressionType::kNoCompression, 10}));
    const std::string good = fs_.FileContents("/t/good.sst");
    std::unique_ptr<TableReader> reader;
    ASSERT_TRUE(Open("/t/good.sst", &reader).ok());
    ASSERT_EQ(reader->index_keys_are_user_keys(), !span);
    ASSERT_TRUE(reader->VerifyChecksum().ok());
    // The first block's separator becomes the second block's first key (its user key).
    const std::vector<BlockHandle> blocks = DataBlocks("/t/good.sst");
    ASSERT_GT(blocks.size(), 2u);
    BlockRef second;
    ASSERT_TRUE(reader->GetDataBlock(ReadOptions(), blocks[1], &second).ok());
    BlockIter first_key;
    second.get()->InitIterator(&icmp_, &first_key);
    first_key.SeekToFirst();
    ASSERT_TRUE(first_key.Valid());
    const std::string raised =
        span ? first_key.key().ToString() : ExtractUserKey(first_key.key()).ToString();
    second.Reset();
    BlockBuilder index(1, BlockValueFormat::kHandle);
    auto it = reader->NewIndexIterator();
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
      index.Add(n == 0 ? Slice(raised) : it->key(), it->value());
    }
    it.reset();
    const size_t footer_at = good.size() - Footer::kEncodedLength;
    Footer footer;
    ASSERT_TRUE(footer.DecodeFrom(Slice(good.data() + footer_at, Footer::kEncodedLength)).ok());
    const std::string index_contents = index.Finish().ToString();
    std::string bad = good.substr(0, footer_at);
    footer.index_handle = BlockHandle(bad.size(), index_contents.size());
    bad += index_contents;
    AppendBlockTrailer(&bad, index_contents, CompressionType::kNoCompression);
    footer.EncodeTo(&bad);
    fs_.SetFileContents("/t/x.sst", bad);
    ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
    const Status s = reader->VerifyChecksum();
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find("key not above the previous index separator at offset " +
                                std::to_string(blocks[1].offset())),
              std::string::npos)
        << s.ToString();
  }
}

// A zstd block whose size prefix disagrees with what its frame decompresses to, behind a
// matching checksum.
TEST_F(TableTest, DecompressedSizeMismatchIsCorruption) {
  Entries entries;
  for (int i = 0; i < 200; i++) {
    entries.emplace_back(IKey("k" + std::to_string(1000 + i), 1), std::string(100, 'a' + i % 3));
  }
  ASSERT_NO_FATAL_FAILURE(
      Build("/t/z.sst", entries, {"", 0, 0, false, 4096, 16, CompressionType::kZSTD, 10}));
  const std::string good = fs_.FileContents("/t/z.sst");
  const std::vector<BlockHandle> blocks = DataBlocks("/t/z.sst");
  ASSERT_FALSE(blocks.empty());
  const BlockHandle first = blocks[0];
  ASSERT_EQ(static_cast<CompressionType>(good[first.offset() + first.size()]),
            CompressionType::kZSTD);
  Slice frame(good.data() + first.offset(), first.size());
  uint32_t raw_size = 0;
  ASSERT_TRUE(GetVarint32(&frame, &raw_size));
  // One byte more (or less) than the frame holds, in a varint of the same length.
  for (uint32_t claimed : {raw_size + 1, raw_size - 1}) {
    if (VarintLength(claimed) != VarintLength(raw_size)) continue;
    std::string contents;
    PutVarint32(&contents, claimed);
    contents.append(frame.data(), frame.size());
    std::string bad = good;
    ASSERT_NO_FATAL_FAILURE(ReplaceBlock(&bad, first, contents, CompressionType::kZSTD));
    fs_.SetFileContents("/t/x.sst", bad);
    std::unique_ptr<TableReader> reader;
    ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
    const std::string expected = "/t/x.sst: block at offset " + std::to_string(first.offset()) +
                                 ": decompressed size mismatch";
    const std::string got = Get(reader.get(), "k1000", 5);
    EXPECT_TRUE(got.starts_with("ERROR:Corruption: " + expected)) << got;
    Status s = reader->VerifyChecksum();
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(expected), std::string::npos) << s.ToString();
  }
}

// A data block that passes its checksum but is malformed inside (a restart count larger than
// the block, a shared prefix longer than the previous key, an overlong varint): Get, a scan and
// VerifyChecksum all report Corruption naming the file and the block's offset.
TEST_F(TableTest, MalformedDataBlockBehindValidChecksumIsCorruption) {
  std::string good;
  BlockHandle first;
  ASSERT_NO_FATAL_FAILURE(BuildSmallBlocksFixture(&good, &first));
  const std::string contents = good.substr(first.offset(), first.size());
  // Entry 0 holds its 13-byte internal key whole; entry 1 shares "k100" with it.
  ASSERT_EQ(contents.substr(0, 3), std::string("\x00\x0d\x01", 3));
  const size_t second_entry = 3 + 13 + 1;
  ASSERT_EQ(contents[second_entry], 4);

  struct Damage {
    const char* what;
    std::string contents;
    const char* key;  // a key whose lookup reads the damaged entry
  };
  std::vector<Damage> cases;
  std::string c = contents;
  EncodeFixed32(c.data() + c.size() - 4, 1000000);
  cases.push_back({"restart count larger than the block", c, "k1000"});
  c = contents;
  c[second_entry] = 100;
  cases.push_back({"shared prefix longer than the previous key", c, "k1001"});
  c = contents;
  c.replace(0, 6, 6, '\x80');
  cases.push_back({"varint of more than 5 bytes", c, "k1000"});
  c = contents;
  c.replace(0, 5, "\xff\xff\xff\xff\x1f");
  cases.push_back({"varint of more than 32 bits", c, "k1000"});

  const std::string where = "/t/x.sst: data block at offset " + std::to_string(first.offset());
  for (const Damage& d : cases) {
    SCOPED_TRACE(d.what);
    std::string bad = good;
    ASSERT_NO_FATAL_FAILURE(ReplaceBlock(&bad, first, d.contents));
    fs_.SetFileContents("/t/x.sst", bad);
    std::unique_ptr<TableReader> reader;
    ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
    const std::string got = Get(reader.get(), d.key, kMaxSequenceNumber);
    EXPECT_TRUE(got.starts_with("ERROR:Corruption: " + where)) << got;
    EXPECT_NE(got.find("malformed block"), std::string::npos) << got;
    auto it = reader->NewIterator(ReadOptions());
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    EXPECT_LT(n, 2);
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    EXPECT_NE(it->status().ToString().find(where), std::string::npos) << it->status().ToString();
    Status s = reader->VerifyChecksum();
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(where), std::string::npos) << s.ToString();
  }
}

// Keys out of order inside a block that passes its checksum: VerifyChecksum, which decodes
// every entry, reports it.
TEST_F(TableTest, KeysOutOfOrderAreCorruption) {
  std::string good;
  BlockHandle first;
  ASSERT_NO_FATAL_FAILURE(BuildSmallBlocksFixture(&good, &first));
  // The first block's entries, re-encoded with its first two keys swapped: same size.
  Block block(BlockContents::CopyOf(Slice(good.data() + first.offset(), first.size())));
  Entries in_block;
  auto it = block.NewIterator(&icmp_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    in_block.emplace_back(it->key().ToString(), it->value().ToString());
  }
  ASSERT_TRUE(it->status().ok());
  ASSERT_GT(in_block.size(), 2u);
  std::swap(in_block[0].first, in_block[1].first);
  BlockBuilder builder(4);
  for (const auto& [k, v] : in_block) builder.Add(k, v);
  std::string bad = good;
  ASSERT_NO_FATAL_FAILURE(ReplaceBlock(&bad, first, builder.Finish().ToString()));
  fs_.SetFileContents("/t/x.sst", bad);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/x.sst", &reader).ok());
  Status s = reader->VerifyChecksum();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("/t/x.sst: keys out of order in block at offset " +
                              std::to_string(first.offset())),
            std::string::npos)
      << s.ToString();
}

// Every single-bit flip anywhere in a fixture table is detected as Corruption on open, on
// read or by VerifyChecksum; no flip ever yields a wrong value. Twice: with a filter of whole
// keys, and with one of prefixes only (its own filter kind, and the extractor's name in the
// properties).
TEST_F(TableTest, EveryBitFlipIsDetected) {
  for (bool prefix_only : {false, true}) {
    SCOPED_TRACE(prefix_only ? "prefix-only filter" : "whole-key filter");
    prefix_extractor_ = prefix_only ? NewFixedPrefixTransform(4) : nullptr;
    whole_key_filtering_ = !prefix_only;
    ASSERT_NO_FATAL_FAILURE(CheckEveryBitFlipIsDetected());
  }
}

// The index forms besides format 3's user keys: format 3 with internal-key separators (a key's
// versions span blocks), and format 1's.
TEST_F(TableTest, EveryBitFlipInOtherIndexFormsIsDetected) {
  ASSERT_NO_FATAL_FAILURE(CheckEveryBitFlipIsDetected(/*versions_span_blocks=*/true));
  format_version_ = kTableFormatVersion;
  ASSERT_NO_FATAL_FAILURE(CheckEveryBitFlipIsDetected());
}

// A table with a range-deletion block: no flip loses or changes a tombstone unnoticed.
TEST_F(TableTest, EveryBitFlipInARangeDeletionTableIsDetected) {
  tombstones_ = {{"key105", "key120", 70}, {"key110", "key130", 60}, {"key125", "key126", 80}};
  ASSERT_NO_FATAL_FAILURE(CheckEveryBitFlipIsDetected());
}

TEST_F(TableTest, RangeTombstonesRoundTrip) {
  Entries entries;
  for (int i = 0; i < 50; i++) entries.emplace_back(IKey("k" + std::to_string(100 + i), 10), "v");
  tombstones_ = {{"k110", "k140", 20}, {"k120", "k199", 30}, {"a", "b", 5}, {"k130", "k131", 9}};
  TableProperties props;
  ASSERT_NO_FATAL_FAILURE(Build("/t/rd.sst", entries,
                                {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10},
                                &props));
  EXPECT_EQ(props.num_entries, entries.size());
  EXPECT_EQ(props.num_range_deletions,
            FragmentedRangeTombstoneList(BytewiseComparator(), tombstones_).num_entries());
  EXPECT_EQ(props.format_version, kTableFormatVersionCompactIndex);
  EXPECT_EQ(props.smallest_seqno, 5u);
  EXPECT_EQ(props.largest_seqno, 30u);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/rd.sst", &reader).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectTombstonesOf(*reader));
  EXPECT_EQ(reader->properties().num_range_deletions, props.num_range_deletions);
  EXPECT_TRUE(reader->VerifyChecksum().ok());
  // Get applies them: k125@10 lies under [k120, k199)@30, k105 under none, and a read below
  // a tombstone's sequence does not see it.
  EXPECT_EQ(Get(reader.get(), "k125", kMaxSequenceNumber), "DELETED");
  EXPECT_EQ(Get(reader.get(), "k105", kMaxSequenceNumber), "v");
  EXPECT_EQ(Get(reader.get(), "k125", 29), "DELETED");  // [k110, k140)@20
  EXPECT_EQ(Get(reader.get(), "k145", 29), "v");
  EXPECT_EQ(Get(reader.get(), "k125", 19), "v");

  // Only tombstones: a table with no point entry.
  ASSERT_NO_FATAL_FAILURE(Build(
      "/t/only.sst", {}, {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10}, &props));
  EXPECT_EQ(props.num_entries, 0u);
  EXPECT_EQ(props.smallest_seqno, 5u);
  ASSERT_TRUE(Open("/t/only.sst", &reader).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectTombstonesOf(*reader));
  auto it = reader->NewIterator(ReadOptions());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_TRUE(reader->VerifyChecksum().ok());

  // Written in format 1, the table with tombstones is format 2 and reads the same.
  format_version_ = kTableFormatVersion;
  ASSERT_NO_FATAL_FAILURE(Build("/t/rd1.sst", entries,
                                {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10},
                                &props));
  EXPECT_EQ(props.format_version, kTableFormatVersionWithRangeDeletions);
  ASSERT_TRUE(Open("/t/rd1.sst", &reader).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectTombstonesOf(*reader));
  EXPECT_EQ(Get(reader.get(), "k125", 29), "DELETED");
  EXPECT_EQ(Get(reader.get(), "k145", 29), "v");
  EXPECT_TRUE(reader->VerifyChecksum().ok());

  // Without tombstones the table keeps format 1 (or 3) and has no list.
  tombstones_.clear();
  for (uint32_t format : {kTableFormatVersion, kTableFormatVersionCompactIndex}) {
    format_version_ = format;
    ASSERT_NO_FATAL_FAILURE(Build("/t/plain.sst", entries,
                                  {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10},
                                  &props));
    EXPECT_EQ(props.format_version, format);
    EXPECT_EQ(props.num_range_deletions, 0u);
    ASSERT_TRUE(Open("/t/plain.sst", &reader).ok());
    EXPECT_EQ(reader->range_tombstones(), nullptr);
  }
}

TEST_F(TableTest, BuilderRefusesBadRangeTombstones) {
  for (int c = 0; c < 3; c++) {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(fs_.NewWritableFile("/t/bad.sst", FileOptions(), &file).ok());
    TableBuilderOptions o;
    o.comparator = &icmp_;
    TableBuilder builder(o, file.get());
    ASSERT_TRUE(builder.AddRangeTombstone("b", "d", 7).ok());
    Status s;
    if (c == 0) s = builder.AddRangeTombstone("e", "e", 8);  // empty
    if (c == 1) s = builder.AddRangeTombstone("f", "e", 8);  // end before start
    if (c == 2) s = builder.AddRangeTombstone("b", "d", 9);  // newer after older: out of order
    EXPECT_TRUE(s.IsInvalidArgument()) << c << " " << s.ToString();
    EXPECT_TRUE(builder.Finish().IsInvalidArgument());
  }
}

// The footer's format version and the range-deletion block must agree; a reader refuses either
// mismatch rather than read a table whose tombstones it could miss or invent. So must the
// footer's and the properties' versions, which say how the index is encoded.
TEST_F(TableTest, FormatVersionMustMatchTheRangeDeletionBlock) {
  format_version_ = kTableFormatVersion;
  Entries entries = {{IKey("a", 3), "x"}, {IKey("c", 4), "y"}};
  const auto set_version = [&](const std::string& from, const std::string& to, uint32_t version) {
    std::string file = fs_.FileContents(from);
    Footer footer;
    ASSERT_TRUE(footer
                    .DecodeFrom(Slice(file.data() + file.size() - Footer::kEncodedLength,
                                      Footer::kEncodedLength))
                    .ok());
    footer.format_version = version;
    std::string enc;
    footer.EncodeTo(&enc);
    file.replace(file.size() - Footer::kEncodedLength, Footer::kEncodedLength, enc);
    fs_.SetFileContents(to, file);
  };
  tombstones_ = {{"a", "b", 5}};
  ASSERT_NO_FATAL_FAILURE(
      Build("/t/v2.sst", entries, {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10}));
  ASSERT_NO_FATAL_FAILURE(set_version("/t/v2.sst", "/t/v2as1.sst", kTableFormatVersion));
  std::unique_ptr<TableReader> reader;
  Status s = Open("/t/v2as1.sst", &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("range-deletion block"), std::string::npos) << s.ToString();

  tombstones_.clear();
  ASSERT_NO_FATAL_FAILURE(
      Build("/t/v1.sst", entries, {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10}));
  ASSERT_NO_FATAL_FAILURE(
      set_version("/t/v1.sst", "/t/v1as2.sst", kTableFormatVersionWithRangeDeletions));
  s = Open("/t/v1as2.sst", &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();

  ASSERT_NO_FATAL_FAILURE(set_version("/t/v1.sst", "/t/v1as3.sst", 3));
  s = Open("/t/v1as3.sst", &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("footer says format version 3, properties 1"), std::string::npos)
      << s.ToString();

  format_version_ = kTableFormatVersionCompactIndex;
  ASSERT_NO_FATAL_FAILURE(
      Build("/t/v3.sst", entries, {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10}));
  ASSERT_TRUE(Open("/t/v3.sst", &reader).ok());
  ASSERT_NO_FATAL_FAILURE(set_version("/t/v3.sst", "/t/v3as1.sst", kTableFormatVersion));
  s = Open("/t/v3as1.sst", &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("footer says format version 1, properties 3"), std::string::npos)
      << s.ToString();

  ASSERT_NO_FATAL_FAILURE(set_version("/t/v3.sst", "/t/v4.sst", 4));
  s = Open("/t/v4.sst", &reader);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
}

// Format 3's index: user-key separators without value lengths where no user key spans two data
// blocks (about two thirds of format 1's index for keys and values shaped like db_bench's),
// internal-key separators where one does; every read path answers alike in both formats.
TEST_F(TableTest, CompactIndexKeysByUserKeyUnlessAKeySpansBlocks) {
  Random rnd(301);
  // 16-byte keys, 100-byte values, each key once.
  Entries distinct;
  for (uint64_t i = 0; i < 2000; i++) {
    char key[17];
    std::snprintf(key, sizeof(key), "%016llx",
                  static_cast<unsigned long long>(i * 0x9e3779b97f4a7c15ull));
    distinct.emplace_back(IKey(key, 1 + i), rnd.RandomString(100));
  }
  const auto by_internal_key = [&](const auto& a, const auto& b) {
    return icmp_.Compare(a.first, b.first) < 0;
  };
  std::sort(distinct.begin(), distinct.end(), by_internal_key);
  // The same with 300 versions of one more key in the middle: they fill several blocks.
  Entries spanning = distinct;
  for (SequenceNumber v = 10300; v > 10000; v--) {
    spanning.emplace_back(IKey("8000000000000000", v), "hot" + std::to_string(v));
  }
  std::sort(spanning.begin(), spanning.end(), by_internal_key);
  const TableShape shape{"", 0, 0, false, 4096, 16, CompressionType::kNoCompression, 10};
  uint64_t index_size[2][2];  // [format 3?][spanning?]
  for (bool compact : {true, false}) {
    for (bool span : {false, true}) {
      SCOPED_TRACE(std::string(compact ? "format 3" : "format 1") + (span ? " spanning" : ""));
      format_version_ = compact ? kTableFormatVersionCompactIndex : kTableFormatVersion;
      const Entries& entries = span ? spanning : distinct;
      TableProperties props;
      ASSERT_NO_FATAL_FAILURE(Build("/t/ix.sst", entries, shape, &props));
      index_size[compact][span] = props.index_size;
      EXPECT_EQ(props.index_key_is_user_key, compact && !span ? 1u : 0u);
      for (bool cached : {false, true}) {
        std::unique_ptr<TableReader> reader;
        ASSERT_TRUE(Open("/t/ix.sst", &reader, cached ? NewLRUCache(1 << 20) : nullptr).ok());
        EXPECT_EQ(reader->index_keys_are_user_keys(), compact && !span);
        EXPECT_EQ(UserKeySpansBlocks(*reader), span);
        auto targets = InternalTargets(entries, &rnd);
        auto it = reader->NewIterator(ReadOptions());
        test::CheckIteratorContract(it.get(), entries, &icmp_, 1, &targets);
        // Every entry is a value: a read at `at` sees the newest version at or below it.
        std::map<std::string, std::vector<std::pair<SequenceNumber, std::string>>> versions;
        for (const auto& [k, v] : entries) {
          versions[ExtractUserKey(k).ToString()].emplace_back(ExtractTag(k) >> 8, v);
        }
        for (const auto& [k, v] : entries) {
          const std::string user = ExtractUserKey(k).ToString();
          const SequenceNumber seq = ExtractTag(k) >> 8;
          for (SequenceNumber at : {seq - 1, seq, seq + 1, kMaxSequenceNumber}) {
            std::string want = "NOT_FOUND";
            for (const auto& [vseq, value] : versions[user]) {
              if (vseq <= at) {
                want = value;
                break;
              }
            }
            ASSERT_EQ(Get(reader.get(), user, at), want) << user << "@" << at;
          }
        }
        // Offsets ascend with the key and stay within the data.
        uint64_t previous = 0;
        for (const auto& [k, v] : entries) {
          const uint64_t offset = reader->ApproximateOffsetOf(k);
          ASSERT_GE(offset, previous);
          ASSERT_LE(offset, props.data_size);
          previous = offset;
        }
        std::vector<TableReader::KeyAnchor> anchors;
        ASSERT_TRUE(reader->ApproximateKeyAnchors(8, &anchors).ok());
        ASSERT_EQ(anchors.size(), 8u);
        EXPECT_GE(anchors.back().user_key, ExtractUserKey(entries.back().first).ToString());
        EXPECT_TRUE(reader->VerifyChecksum().ok());
      }
    }
  }
  // Sequence numbers and value lengths gone: 2 + ~8 + ~5 + 4 bytes per entry against 3 + ~16
  // + ~5 + 4.
  EXPECT_LT(index_size[1][0] * 10, index_size[0][0] * 8)
      << index_size[1][0] << " vs " << index_size[0][0];
  // Internal-key separators without value lengths: a byte per entry less than format 1's.
  EXPECT_LT(index_size[1][1], index_size[0][1]);
}

void TableTest::CheckEveryBitFlipIsDetected(bool versions_span_blocks) {
  Entries entries;
  Random rnd(17);
  for (int i = 0; i < 40; i++) {
    // Versions span blocks: 5 versions of each key (newest first), ~8 entries per block.
    const int key = versions_span_blocks ? i / 5 : i;
    entries.emplace_back(
        IKey("key" + std::to_string(100 + key), versions_span_blocks ? 1000 - i : 1 + i),
        rnd.RandomString(20));
  }
  ASSERT_NO_FATAL_FAILURE(Build("/t/fixture.sst", entries,
                                {"", 0, 0, false, 256, 4, CompressionType::kNoCompression, 10}));
  {
    std::unique_ptr<TableReader> reader;
    ASSERT_TRUE(Open("/t/fixture.sst", &reader).ok());
    ASSERT_EQ(UserKeySpansBlocks(*reader), versions_span_blocks);
    ASSERT_EQ(reader->index_keys_are_user_keys(),
              !versions_span_blocks && format_version_ == kTableFormatVersionCompactIndex);
  }
  const std::string good = fs_.FileContents("/t/fixture.sst");
  ASSERT_LT(good.size(), 4000u);
  const FragmentedRangeTombstoneList tombstones(BytewiseComparator(), tombstones_);
  size_t detected_on_open = 0, detected_later = 0, flipped = 0;
  // SHALE_BITFLIP_ONE_PER_BYTE (the sanitizer runs) flips one bit of each byte, in turn; the
  // Debug run flips all eight.
  const bool one_per_byte = std::getenv("SHALE_BITFLIP_ONE_PER_BYTE") != nullptr;
  for (size_t byte = 0; byte < good.size(); byte++) {
    for (int bit = 0; bit < 8; bit++) {
      if (one_per_byte && bit != static_cast<int>(byte % 8)) continue;
      flipped++;
      std::string bad = good;
      bad[byte] ^= static_cast<char>(1 << bit);
      fs_.SetFileContents("/t/x.sst", bad);
      std::unique_ptr<TableReader> reader;
      Status s = Open("/t/x.sst", &reader);
      if (!s.ok()) {
        ASSERT_TRUE(s.IsCorruption() || s.IsNotSupported())
            << byte << ":" << bit << " " << s.ToString();
        detected_on_open++;
        continue;
      }
      // Checked at open: a table that opens has exactly its tombstones.
      ASSERT_NO_FATAL_FAILURE(ExpectTombstonesOf(*reader));
      bool read_error = false;
      for (const auto& [k, v] : entries) {
        // Each version read at its own sequence when there are several.
        const SequenceNumber read_at =
            versions_span_blocks ? ExtractTag(k) >> 8 : kMaxSequenceNumber;
        const std::string got = Get(reader.get(), ExtractUserKey(k).ToString(), read_at);
        if (got.starts_with("ERROR:")) {
          ASSERT_NE(got.find("Corruption"), std::string::npos) << got;
          read_error = true;
          continue;
        }
        const bool covered =
            tombstones.MaxCoveringSeq(ExtractUserKey(k), read_at) > (ExtractTag(k) >> 8);
        ASSERT_EQ(got, covered ? "DELETED" : v)
            << "flip at " << byte << ":" << bit << " changed a value";
      }
      s = reader->VerifyChecksum();
      ASSERT_TRUE(s.IsCorruption() || read_error)
          << "flip at " << byte << ":" << bit << " went undetected";
      detected_later++;
    }
  }
  std::printf(
      "figure: fixture SST (format %u%s%s): %zu bits flipped, %zu detected at open, %zu on read "
      "or by VerifyChecksum, 0 wrong values\n",
      format_version_, versions_span_blocks ? ", versions spanning blocks" : "",
      tombstones_.empty() ? "" : ", range deletions", flipped, detected_on_open, detected_later);
  EXPECT_EQ(detected_on_open + detected_later, flipped);
  EXPECT_GT(detected_on_open, 0u);
  EXPECT_GT(detected_later, 0u);
  std::unique_ptr<TableReader> reader;
  ASSERT_TRUE(Open("/t/fixture.sst", &reader).ok());
  EXPECT_EQ(reader->properties().prefix_extractor,
            prefix_extractor_ != nullptr ? prefix_extractor_->Name() : "");
}

// The iterator contract holds for the memtable's iterator as well.
TEST(MemTableIteratorContractTest, MatchesEntries) {
  InternalKeyComparator icmp(BytewiseComparator());
  Random rnd(23);
  Entries entries = RandomEntries(&rnd, 500, 100, true);
  MemTable* mem = new MemTable(icmp);
  mem->Ref();
  for (const auto& [k, v] : entries) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(k, &p));
    mem->Add(p.sequence, p.type, p.user_key, v);
  }
  auto it = mem->NewIterator();
  auto targets = InternalTargets(entries, &rnd);
  test::CheckIteratorContract(it.get(), entries, &icmp, 3, &targets);
  it.reset();
  mem->Unref();
}

TEST_F(TableTest, TableCacheOpensChecksSizesAndBoundsOpenFiles) {
  ASSERT_TRUE(fs_.CreateDirIfMissing("/db").ok());
  Entries entries = {{IKey("a", 1), "1"}, {IKey("b", 2), "2"}};
  const TableShape shape{"", 0, 0, false, 4096, 16, CompressionType::kNoCompression, 10};
  std::vector<FileMetaData> files(40);
  for (uint64_t n = 1; n <= 40; n++) {
    ASSERT_NO_FATAL_FAILURE(Build(TableFileName("/db", n), entries, shape));
    files[n - 1].number = n;
    files[n - 1].file_size = fs_.FileSize(TableFileName("/db", n));
  }
  TableReaderOptions ro;
  ro.comparator = &icmp_;
  ro.block_cache = NewLRUCache(1 << 20);
  TableCache tc("/db", &fs_, ro, /*max_open_files=*/30, false);
  auto get = [&](const FileMetaData& f, const char* key, std::string* value) {
    PinnableSlice v;
    GetContext ctx(nullptr, nullptr, key, &v);
    LookupKey lk(key, kMaxSequenceNumber);
    TableRef table;
    Status s = tc.Find(f, &table);
    if (s.ok()) s = table->Get(ReadOptions(), lk.internal_key(), &ctx);
    *value = v.ToString();
    return s;
  };
  std::string value;
  for (const FileMetaData& f : files) {
    ASSERT_TRUE(get(f, "b", &value).ok());
    EXPECT_EQ(value, "2");
    EXPECT_EQ(f.pin.reader(), nullptr);  // a bounded cache pins nothing
  }
  EXPECT_LE(tc.open_readers(), 20u);  // 30 minus the reserved descriptors

  // An iterator keeps its reader open across eviction.
  auto it = tc.NewIterator(ReadOptions(), files[0]);
  tc.Evict(1);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "1");
  it.reset();

  // Wrong size (a truncated or swapped file) and a missing file.
  tc.Evict(2);
  FileMetaData wrong;
  wrong.number = 2;
  wrong.file_size = files[1].file_size + 1;
  Status s = get(wrong, "a", &value);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("MANIFEST"), std::string::npos);
  EXPECT_NE(s.ToString().find(TableFileName("/db", 2)), std::string::npos) << s.ToString();
  FileMetaData missing;
  missing.number = 99;
  missing.file_size = 100;
  s = get(missing, "a", &value);
  EXPECT_FALSE(s.ok());
  auto bad_it = tc.NewIterator(ReadOptions(), missing);
  EXPECT_FALSE(bad_it->status().ok());
}

// Unbounded, the first lookup pins the reader in the file's metadata: later lookups find it
// there, eviction (the file deleted) leaves it open until the metadata goes, and a copy of the
// metadata holds no pin.
TEST_F(TableTest, UnboundedTableCachePinsReadersInTheirFiles) {
  ASSERT_TRUE(fs_.CreateDirIfMissing("/db").ok());
  Entries entries = {{IKey("a", 1), "1"}, {IKey("b", 2), "2"}};
  const TableShape shape{"", 0, 0, false, 4096, 16, CompressionType::kNoCompression, 10};
  ASSERT_NO_FATAL_FAILURE(Build(TableFileName("/db", 7), entries, shape));
  TableReaderOptions ro;
  ro.comparator = &icmp_;
  ro.block_cache = NewLRUCache(1 << 20);
  auto tc = std::make_unique<TableCache>("/db", &fs_, ro, /*max_open_files=*/-1, false);
  auto f = std::make_unique<FileMetaData>();
  f->number = 7;
  f->file_size = fs_.FileSize(TableFileName("/db", 7));

  EXPECT_FALSE(tc->FindOpen(*f));  // not open yet: FindOpen opens nothing
  EXPECT_EQ(f->pin.reader(), nullptr);
  TableRef first;
  ASSERT_TRUE(tc->Find(*f, &first).ok());
  ASSERT_NE(f->pin.reader(), nullptr);
  EXPECT_EQ(first.get(), f->pin.reader());
  first.Reset();
  EXPECT_EQ(tc->FindOpen(*f).get(), f->pin.reader());
  EXPECT_EQ(tc->open_readers(), 1u);

  FileMetaData copy = *f;
  EXPECT_EQ(copy.pin.reader(), nullptr);
  TableRef second;
  ASSERT_TRUE(tc->Find(copy, &second).ok());  // the cache's entry, pinned by the copy too
  EXPECT_EQ(second.get(), f->pin.reader());
  EXPECT_EQ(copy.pin.reader(), f->pin.reader());
  second.Reset();
  copy = FileMetaData();  // assignment drops the old pin
  EXPECT_EQ(copy.pin.reader(), nullptr);

  // Evicted (the file is deleted), the pinned reader still answers through its metadata.
  auto it = tc->NewIterator(ReadOptions(), *f);
  tc->Evict(7);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "1");
  it.reset();
  EXPECT_NE(tc->FindOpen(*f).get(), nullptr);
  EXPECT_EQ(tc->open_readers(), 1u);
  f.reset();  // the last reference goes: the reader closes
  EXPECT_EQ(tc->open_readers(), 0u);

  // Metadata outliving its TableCache releases its pin safely.
  f = std::make_unique<FileMetaData>();
  f->number = 7;
  f->file_size = fs_.FileSize(TableFileName("/db", 7));
  TableRef third;
  ASSERT_TRUE(tc->Find(*f, &third).ok());
  third.Reset();
  tc.reset();
  ASSERT_NE(f->pin.reader(), nullptr);
  f.reset();
}

}  // namespace
}  // namespace shale
