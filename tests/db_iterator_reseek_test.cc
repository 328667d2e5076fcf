// ColumnFamilyOptions::max_sequential_skip_in_iterations: an iterator moving forward seeks past a
// long run of versions of one key instead of stepping over each, and shows the same keys and
// values either way.
#include <gtest/gtest.h>

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

  // Every key and value a forward scan shows, with the seeks past runs and the entries stepped
  // over that it took.
  struct Scan {
    std::vector<std::pair<std::string, std::string>> entries;
    uint64_t reseeks = 0;
    uint64_t skipped = 0;
  };
  Scan ScanForward(const ReadOptions& ro) {
    Scan scan;
    const uint64_t reseeks_before =
        options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION);
    SetPerfLevel(PerfLevel::kEnableCount);
    get_perf_context()->Reset();
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      scan.entries.emplace_back(it->key().ToString(), it->value().ToString());
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    scan.skipped = get_perf_context()->internal_key_skipped_count;
    SetPerfLevel(PerfLevel::kDisable);
    scan.reseeks =
        options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION) - reseeks_before;
    return scan;
  }

  using Entries = std::vector<std::pair<std::string, std::string>>;
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
    EXPECT_EQ(options_.statistics->getTickerCount(NUMBER_OF_RESEEKS_IN_ITERATION) - before,
              total_order ? 1u : 0u);
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
  // At an older snapshot: every run is of versions newer than the read first.
  ReadOptions ro;
  ro.snapshot = snaps[6];  // after the second write of round 1
  std::string merged_then;
  for (int i = 0; i < 7; i++) merged_then += (i == 0 ? "" : ",") + std::to_string(i);
  EXPECT_EQ(ScanForward(ro).entries, (Entries{{"k1", "v6"}, {"k2", merged_then}, {"k4", "w6"}}));
  // An upper bound inside the runs.
  const Slice upper("k3");
  ro.iterate_upper_bound = &upper;
  EXPECT_EQ(ScanForward(ro).entries, (Entries{{"k1", "v6"}, {"k2", merged_then}}));
  for (const Snapshot* s : snaps) db_->ReleaseSnapshot(s);
}

}  // namespace
}  // namespace shale::test
