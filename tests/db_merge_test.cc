// Merge operands and zero-copy reads: GetMergeOperands from memtables and tables (order, base,
// deletions, continue_cb, Incomplete), pinning without copies, and pinned bytes staying valid
// across memtable switches, flushes and compactions until Reset.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/merge_operator.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

class DBMergeTest : public DBTestBase {
 protected:
  DBMergeTest() {
    options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    options_.block_cache = NewLRUCache(8 << 20);
    options_.disable_auto_compactions = true;
  }
  // "a,b,c" or the status text.
  std::string Operands(const std::string& key, int room = 100, const Snapshot* snap = nullptr,
                       std::function<bool(Slice)> cb = nullptr, int* count = nullptr) {
    std::vector<PinnableSlice> ops(static_cast<size_t>(std::max(room, 1)));
    GetMergeOperandsOptions o;
    o.expected_max_number_of_operands = room;
    o.continue_cb = std::move(cb);
    ReadOptions ro;
    ro.snapshot = snap;
    int n = -1;
    Status s = db_->GetMergeOperands(ro, key, ops.data(), &o, &n);
    if (count != nullptr) *count = n;
    if (!s.ok()) return s.ToString();
    std::string out;
    for (int i = 0; i < n; i++) out += (i > 0 ? "," : "") + ops[i].ToString();
    return out;
  }
  // Flushes, then compacts everything into the last level holding data, rewriting it.
  void FlushAndCompact() {
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    CompactRangeOptions o;
    o.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    ASSERT_TRUE(db_->CompactRange(o, nullptr, nullptr).ok());
  }
};

TEST_F(DBMergeTest, OperandsOldestFirstFromEveryLayer) {
  Open();
  EXPECT_NE(Operands("k").find("NotFound"), std::string::npos);
  ASSERT_TRUE(Merge("k", "1").ok());
  ASSERT_TRUE(Merge("k", "2").ok());
  EXPECT_EQ(Operands("k"), "1,2");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // 1,2 in L0
  ASSERT_TRUE(Merge("k", "3").ok());             // 3 in the memtable
  EXPECT_EQ(Operands("k"), "1,2,3");
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(Operands("k"), "1,2,3");
  EXPECT_EQ(Get("k"), "1,2,3");
  // A base value is the first operand; a deletion ends the collection.
  ASSERT_TRUE(Put("p", "base").ok());
  ASSERT_TRUE(Merge("p", "x").ok());
  EXPECT_EQ(Operands("p"), "base,x");
  ASSERT_TRUE(Delete("p").ok());
  EXPECT_NE(Operands("p").find("NotFound"), std::string::npos);
  ASSERT_TRUE(Merge("p", "y").ok());
  EXPECT_EQ(Operands("p"), "y");
  ASSERT_TRUE(Put("plain", "v").ok());
  EXPECT_EQ(Operands("plain"), "v");
}

TEST_F(DBMergeTest, IncompleteReportsTheNeededCountAndCallbackStopsEarly) {
  Open();
  for (int i = 0; i < 10; i++) ASSERT_TRUE(Merge("k", std::to_string(i)).ok());
  int n = 0;
  const std::string r = Operands("k", 4, nullptr, nullptr, &n);
  EXPECT_NE(r.find("incomplete"), std::string::npos) << r;
  EXPECT_EQ(n, 10);
  EXPECT_EQ(Operands("k", n), "0,1,2,3,4,5,6,7,8,9");
  // Stop after three operands: the newest three are kept.
  int seen = 0;
  EXPECT_EQ(Operands("k", 10, nullptr, [&](Slice) { return ++seen < 3; }), "7,8,9");
  // Snapshots see the operands of their time.
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(Merge("k", "later").ok());
  EXPECT_EQ(Operands("k", 20, snap), "0,1,2,3,4,5,6,7,8,9");
  db_->ReleaseSnapshot(snap);
  GetMergeOperandsOptions o;
  o.expected_max_number_of_operands = -1;
  int count;
  EXPECT_TRUE(db_->GetMergeOperands(ReadOptions(), "k", nullptr, &o, &count).IsInvalidArgument());
}

