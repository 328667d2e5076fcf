// ColumnFamilyOptions::max_sequential_skip_in_iterations: an iterator moving forward seeks past a
// long run of versions of one key instead of stepping over each, one moving backward decides a
// key with many entries by a seek to its newest, and both show the same keys and values either
// way.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/perf_context.h"
#include "shale/slice_transform.h"
#include "shale/statistics.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

class DBIteratorReseekTest : public DBTestBase {
 protected:
  DBIteratorReseekTest() { options_.statistics = CreateDBStatistics(); }
  ~DBIteratorReseekTest() override { SetPerfLevel(PerfLevel::kDisable); }

  void DestroyAndReopen() {
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    Open();
  }

  // Every key and value an iterator shows from where `position` puts it on, moving with `step`,
  // with the reseeks and the entries stepped over (as invisible) that it took.
  struct Scan {
    std::vector<std::pair<std::string, std::string>> entries;
    uint64_t reseeks = 0;
    uint64_t skipped = 0;
  };
  template <typename Position, typename Step>
  Scan Collect(const ReadOptions& ro, Position position, Step step) {
    Scan scan;
    const uint64_t reseeks_before =
        options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION);
    SetPerfLevel(PerfLevel::kEnableCount);
    get_perf_context()->Reset();
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    for (position(it.get()); it->Valid(); step(it.get())) {
      scan.entries.emplace_back(it->key().ToString(), it->value().ToString());
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    scan.skipped = get_perf_context()->internal_key_skipped_count;
    SetPerfLevel(PerfLevel::kDisable);
    scan.reseeks =
        options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION) - reseeks_before;
    return scan;
  }
  Scan ScanForward(const ReadOptions& ro) {
    return Collect(
        ro, [](Iterator* it) { it->SeekToFirst(); }, [](Iterator* it) { it->Next(); });
  }
  // Backward from the last key, or from SeekForPrev(from).
  Scan ScanBackward(const ReadOptions& ro, const char* from = nullptr) {
    return Collect(
        ro,
        [from](Iterator* it) {
          if (from == nullptr) {
            it->SeekToLast();
          } else {
            it->SeekForPrev(from);
          }
        },
        [](Iterator* it) { it->Prev(); });
  }

  using Entries = std::vector<std::pair<std::string, std::string>>;
  static Entries Reversed(Entries e) {
    std::reverse(e.begin(), e.end());
    return e;
  }
};

TEST_F(DBIteratorReseekTest, OlderVersionsOfAKeyAreSoughtPast) {
  for (uint64_t max_skip : {uint64_t{8}, uint64_t{1000}}) {
    SCOPED_TRACE(max_skip);
    options_.max_sequential_skip_in_iterations = max_skip;
    DestroyAndReopen();
    ASSERT_TRUE(Put("a", "a1").ok());
    for (int i = 0; i < 100; i++) ASSERT_TRUE(Put("b", "b" + std::to_string(i)).ok());
    ASSERT_TRUE(Put("c", "c1").ok());
    const Scan scan = ScanForward(ReadOptions());
    EXPECT_EQ(scan.entries, (Entries{{"a", "a1"}, {"b", "b99"}, {"c", "c1"}}));
    if (max_skip == 8) {
      // Nine older versions counted as skipped, the ninth found past the limit of eight and
      // sought past with the other ninety.
      EXPECT_EQ(scan.reseeks, 1u);
      EXPECT_EQ(scan.skipped, 9u);
    } else {
      EXPECT_EQ(scan.reseeks, 0u);
      EXPECT_EQ(scan.skipped, 99u);
    }
  }
}

