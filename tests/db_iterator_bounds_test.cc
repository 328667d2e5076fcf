// Iterator bounds (ReadOptions::iterate_lower_bound / iterate_upper_bound): what a bounded
// iterator shows in both directions, with data in memtables, L0 and deeper levels; bad bounds;
// and that a bounded scan reads fewer blocks than the same unbounded one.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "shale/perf_context.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%04d", i);
  return buf;
}

class DBIteratorBoundsTest : public DBTestBase {
 protected:
  // Keys Key(0), Key(2), ..., Key(198) (even numbers), spread over L1 (the first half,
  // compacted), L0 (the next quarter) and the memtable (the rest), with deletions of every
  // tenth key in a newer layer.
  void FillLayers() {
    options_.disable_auto_compactions = true;
    Open();
    for (int i = 0; i < 100; i += 2) ASSERT_TRUE(Put(Key(i), "v" + std::to_string(i)).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    for (int i = 100; i < 150; i += 2) ASSERT_TRUE(Put(Key(i), "v" + std::to_string(i)).ok());
    for (int i = 0; i < 100; i += 10) ASSERT_TRUE(Delete(Key(i)).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    for (int i = 150; i < 200; i += 2) ASSERT_TRUE(Put(Key(i), "v" + std::to_string(i)).ok());
    for (int i = 100; i < 200; i += 10) ASSERT_TRUE(Delete(Key(i)).ok());
  }
  static bool Live(int i) { return i >= 0 && i < 200 && i % 2 == 0 && i % 10 != 0; }

  // Keys shown by a forward scan from Seek(from) (or SeekToFirst), then a backward scan from
  // SeekForPrev(from_back) (or SeekToLast), as "a b c | c b a".
  std::string Scan(const ReadOptions& ro, const std::string* from, const std::string* from_back) {
    auto it = db_->NewIterator(ro);
    std::string out;
    for (from != nullptr ? it->Seek(*from) : it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + " ";
    }
    out += "|";
    for (from_back != nullptr ? it->SeekForPrev(*from_back) : it->SeekToLast(); it->Valid();
         it->Prev()) {
      out += " " + it->key().ToString();
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return out;
  }
  // The same from the model: live keys in [lo, hi) (of those >= from, <= from_back).
  static std::string Expect(int lo, int hi, int from, int from_back) {
    std::string out;
    for (int i = std::max(lo, from); i < hi; i++) {
      if (Live(i)) out += Key(i) + " ";
    }
    out += "|";
    for (int i = std::min(hi - 1, from_back); i >= lo; i--) {
      if (Live(i)) out += " " + Key(i);
    }
    return out;
  }
};

TEST_F(DBIteratorBoundsTest, ShowsOnlyKeysWithinBoundsBothWays) {
  FillLayers();
  // Bounds on every layer boundary and inside layers, on keys that exist, were deleted or
  // never were; seeks below, inside and above them.
  const std::vector<int> points = {-1,  0,   1,   5,   10,  37,  50,  98,  99,  100,
                                   101, 124, 150, 151, 177, 190, 198, 199, 200, 250};
  for (int lo : points) {
    for (int hi : points) {
      if (hi < lo) continue;
      const std::string lo_key = Key(lo), hi_key = Key(hi);
      const Slice lower(lo_key), upper(hi_key);
      ReadOptions ro;
      ro.iterate_lower_bound = &lower;
      ro.iterate_upper_bound = &upper;
      SCOPED_TRACE(lo_key + ".." + hi_key);
      EXPECT_EQ(Scan(ro, nullptr, nullptr), Expect(lo, hi, -1000, 1000));
      for (int from : {lo - 3, lo + 7, hi - 1, hi + 2}) {
        const std::string f = Key(from);
        EXPECT_EQ(Scan(ro, &f, &f), Expect(lo, hi, from, from)) << f;
      }
      // One side only.
      ReadOptions upper_only;
      upper_only.iterate_upper_bound = &upper;
      EXPECT_EQ(Scan(upper_only, nullptr, nullptr), Expect(-1000, hi, -1000, 1000));
      ReadOptions lower_only;
      lower_only.iterate_lower_bound = &lower;
      EXPECT_EQ(Scan(lower_only, nullptr, nullptr), Expect(lo, 1000, -1000, 1000));
      if (HasFailure()) return;
    }
  }
}

// Turning around at a bound: the iterator goes invalid at the bound, and a seek brings it back.
TEST_F(DBIteratorBoundsTest, DirectionChangesNearBounds) {
  FillLayers();
  const std::string lo_key = Key(41), hi_key = Key(161);
  const Slice lower(lo_key), upper(hi_key);
  ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  auto it = db_->NewIterator(ro);
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), Key(158));
  it->Prev();
  EXPECT_EQ(it->key().ToString(), Key(156));
  it->Next();
  EXPECT_EQ(it->key().ToString(), Key(158));
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  it->SeekToFirst();
  EXPECT_EQ(it->key().ToString(), Key(42));
  it->Next();
  EXPECT_EQ(it->key().ToString(), Key(44));
  it->Prev();
  EXPECT_EQ(it->key().ToString(), Key(42));
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  // A value past the bound is not visible even by seeking to it.
  it->Seek(Key(170));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(Key(20));
  EXPECT_FALSE(it->Valid());
}

TEST_F(DBIteratorBoundsTest, BadBounds) {
  FillLayers();
  const std::string a = Key(10), b = Key(20);
  const Slice lower(b), upper(a);
  ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  auto it = db_->NewIterator(ro);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsInvalidArgument()) << it->status().ToString();
  // Equal bounds: an empty range, not an error.
  ro.iterate_upper_bound = &lower;
  it = db_->NewIterator(ro);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

// Blocks read from table files by a bounded scan and by the same scan without bounds, which
// the caller stops at the first key past the range; every block comes from a file
// (fill_cache off, table readers already open).
class DBIteratorBoundsBlocksTest : public DBIteratorBoundsTest {
 protected:
  uint64_t BlocksRead(bool bounded, bool backward, const std::string& lo, const std::string& hi,
                      int* keys) {
    const Slice lower(lo), upper(hi);
    ReadOptions ro;
    ro.fill_cache = false;
    if (bounded) {
      ro.iterate_lower_bound = &lower;
      ro.iterate_upper_bound = &upper;
    }
    SetPerfLevel(PerfLevel::kEnableCount);
    get_perf_context()->Reset();
    auto it = db_->NewIterator(ro);
    *keys = 0;
    if (!backward) {
      for (it->Seek(lo); it->Valid() && it->key().compare(upper) < 0; it->Next()) (*keys)++;
    } else {
      it->SeekForPrev(hi);
      if (it->Valid() && it->key() == upper) it->Prev();
      for (; it->Valid() && it->key().compare(lower) >= 0; it->Prev()) (*keys)++;
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    const uint64_t blocks = get_perf_context()->block_read_count;
    SetPerfLevel(PerfLevel::kDisable);
    return blocks;
  }
};

TEST_F(DBIteratorBoundsBlocksTest, BoundedScanReadsFewerBlocks) {
  options_.disable_auto_compactions = true;
  options_.block_size = 256;
  options_.target_file_size_base = 8 << 10;
  options_.level_compaction_dynamic_level_bytes = false;  // CompactRange fills L1
  Open();
  const std::string value(40, 'v');
  // L1: keys 0..1999 in files of ~8 KiB.
  for (int i = 0; i < 2000; i++) ASSERT_TRUE(Put(Key(i), value).ok());
  CompactRangeOptions rewrite;  // not a move of the one flushed table: split into files
  rewrite.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(rewrite, nullptr, nullptr).ok());
  std::string files;
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level1", &files));
  ASSERT_GE(std::stoi(files), 5);
  // L0: four tables of disjoint ranges over the whole key space, and deletions of the keys
  // after the scanned range (which an unbounded scan steps over).
  for (int t = 0; t < 4; t++) {
    for (int i = t * 500 + 400; i < t * 500 + 500; i++) {
      ASSERT_TRUE(Put(Key(i) + "x", value).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  for (int i = 1300; i < 1600; i++) ASSERT_TRUE(Delete(Key(i)).ok());
  for (int i = 900; i < 1000; i++) ASSERT_TRUE(Delete(Key(i)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  int keys = 0;
  BlocksRead(false, false, Key(0), Key(2000), &keys);  // opens every table reader
  EXPECT_EQ(keys, 2000 + 400 - 300 - 100);

  for (bool backward : {false, true}) {
    SCOPED_TRACE(backward ? "backward" : "forward");
    int bounded_keys = 0, unbounded_keys = 0;
    const std::string lo = Key(1000), hi = Key(1300);
    const uint64_t bounded = BlocksRead(true, backward, lo, hi, &bounded_keys);
    const uint64_t unbounded = BlocksRead(false, backward, lo, hi, &unbounded_keys);
    EXPECT_EQ(bounded_keys, 300);
    EXPECT_EQ(unbounded_keys, 300);
    // The unbounded scan also reads the L0 tables outside the range and, forward, the deleted
    // keys past it; the bounded one only the blocks of the range. (Backward, the scan stops
    // on the first key below the range, so it reads fewer of the deleted keys' blocks.)
    if (backward) {
      EXPECT_LT(bounded, unbounded);
    } else {
      EXPECT_LT(bounded * 4, unbounded * 3) << bounded << " vs " << unbounded;
    }
    std::printf("figure: %s scan of 300 keys: %llu blocks read bounded, %llu unbounded\n",
                backward ? "backward" : "forward", static_cast<unsigned long long>(bounded),
                static_cast<unsigned long long>(unbounded));
  }
}

}  // namespace
}  // namespace shale::test