TEST_F(DBMergeTest, OperandsArePinnedNotCopiedAndOutliveFlushAndCompaction) {
  Open();
  const std::string big(4096, 'z');
  for (int i = 0; i < 4; i++) ASSERT_TRUE(Merge("k", big + std::to_string(i)).ok());
  std::vector<PinnableSlice> ops(8);
  GetMergeOperandsOptions o;
  o.expected_max_number_of_operands = 8;
  int n = 0;
  ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "k", ops.data(), &o, &n).ok());
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; i++) EXPECT_TRUE(ops[i].IsPinned()) << i;
  // The memtable holding them is switched, flushed and compacted away while they are pinned.
  FlushAndCompact();
  for (int i = 0; i < 20; i++) ASSERT_TRUE(Merge("other", big).ok());
  FlushAndCompact();
  for (int i = 0; i < n; i++) EXPECT_EQ(ops[i].ToString(), big + std::to_string(i));

  // Compaction merged them into one value.
  ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "k", ops.data(), &o, &n).ok());
  ASSERT_EQ(n, 1);
  EXPECT_EQ(ops[0].ToString(), big + "0," + big + "1," + big + "2," + big + "3");

  // From a cached table block (flushed, not compacted: still separate operands): pinned
  // through the cache; released with the last slice.
  for (int i = 0; i < 4; i++) ASSERT_TRUE(Merge("k2", big + std::to_string(i)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "k2", ops.data(), &o, &n).ok());
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; i++) EXPECT_TRUE(ops[i].IsPinned()) << i;
  EXPECT_GT(options_.block_cache->GetPinnedUsage(), 0u);
  ASSERT_TRUE(Merge("k2", "newer").ok());
  FlushAndCompact();  // the file they came from is replaced
  options_.block_cache->EraseUnRefEntries();
  for (int i = 0; i < n; i++) EXPECT_EQ(ops[i].ToString(), big + std::to_string(i));
  for (int i = 0; i < n - 1; i++) ops[i].Reset();
  EXPECT_GT(options_.block_cache->GetPinnedUsage(), 0u);  // the last slice still holds it
  ops[n - 1].Reset();
  EXPECT_EQ(options_.block_cache->GetPinnedUsage(), 0u);
}

// The slices of one result released on several threads (the first release off the calling
// thread revokes the count's bias): the pins go with the last slice, whichever thread resets
// it, and never before. Run under ThreadSanitizer (and ASan) in CI.
TEST_F(DBMergeTest, ConcurrentOperandsReleasedOnOtherThreads) {
  Open();
  const std::string big(1024, 'y');
  for (int i = 0; i < 12; i++) ASSERT_TRUE(Merge("k", big + std::to_string(i)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  for (int round = 0; round < 50; round++) {
    std::vector<PinnableSlice> ops(12);
    GetMergeOperandsOptions o;
    o.expected_max_number_of_operands = 12;
    int n = 0;
    ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "k", ops.data(), &o, &n).ok());
    ASSERT_EQ(n, 12);
    EXPECT_GT(options_.block_cache->GetPinnedUsage(), 0u);
    // Slices 0-3 stay here, 4-7 and 8-11 go to two threads; all three reset at once.
    std::atomic<int> bad{0};
    auto check_and_reset = [&](int from, int to) {
      for (int i = from; i < to; i++) {
        if (ops[i].ToString() != big + std::to_string(i)) bad++;
        ops[i].Reset();
      }
    };
    std::thread a([&] { check_and_reset(4, 8); });
    std::thread b([&] { check_and_reset(8, 12); });
    check_and_reset(0, round % 2 == 0 ? 4 : 3);
    a.join();
    b.join();
    EXPECT_EQ(bad.load(), 0);
    if (round % 2 == 1) {
      // One slice left, on this thread, after the bias was revoked elsewhere.
      EXPECT_GT(options_.block_cache->GetPinnedUsage(), 0u);
      EXPECT_EQ(ops[3].ToString(), big + "3");
      ops[3].Reset();
    }
    EXPECT_EQ(options_.block_cache->GetPinnedUsage(), 0u) << round;
  }
}