TEST_F(DBIteratorReseekTest, VersionsNewerThanTheReadAreSoughtPast) {
  options_.max_sequential_skip_in_iterations = 4;
  DestroyAndReopen();
  ASSERT_TRUE(Put("a", "a1").ok());
  ASSERT_TRUE(Put("b", "old").ok());
  ASSERT_TRUE(Put("c", "c1").ok());
  const Snapshot* snap = db_->GetSnapshot();
  for (int i = 0; i < 50; i++) ASSERT_TRUE(Put("b", "new" + std::to_string(i)).ok());
  ASSERT_TRUE(Delete("c").ok());
  ReadOptions ro;
  ro.snapshot = snap;
  const Scan scan = ScanForward(ro);
  EXPECT_EQ(scan.entries, (Entries{{"a", "a1"}, {"b", "old"}, {"c", "c1"}}));
  // b's 50 newer versions: five stepped over, then a seek to the snapshot's; c's deletion is
  // one step.
  EXPECT_EQ(scan.reseeks, 1u);
  EXPECT_EQ(scan.skipped, 5u + 1u);
  // The same from a Seek, and back again.
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  it->Seek("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "old");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  EXPECT_EQ(it->value().ToString(), "old");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "a");
  ASSERT_TRUE(it->status().ok());
  it.reset();
  db_->ReleaseSnapshot(snap);
  // The latest view: b's newest version, c deleted.
  EXPECT_EQ(ScanForward(ReadOptions()).entries, (Entries{{"a", "a1"}, {"b", "new49"}}));
}

// After a prefix seek the iterator walks every entry: a seek would position the memtables and
// files whose filters ruled the prefix out. A total-order seek of the same keys reseeks.
TEST_F(DBIteratorReseekTest, NoReseekAfterAPrefixSeek) {
  options_.max_sequential_skip_in_iterations = 2;
  options_.prefix_extractor = NewFixedPrefixTransform(2);
  DestroyAndReopen();
  std::vector<const Snapshot*> snaps;  // keep every version through the flush
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(Put("pa1", "v" + std::to_string(i)).ok());
    snaps.push_back(db_->GetSnapshot());
  }
  ASSERT_TRUE(Put("pa2", "w").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("qq1", "x").ok());  // another prefix, in the memtable only
  for (const bool total_order : {false, true}) {
    SCOPED_TRACE(total_order);
    ReadOptions ro;
    ro.prefix_same_as_start = true;
    ro.total_order_seek = total_order;
    const uint64_t before = options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION);
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    Entries seen;
    for (it->Seek("pa"); it->Valid(); it->Next()) {
      seen.emplace_back(it->key().ToString(), it->value().ToString());
    }
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(seen, (Entries{{"pa1", "v19"}, {"pa2", "w"}}));
    // Backward over pa1's versions too.
    it->Seek("pa2");
    ASSERT_TRUE(it->Valid());
    it->Prev();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "pa1");
    EXPECT_EQ(it->value().ToString(), "v19");
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION) - before,
              total_order ? 2u : 0u);
  }
  for (const Snapshot* snap : snaps) db_->ReleaseSnapshot(snap);
}

TEST_F(DBIteratorReseekTest, RunsAcrossTablesDeletionsMergesAndBounds) {
  options_.max_sequential_skip_in_iterations = 2;
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  DestroyAndReopen();
  // Versions of each key spread over several tables and the memtable; snapshots keep them
  // through compactions.
  std::vector<const Snapshot*> snaps;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 5; i++) {
      ASSERT_TRUE(Put("k1", "v" + std::to_string(round * 5 + i)).ok());
      ASSERT_TRUE(Merge("k2", std::to_string(round * 5 + i)).ok());
      ASSERT_TRUE(Put("k3", "x").ok());
      ASSERT_TRUE(Delete("k3").ok());
      ASSERT_TRUE(Put("k4", "w" + std::to_string(round * 5 + i)).ok());
      snaps.push_back(db_->GetSnapshot());
    }
    if (round < 3) {
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    }
    if (round == 1) {
      ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    }
  }
  std::string merged;
  for (int i = 0; i < 20; i++) merged += (i == 0 ? "" : ",") + std::to_string(i);
  const Scan scan = ScanForward(ReadOptions());
  EXPECT_EQ(scan.entries, (Entries{{"k1", "v19"}, {"k2", merged}, {"k4", "w19"}}));
  EXPECT_GE(scan.reseeks, 2u);  // past k1's and k3's older versions at least
  // Backward, each of the four keys has more than two entries: decided by a seek each.
  const Scan back = ScanBackward(ReadOptions());
  EXPECT_EQ(back.entries, Reversed(scan.entries));
  EXPECT_EQ(back.reseeks, 4u);
  // At an older snapshot: every run is of versions newer than the read first.
  ReadOptions ro;
  ro.snapshot = snaps[6];  // after the second write of round 1
  std::string merged_then;
  for (int i = 0; i < 7; i++) merged_then += (i == 0 ? "" : ",") + std::to_string(i);
  EXPECT_EQ(ScanForward(ro).entries, (Entries{{"k1", "v6"}, {"k2", merged_then}, {"k4", "w6"}}));
  EXPECT_EQ(ScanBackward(ro).entries, (Entries{{"k4", "w6"}, {"k2", merged_then}, {"k1", "v6"}}));
  // An upper bound inside the runs; a lower bound going backward.
  const Slice upper("k3");
  ro.iterate_upper_bound = &upper;
  EXPECT_EQ(ScanForward(ro).entries, (Entries{{"k1", "v6"}, {"k2", merged_then}}));
  EXPECT_EQ(ScanBackward(ro).entries, (Entries{{"k2", merged_then}, {"k1", "v6"}}));
  const Slice lower("k2");
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = nullptr;
  EXPECT_EQ(ScanBackward(ro).entries, (Entries{{"k4", "w6"}, {"k2", merged_then}}));
  for (const Snapshot* s : snaps) db_->ReleaseSnapshot(s);
}

