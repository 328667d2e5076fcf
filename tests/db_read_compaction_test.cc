// Read-triggered compaction (ColumnFamilyOptions::read_compaction_bytes_per_seek): seeks into
// keys that an L0 file and a deeper level both hold compact the L0 file down once it has been
// charged its allowed seeks; point lookups and seeks into a single sorted run charge nothing;
// every key reads back as written, also with seeks, writes and compactions on several threads
// at once (the Concurrent suite runs under TSan too).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shale/statistics.h"
#include "src/util/random.h"
#include "src/util/test_hook.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

using Model = std::map<std::string, std::string>;

class DBReadCompactionTest : public DBTestBase {
 protected:
  DBReadCompactionTest() {
    options_.write_buffer_size = 1 << 20;
    options_.target_file_size_base = 64 << 10;
    options_.max_bytes_for_level_base = 4 << 20;
    options_.level0_file_num_compaction_trigger = 4;
    options_.num_levels = 4;
    options_.statistics = CreateDBStatistics();
  }
  int FilesAt(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &v));
    return std::atoi(v.c_str());
  }
  uint64_t ReadCompactions() { return options_.statistics->getTickerCount(COMPACT_READ_TRIGGERED); }
  // Keys [0, n) with values of round, flushed into one L0 table.
  void FillAndFlush(int n, const std::string& round, Model* model) {
    for (int i = 0; i < n; i++) {
      const std::string value = round + "-" + std::to_string(i) + std::string(40, 'v');
      ASSERT_TRUE(Put(NumberedKey(i), value).ok());
      (*model)[NumberedKey(i)] = value;
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  // One L0 table over a deeper level holding the same keys: a seek anywhere reads two runs.
  void OpenWithL0OverALevel(Model* model) {
    Open();
    FillAndFlush(2000, "old", model);
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    FillAndFlush(2000, "new", model);
    ASSERT_EQ(FilesAt(0), 1);
  }
  // n seeks to random keys of [0, 2000) on one iterator; each must land on its key.
  void Seek(int n, uint64_t seed) {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    Random rnd(seed);
    for (int i = 0; i < n; i++) {
      const std::string key = NumberedKey(rnd.Uniform(2000));
      it->Seek(key);
      ASSERT_TRUE(it->Valid()) << key;
      ASSERT_EQ(it->key().ToString(), key);
    }
    ASSERT_TRUE(it->status().ok());
  }
  void ExpectContents(const Model& model) {
    std::string expected;
    for (const auto& [k, v] : model) expected += (expected.empty() ? "" : " ") + k + "=" + v;
    EXPECT_EQ(Contents(), expected);
    for (const auto& [k, v] : model) ASSERT_EQ(Get(k), v) << k;
  }
};

// The L0 table (a few hundred KB: 100 allowed seeks) goes down after enough seeks; the keys keep
// their newest values.
TEST_F(DBReadCompactionTest, SeeksIntoOverlappingRunsCompactTheNewerFileDown) {
  Model model;
  OpenWithL0OverALevel(&model);
  Seek(2000, 1);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(FilesAt(0), 0);
  EXPECT_EQ(ReadCompactions(), 1u);
  ExpectContents(model);
  // One sorted run left: further seeks charge nothing.
  Seek(2000, 2);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(ReadCompactions(), 1u);
  // And after a reopen (charges are not kept) the DB reads the same.
  Reopen();
  ExpectContents(model);
}

// Fewer seeks than allowed, point lookups, or the option off: the L0 table stays.
TEST_F(DBReadCompactionTest, FewSeeksPointLookupsOrTheOptionOffLeaveL0Alone) {
  {
    Model model;
    OpenWithL0OverALevel(&model);
    Seek(5, 3);  // at most 5 samples: 80 charged of 100
    for (int i = 0; i < 5000; i++) ASSERT_NE(Get(NumberedKey(i % 2000)), "NOT_FOUND");
    ASSERT_TRUE(db_->WaitForCompact().ok());
    EXPECT_EQ(FilesAt(0), 1);
    EXPECT_EQ(ReadCompactions(), 0u);
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
  for (bool off_by_option : {true, false}) {
    SCOPED_TRACE(off_by_option ? "read_compaction_bytes_per_seek = 0" : "disable_auto_compactions");
    if (off_by_option) {
      options_.read_compaction_bytes_per_seek = 0;
    } else {
      options_.read_compaction_bytes_per_seek = 16384;
      options_.disable_auto_compactions = true;
    }
    Model model;
    OpenWithL0OverALevel(&model);
    Seek(4000, 4);
    ASSERT_TRUE(db_->WaitForCompact().ok());
    EXPECT_EQ(FilesAt(0), 1);
    EXPECT_EQ(ReadCompactions(), 0u);
    ExpectContents(model);
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

// A request whose compaction is refused (an L0 table of a few keys over a level file 35 times its
// size and more) runs nothing, and WaitForCompact returns. (The background thread has usually
// cleared the request before the waiter looks; a waiter that saw it pending is woken when it is
// cleared, an interleaving this test does not force.)
TEST_F(DBReadCompactionTest, RefusedRequestsRunNothingAndWaitForCompactReturns) {
  options_.target_file_size_base = 1 << 20;  // the 2,000 keys below L0 in one ~150 KB file
  Open();
  Model model;
  FillAndFlush(2000, "old", &model);
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  FillAndFlush(10, "new", &model);  // keys 0-9 only
  ASSERT_EQ(FilesAt(0), 1);
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  for (int i = 0; i < 2000; i++) {
    it->Seek(NumberedKey(i % 10));
    ASSERT_TRUE(it->Valid());
  }
  it.reset();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE(db_->WaitForCompact().ok());
    returned.store(true);
  });
  for (int i = 0; i < 3000 && !returned.load(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(returned.load()) << "WaitForCompact still waiting after 30 s";
  if (!returned.load()) {
    // A finished flush wakes the waiter, so that the test fails rather than hangs.
    ASSERT_TRUE(Put("wake", "up").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    model["wake"] = "up";
  }
  waiter.join();
  EXPECT_EQ(ReadCompactions(), 0u);
  EXPECT_EQ(FilesAt(0), returned.load() ? 1 : 2);
  ExpectContents(model);
}

// A memtable waiting for flush holds read-triggered compactions back (the flush brings its own
// compactions); once it is flushed, the request made meanwhile runs.
TEST_F(DBReadCompactionTest, WaitsWhileAMemtableWaitsForFlush) {
  if (!test_hook::kEnabled) GTEST_SKIP() << "test hooks are compiled out";
  Model model;
  OpenWithL0OverALevel(&model);
  // A flush held inside its table write.
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  test_hook::Set("DBImpl::WriteLevel0Table:Unlocked", [&] {
    std::unique_lock<std::mutex> l(mu);
    entered = true;
    cv.notify_all();
    cv.wait(l, [&] { return release; });
  });
  for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(NumberedKey(i), "during").ok());
  for (int i = 0; i < 100; i++) model[NumberedKey(i)] = "during";
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_TRUE(db_->Flush(no_wait).ok());
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return entered; });
  }
  Seek(2000, 5);  // exhausts the L0 table's seeks while the memtable waits
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ReadCompactions(), 0u);
  EXPECT_EQ(FilesAt(0), 1);
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(db_->WaitForCompact().ok());
  test_hook::ClearAll();
  EXPECT_EQ(ReadCompactions(), 1u);
  EXPECT_EQ(FilesAt(0), 0);  // both L0 tables went down together
  ExpectContents(model);
}