// A slot array reused across calls: whatever the outcome (found with fewer operands than
// room, not found, Incomplete), every slot within the room is reset and the pins a previous
// call left there are released.
TEST_F(DBMergeTest, ReusedSlotsAreResetWhateverTheOutcome) {
  Open();
  const std::string big(2048, 'q');
  for (int i = 0; i < 4; i++) ASSERT_TRUE(Merge("k", big + std::to_string(i)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Merge("m", "a").ok());
  ASSERT_TRUE(Merge("m", "b").ok());
  for (int i = 0; i < 6; i++) ASSERT_TRUE(Merge("many", std::to_string(i)).ok());
  std::vector<PinnableSlice> ops(8);
  GetMergeOperandsOptions o;
  o.expected_max_number_of_operands = 8;
  auto fill_from_table = [&] {
    int n = 0;
    ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "k", ops.data(), &o, &n).ok());
    ASSERT_EQ(n, 4);
    ASSERT_GT(options_.block_cache->GetPinnedUsage(), 0u);
  };
  auto all_empty_from = [&](int from) {
    for (int i = from; i < 8; i++) {
      EXPECT_FALSE(ops[i].IsPinned()) << i;
      EXPECT_EQ(ops[i].size(), 0u) << i;
    }
  };
  int n = 0;
  fill_from_table();
  EXPECT_TRUE(db_->GetMergeOperands(ReadOptions(), "absent", ops.data(), &o, &n).IsNotFound());
  all_empty_from(0);
  EXPECT_EQ(options_.block_cache->GetPinnedUsage(), 0u);

  fill_from_table();
  ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "m", ops.data(), &o, &n).ok());
  ASSERT_EQ(n, 2);
  EXPECT_EQ(ops[0].ToString(), "a");
  EXPECT_EQ(ops[1].ToString(), "b");
  all_empty_from(2);
  EXPECT_EQ(options_.block_cache->GetPinnedUsage(), 0u);

  fill_from_table();
  o.expected_max_number_of_operands = 5;
  EXPECT_TRUE(db_->GetMergeOperands(ReadOptions(), "many", ops.data(), &o, &n).IsIncomplete());
  EXPECT_EQ(n, 6);
  for (int i = 0; i < 5; i++) {
    EXPECT_FALSE(ops[i].IsPinned()) << i;
    EXPECT_EQ(ops[i].size(), 0u) << i;
  }
  EXPECT_EQ(options_.block_cache->GetPinnedUsage(), 0u);
}

TEST_F(DBMergeTest, GetPinsMemtableAndCacheAndSurvivesFlushAndCompaction) {
  Open();
  const std::string value(1000, 'v');
  ASSERT_TRUE(Put("k", value).ok());
  PinnableSlice from_mem;
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &from_mem).ok());
  EXPECT_TRUE(from_mem.IsPinned());
  const char* mem_bytes = from_mem.data();
  FlushAndCompact();
  ASSERT_TRUE(Put("k", "overwritten").ok());
  FlushAndCompact();
  EXPECT_EQ(from_mem.data(), mem_bytes);
  EXPECT_EQ(from_mem.ToString(), value);

  ASSERT_TRUE(Put("t", value).ok());
  FlushAndCompact();
  PinnableSlice from_table;
  ASSERT_TRUE(db_->Get(ReadOptions(), "t", &from_table).ok());
  EXPECT_TRUE(from_table.IsPinned());
  EXPECT_GT(options_.block_cache->GetPinnedUsage(), 0u);
  ASSERT_TRUE(Delete("t").ok());
  FlushAndCompact();
  options_.block_cache->EraseUnRefEntries();
  EXPECT_EQ(from_table.ToString(), value);
  // Reuse resets first: no pin leaks.
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &from_table).ok());
  from_table.Reset();
  from_mem.Reset();
  EXPECT_EQ(options_.block_cache->GetPinnedUsage(), 0u);
}

TEST_F(DBMergeTest, TablesRecordTheirMergeOperator) {
  Open();
  ASSERT_TRUE(Merge("k", "1").ok());
  ASSERT_TRUE(Put("plain", "v").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  Close();
  options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  Open();
  PinnableSlice v;
  Status s = db_->Get(ReadOptions(), "k", &v);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("merge operator"), std::string::npos) << s.ToString();
  Close();
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  EXPECT_EQ(Get("k"), "1");
  EXPECT_EQ(Get("plain"), "v");
}

