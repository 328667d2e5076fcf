// SingleDelete: reads see the key deleted; a flush or compaction drops the deletion together
// with the one value under it (unless a snapshot sees the value); the records survive the WAL
// and column families; and misuse gives the documented result.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/column_family.h"
#include "shale/perf_context.h"
#include "shale/write_batch.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

std::string Key(int i) { return "k" + std::to_string(1000 + i); }

class DBSingleDeleteTest : public DBTestBase {
 protected:
  std::string Files(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &v));
    return v;
  }
  // Opens a DB of three levels whose last level (L2) holds pairs, and whose L0 compacts
  // into L1 (two files trigger it): compactions into L1 around those keys are not at the
  // last level.
  void OpenWithLastLevel(const std::vector<std::pair<std::string, std::string>>& pairs) {
    options_.num_levels = 3;
    options_.level0_file_num_compaction_trigger = 2;
    options_.level_compaction_dynamic_level_bytes = true;  // CompactRange fills the last level
    Open();
    for (const auto& [k, v] : pairs) ASSERT_TRUE(Put(k, v).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    ASSERT_EQ(Files(2), "1");
    options_.level_compaction_dynamic_level_bytes = false;  // L0 compacts into L1
    Reopen();
  }
  // Deletion markers a full forward scan steps over.
  uint64_t TombstonesScanned() {
    SetPerfLevel(PerfLevel::kEnableCount);
    get_perf_context()->Reset();
    auto it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    EXPECT_TRUE(it->status().ok());
    const uint64_t n = get_perf_context()->internal_delete_skipped_count;
    SetPerfLevel(PerfLevel::kDisable);
    return n;
  }
};

TEST_F(DBSingleDeleteTest, ReadsSeeTheKeyDeletedInEveryLayer) {
  Open();
  for (int layer = 0; layer < 3; layer++) {
    SCOPED_TRACE(layer);
    ASSERT_TRUE(Put("a", "1").ok());
    ASSERT_TRUE(Put("b", "2").ok());
    ASSERT_TRUE(Put("c", "3").ok());
    if (layer >= 1) {
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    }
    if (layer >= 2) {
      ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    }
    ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "b").ok());
    EXPECT_EQ(Get("b"), "NOT_FOUND");
    EXPECT_EQ(Contents(), "a=1 c=3");
    std::vector<std::string> values;
    std::vector<Slice> keys = {"a", "b"};
    std::vector<Status> st = db_->MultiGet(ReadOptions(), keys, &values);
    EXPECT_TRUE(st[0].ok());
    EXPECT_TRUE(st[1].IsNotFound());
    auto it = db_->NewIterator(ReadOptions());
    it->SeekForPrev("b");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "a");
    // Merge over a single deletion starts from nothing.
    ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "a").ok());
    EXPECT_EQ(Get("a"), "NOT_FOUND");
    ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "c").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    EXPECT_EQ(Contents(), "");
  }
  Reopen();
  EXPECT_EQ(Contents(), "");
}

// In the memtable, the deletion and its value cancel out at flush: nothing is written. A
// snapshot that sees the value keeps both.
TEST_F(DBSingleDeleteTest, FlushDropsThePair) {
  options_.disable_auto_compactions = true;
  Open();
  for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(Key(i), "v").ok());
  for (int i = 0; i < 100; i++) ASSERT_TRUE(db_->SingleDelete(WriteOptions(), Key(i)).ok());
  ASSERT_TRUE(Put("other", "v").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Files(0), "1");
  EXPECT_EQ(TombstonesScanned(), 0u);  // the table holds "other" alone
  EXPECT_EQ(Contents(), "other=v");

  for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(Key(i), "w").ok());
  const Snapshot* snap = db_->GetSnapshot();
  for (int i = 0; i < 100; i++) ASSERT_TRUE(db_->SingleDelete(WriteOptions(), Key(i)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Files(0), "2");
  EXPECT_EQ(TombstonesScanned(), 100u);
  EXPECT_EQ(Get(Key(7)), "NOT_FOUND");
  EXPECT_EQ(Get(Key(7), snap), "w");
  db_->ReleaseSnapshot(snap);
  // Without the snapshot, compaction drops both.
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(TombstonesScanned(), 0u);
  EXPECT_EQ(Contents(), "other=v");
}