// Going backward, a key with more entries than the limit is decided by a seek to its newest
// entry at the read (once per key), older versions of a key and newer ones alike; without the
// limit every entry is walked. Either way the same keys and values.
TEST_F(DBIteratorReseekTest, BackwardKeysWithManyEntriesAreDecidedBySeek) {
  for (uint64_t max_skip : {uint64_t{8}, uint64_t{1000}}) {
    SCOPED_TRACE(max_skip);
    options_.max_sequential_skip_in_iterations = max_skip;
    DestroyAndReopen();
    ASSERT_TRUE(Put("a", "a1").ok());
    ASSERT_TRUE(Put("b", "old").ok());
    for (int i = 0; i < 8; i++) ASSERT_TRUE(Put("c", "c" + std::to_string(i)).ok());
    const Snapshot* snap = db_->GetSnapshot();
    for (int i = 0; i < 99; i++) ASSERT_TRUE(Put("b", "b" + std::to_string(i)).ok());
    for (int i = 0; i < 20; i++) ASSERT_TRUE(Put("d", "d" + std::to_string(i)).ok());
    ASSERT_TRUE(Delete("d").ok());
    ASSERT_TRUE(Put("e", "e1").ok());
    const Scan scan = ScanBackward(ReadOptions());
    EXPECT_EQ(scan.entries, (Entries{{"e", "e1"}, {"c", "c7"}, {"b", "b98"}, {"a", "a1"}}));
    // b's 100 entries and d's 21 take a seek each; c's 8 are walked.
    EXPECT_EQ(scan.reseeks, max_skip == 8 ? 2u : 0u);
    ReadOptions ro;
    ro.snapshot = snap;
    // From SeekForPrev; d's seek lands on e (written after the snapshot too).
    const Scan at_snap = ScanBackward(ro, "d");
    EXPECT_EQ(at_snap.entries, (Entries{{"c", "c7"}, {"b", "old"}, {"a", "a1"}}));
    // d: all 21 entries newer than the read; b: 99 newer, one visible.
    EXPECT_EQ(at_snap.reseeks, max_skip == 8 ? 2u : 0u);
    // Stepped over as invisible, walking back from each key's oldest entry: d's first 8, and
    // after b's "old" its 7 oldest newer versions (b0..b6); or all of them.
    EXPECT_EQ(at_snap.skipped, max_skip == 8 ? 8u + 7u : 21u + 99u);
    // Direction changes around a key decided by a seek.
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    it->Seek("c");
    ASSERT_TRUE(it->Valid());
    it->Prev();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "b");
    EXPECT_EQ(it->value().ToString(), "b98");
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "c");
    it->Prev();
    it->Prev();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "a");
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "b");
    EXPECT_EQ(it->value().ToString(), "b98");
    ASSERT_TRUE(it->status().ok());
    it.reset();
    db_->ReleaseSnapshot(snap);
  }
}

// Range tombstones hide the versions below them when a key is decided by a seek as when it is
// walked: a tombstone over some versions, then newer ones; a tombstone over every version.
TEST_F(DBIteratorReseekTest, BackwardSeekHonoursRangeTombstones) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  for (uint64_t max_skip : {uint64_t{2}, uint64_t{1000}}) {
    SCOPED_TRACE(max_skip);
    options_.max_sequential_skip_in_iterations = max_skip;
    DestroyAndReopen();
    std::vector<const Snapshot*> snaps;
    for (int i = 0; i < 6; i++) {
      ASSERT_TRUE(Put("b", "b" + std::to_string(i)).ok());
      ASSERT_TRUE(Merge("m", std::to_string(i)).ok());
      ASSERT_TRUE(Put("x", "x" + std::to_string(i)).ok());
      snaps.push_back(db_->GetSnapshot());
    }
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), "a", "n").ok());  // b and m, not x
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    snaps.push_back(db_->GetSnapshot());  // after the range deletion
    for (int i = 0; i < 3; i++) ASSERT_TRUE(Merge("m", "n" + std::to_string(i)).ok());
    const Entries want_now{{"x", "x5"}, {"m", "n0,n1,n2"}};
    const Scan now = ScanBackward(ReadOptions());
    EXPECT_EQ(now.entries, want_now);
    EXPECT_EQ(now.reseeks, max_skip == 2 ? 3u : 0u);  // x, m and b
    EXPECT_EQ(ScanForward(ReadOptions()).entries, Reversed(want_now));
    ReadOptions ro;
    ro.snapshot = snaps[6];
    EXPECT_EQ(ScanBackward(ro).entries, (Entries{{"x", "x5"}}));
    ro.snapshot = snaps[3];
    EXPECT_EQ(ScanBackward(ro).entries, (Entries{{"x", "x3"}, {"m", "0,1,2,3"}, {"b", "b3"}}));
    for (const Snapshot* s : snaps) db_->ReleaseSnapshot(s);
  }
}

}  // namespace
}  // namespace shale::test