// Merge operands still in the WAL at Close: an open without the merge operator refuses them
// (InvalidArgument) instead of flushing them into a table stamped with no operator, which would
// make every later open with the operator fail to read it.
TEST_F(DBMergeTest, OpenWithoutTheOperatorRefusesMergesInTheLog) {
  for (bool avoid_flush : {false, true}) {
    SCOPED_TRACE(avoid_flush);
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    options_.avoid_flush_during_recovery = avoid_flush;
    Open();
    ASSERT_TRUE(Put("plain", "v").ok());
    ASSERT_TRUE(Merge("k", "1").ok());
    ASSERT_TRUE(Merge("k", "2").ok());
    Close();  // the merges are only in the log
    options_.merge_operator = nullptr;
    Status s = TryOpen();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("merge_operator"), std::string::npos) << s.ToString();
    Close();
    options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    Open();
    EXPECT_EQ(Get("k"), "1,2");
    EXPECT_EQ(Get("plain"), "v");
    // Once flushed, the table records the operator; an open without one works and reading the
    // table says why it cannot.
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    Close();
    options_.merge_operator = nullptr;
    Open();
    PinnableSlice v;
    EXPECT_TRUE(db_->Get(ReadOptions(), "k", &v).IsInvalidArgument());
    Close();
  }
}

// A refused open leaves nothing behind: when the log holds more than a memtable before its
// first merge operand, recovery has written tables by the time it refuses; it deletes them
// (repeated refused opens used to pile up orphan tables).
TEST_F(DBMergeTest, RefusedOpenDeletesTheTablesItWrote) {
  options_.write_buffer_size = 1 << 20;
  Open();
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(Put("key" + std::to_string(i), std::string(100, 'v')).ok());
  }
  ASSERT_TRUE(Merge("k", "1").ok());
  Close();
  auto tables = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
      n += e.path().extension() == ".sst" ? 1 : 0;
    }
    return n;
  };
  ASSERT_EQ(tables(), 0);
  options_.write_buffer_size = 32 << 10;  // recovery flushes several tables before the merge
  options_.merge_operator = nullptr;
  for (int attempt = 0; attempt < 3; attempt++) {
    Status s = TryOpen();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(tables(), 0) << "attempt " << attempt;
  }
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  EXPECT_EQ(Get("k"), "1");
  EXPECT_EQ(Get("key1999"), std::string(100, 'v'));
  EXPECT_GT(tables(), 0);  // this open flushed what it replayed
}

// Readers pin operands and values while writers merge and the background flushes and
// compacts. Run under ThreadSanitizer (and ASan) in CI.
TEST_F(DBMergeTest, ConcurrentPinnedReadsDuringFlushAndCompaction) {
  options_.disable_auto_compactions = false;
  options_.write_buffer_size = 16 << 10;
  options_.level0_file_num_compaction_trigger = 2;
  options_.max_bytes_for_level_base = 64 << 10;
  options_.target_file_size_base = 16 << 10;
  Open();
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread writer([&] {
    for (int i = 0; i < 3000; i++) {
      if (!db_->Merge(WriteOptions(), "key" + std::to_string(i % 20), "op" + std::to_string(i))
               .ok()) {
        bad++;
      }
    }
    stop.store(true);
  });
  std::thread reader([&] {
    std::vector<PinnableSlice> ops(4096);
    GetMergeOperandsOptions o;
    o.expected_max_number_of_operands = 4096;
    int round = 0;
    while (!stop.load()) {
      const std::string key = "key" + std::to_string(round++ % 20);
      int n = 0;
      Status s = db_->GetMergeOperands(ReadOptions(), key, ops.data(), &o, &n);
      if (!s.ok() && !s.IsNotFound()) bad++;
      for (int i = 0; s.ok() && i < n; i++) {
        if (!ops[i].ToStringView().starts_with("op")) bad++;
      }
      PinnableSlice v;
      s = db_->Get(ReadOptions(), key, &v);
      if (s.ok() && !v.ToStringView().starts_with("op")) bad++;
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  // Compactions may have merged some operands; together they are still every write, in order.
  std::string expect;
  for (int i = 0; i < 3000; i += 20) expect += (expect.empty() ? "op" : ",op") + std::to_string(i);
  EXPECT_EQ(Operands("key0", 4096), expect);
  EXPECT_EQ(Get("key0"), expect);
}

}  // namespace
}  // namespace shale::test