// Above the last level a Delete's marker must stay (older values of the key may lie below);
// a SingleDelete that meets its value in a compaction drops both there already.
TEST_F(DBSingleDeleteTest, CompactionAboveTheLastLevelDropsThePair) {
  for (const bool single : {false, true}) {
    SCOPED_TRACE(single ? "SingleDelete" : "Delete");
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    OpenWithLastLevel({{"a", "x"}, {"z", "x"}});
    for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(Key(i), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    for (int i = 0; i < 100; i++) {
      ASSERT_TRUE((single ? db_->SingleDelete(WriteOptions(), Key(i)) : Delete(Key(i))).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // the second L0 file: L0 -> L1 runs
    ASSERT_TRUE(db_->WaitForCompact().ok());
    ASSERT_EQ(Files(0), "0");
    EXPECT_EQ(TombstonesScanned(), single ? 0u : 100u);
    EXPECT_EQ(Contents(), "a=x z=x");
  }
}

// Put, SingleDelete, Put, SingleDelete (the contract's repeated use) with the first value at
// the last level: a compaction above it that meets the second value over the first single
// deletion must keep that deletion (it cancels the first value later), or the second single
// deletion, cancelling the second value, would bring the first one back.
TEST_F(DBSingleDeleteTest, SingleDeleteUnderANewerValueIsKept) {
  OpenWithLastLevel({{"a", "x"}, {"k", "first"}, {"z", "x"}});
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "k").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("k", "second").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // L0 -> L1: "second" over the deletion
  ASSERT_TRUE(db_->WaitForCompact().ok());
  ASSERT_EQ(Files(0), "0");
  EXPECT_EQ(Get("k"), "second");
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "k").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  EXPECT_EQ(Contents(), "a=x z=x");
  EXPECT_EQ(TombstonesScanned(), 0u);
}

// The same with a Delete between (SingleDelete, Delete, Put, SingleDelete over a value at the
// last level): the first single deletion, hidden under the Delete, must stay too, or it is gone
// once the Delete is hidden in turn under the newer value.
TEST_F(DBSingleDeleteTest, SingleDeleteUnderADeletionIsKept) {
  OpenWithLastLevel({{"a", "x"}, {"k", "first"}, {"z", "x"}});
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "k").ok());
  ASSERT_TRUE(Delete("k").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // the flush sees the Delete over the deletion
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  ASSERT_TRUE(Put("k", "second").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // L0 -> L1: "second" over the Delete
  ASSERT_TRUE(db_->WaitForCompact().ok());
  ASSERT_EQ(Files(0), "0");
  EXPECT_EQ(Get("k"), "second");
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "k").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  EXPECT_EQ(Contents(), "a=x z=x");
}

// The records go through the WAL, batches and column families like the others.
TEST_F(DBSingleDeleteTest, WalBatchesAndFamilies) {
  Open();
  std::unique_ptr<ColumnFamilyHandle> cf;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "other", &cf).ok());
  ASSERT_TRUE(Put("k", "v").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf.get(), "k", "w").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf.get(), "j", "w").ok());
  WriteBatch batch;
  ASSERT_TRUE(batch.SingleDelete("k").ok());
  ASSERT_TRUE(batch.SingleDelete(cf.get(), "j").ok());
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  cf.reset();
  Close();
  std::vector<ColumnFamilyDescriptor> descriptors = {{kDefaultColumnFamilyName, options_},
                                                     {"other", options_}};
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  ASSERT_TRUE(DB::Open(options_, dbname_, descriptors, &handles, &db_).ok());
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), "k", &v).IsNotFound());
  EXPECT_TRUE(db_->Get(ReadOptions(), handles[1].get(), "j", &v).IsNotFound());
  ASSERT_TRUE(db_->Get(ReadOptions(), handles[1].get(), "k", &v).ok());
  EXPECT_EQ(v, "w");
  // A handle of a dropped family is refused, as for the other writes.
  ASSERT_TRUE(db_->DropColumnFamily(handles[1].get()).ok());
  EXPECT_TRUE(db_->SingleDelete(WriteOptions(), handles[1].get(), "k").IsInvalidArgument());
  handles.clear();
}

// Misuse: a SingleDelete after two Puts of the key. Reads see the key deleted until a
// compaction drops the deletion with the newer value; then the older value shows again (as in
// RocksDB, the result depends on compactions; DB::SingleDelete documents it).
TEST_F(DBSingleDeleteTest, MisuseAfterTwoPutsBringsTheOlderValueBack) {
  options_.disable_auto_compactions = true;
  Open();
  ASSERT_TRUE(Put("k", "old").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("k", "new").ok());
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "k").ok());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // "new" and the deletion cancel out
  EXPECT_EQ(Get("k"), "old");
}

// A batch handler written without SingleDelete stops with NotSupported instead of skipping it.
TEST_F(DBSingleDeleteTest, HandlersWithoutSingleDeleteStop) {
  class Counter : public WriteBatch::Handler {
   public:
    Status Put(const Slice&, const Slice&) override { return Status::OK(); }
    Status Delete(const Slice&) override { return Status::OK(); }
    Status Merge(const Slice&, const Slice&) override { return Status::OK(); }
  } counter;
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.SingleDelete("a").ok());
  EXPECT_TRUE(batch.Iterate(&counter).IsNotSupported());
}

}  // namespace
}  // namespace shale::test