// Readers seeking on several threads while a writer keeps flushing and compactions (read-
// triggered and by size) run beside them: every read sees what was written, and at the end the
// DB holds exactly the model.
TEST_F(DBReadCompactionTest, ConcurrentSeeksWritesAndCompactions) {
  options_.write_buffer_size = 128 << 10;
  options_.target_file_size_base = 32 << 10;
  options_.max_bytes_for_level_base = 256 << 10;
  options_.max_background_jobs = 4;
  options_.read_compaction_bytes_per_seek = uint64_t{1} << 40;  // 100 seeks per file
  Open();
  Model model;
  FillAndFlush(2000, "base", &model);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; t++) {
    readers.emplace_back([&, t] {
      Random rnd(100 + t);
      while (!done.load()) {
        std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
        for (int i = 0; i < 200; i++) {
          const std::string key = NumberedKey(rnd.Uniform(2000));
          it->Seek(key);
          // Every key of [0, 2000) exists throughout (the writer only overwrites).
          if (!it->Valid() || it->key().ToString() != key) failures.fetch_add(1);
        }
        if (!it->status().ok()) failures.fetch_add(1);
      }
    });
  }
  Random rnd(7);
  for (int i = 0; i < 20000; i++) {
    const std::string key = NumberedKey(rnd.Uniform(2000));
    const std::string value = "w" + std::to_string(i) + std::string(60, 'v');
    ASSERT_TRUE(Put(key, value).ok());
    model[key] = value;
  }
  done.store(true);
  for (auto& r : readers) r.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  // Seeks between flushes find L0 tables over the levels time and again (12-14 read-triggered
  // compactions in a Debug build).
  EXPECT_GT(ReadCompactions(), 0u);
  ExpectContents(model);
}

}  // namespace
}  // namespace shale::test
