// Compactions in parallel: several compactions at once once compaction falls behind
// (max_background_compactions), and one compaction split into subcompactions
// (max_subcompactions) — every key and snapshot read back as written, and a failing part
// failing the whole compaction. Run under TSan too (the suite's name says Concurrent).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "shale/statistics.h"
#include "src/util/random.h"
#include "src/util/test_hook.h"
#include "tests/db_test_util.h"
#include "tests/fault_injection_fs.h"

namespace shale::test {
namespace {

using Model = std::map<std::string, std::string>;

class DBCompactionConcurrentTest : public DBTestBase {
 protected:
  // A small LSM whose compactions take a while: every table sync sleeps.
  void UseSlowTinyLsm() {
    fs_ = FaultInjectionFileSystem::WithParentsOf(dbname_);
    fs_->SetSyncLatency(std::chrono::milliseconds(2));
    options_.file_system = fs_;
    options_.write_buffer_size = 64 << 10;
    options_.target_file_size_base = 16 << 10;
    options_.max_bytes_for_level_base = 64 << 10;
    options_.max_bytes_for_level_multiplier = 4;
    options_.level0_file_num_compaction_trigger = 2;
    options_.level0_slowdown_writes_trigger = 8;  // compaction counts as behind at 3 L0 files
    options_.level0_stop_writes_trigger = 16;
  }

  // Compactions only by CompactRange, split into up to 4 parts of >= 16 KB.
  void UseManualSplitCompactions() {
    options_.max_subcompactions = 4;
    options_.disable_auto_compactions = true;
    options_.write_buffer_size = 128 << 10;
    options_.target_file_size_base = 16 << 10;
  }

  // Writes n random keys (puts, some deletes) into the DB and the model.
  void WriteRandom(Random* rnd, int n, Model* model) {
    for (int i = 0; i < n; i++) {
      const std::string key = "k" + std::to_string(rnd->Uniform(20000));
      if (rnd->Uniform(10) == 0) {
        ASSERT_TRUE(Delete(key).ok());
        model->erase(key);
      } else {
        const std::string value = key + "-" + std::to_string(i) + std::string(80, 'v');
        ASSERT_TRUE(Put(key, value).ok());
        (*model)[key] = value;
      }
    }
  }

  void ExpectContents(const Model& model, const Snapshot* snapshot = nullptr) {
    std::string expected;
    for (const auto& [k, v] : model) expected += (expected.empty() ? "" : " ") + k + "=" + v;
    EXPECT_EQ(Contents(snapshot), expected);
    for (const auto& [k, v] : model) ASSERT_EQ(Get(k, snapshot), v) << k;
  }

  // The most compactions seen running at once while fn runs.
  template <typename Fn>
  int MaxRunningCompactionsDuring(Fn&& fn) {
    std::atomic<bool> done{false};
    std::atomic<int> most{0};
    std::thread poller([&] {
      while (!done.load()) {
        std::string v;
        if (db_->GetProperty("shale.num-running-compactions", &v)) {
          most.store(std::max(most.load(), std::stoi(v)));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    fn();
    done.store(true);
    poller.join();
    return most.load();
  }

  // The most compactions seen running at once over rounds of 30,000 random writes, each
  // followed by WaitForCompact: compactions overlap within the first round as a rule, a loaded
  // machine gets up to `rounds` rounds to show two at once.
  int MostRunningCompactionsOverWriteRounds(Random* rnd, Model* model, int rounds = 3) {
    int most = 0;
    for (int round = 0; round < rounds && most < 2; round++) {
      most = std::max(most, MaxRunningCompactionsDuring([&] {
                        WriteRandom(rnd, 30000, model);
                        ASSERT_TRUE(db_->WaitForCompact().ok());
                      }));
    }
    return most;
  }

  std::shared_ptr<FaultInjectionFileSystem> fs_;
};

// With 4 background jobs (3 compactions), compactions overlap once L0 backs up; with 2 jobs
// (1 compaction, as in RocksDB) they never do. Either way every key reads back.
TEST_F(DBCompactionConcurrentTest, CompactionsRunInParallelOnlyWhenAllowed) {
  for (int jobs : {2, 4}) {
    SCOPED_TRACE("max_background_jobs=" + std::to_string(jobs));
    UseSlowTinyLsm();
    options_.max_background_jobs = jobs;
    Open();
    Random rnd(jobs);
    Model model;
    // One compaction at a time shows in one round as well as in three.
    const int most = MostRunningCompactionsOverWriteRounds(&rnd, &model, jobs == 2 ? 1 : 3);
    if (jobs == 2) {
      EXPECT_EQ(most, 1);
    } else {
      EXPECT_GE(most, 2);
      EXPECT_LE(most, 3);
    }
    ExpectContents(model);
    Reopen();
    ExpectContents(model);
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

// max_background_compactions sets the number directly.
TEST_F(DBCompactionConcurrentTest, MaxBackgroundCompactionsBoundsTheParallelism) {
  UseSlowTinyLsm();
  options_.max_background_jobs = 2;
  options_.max_background_compactions = 2;
  options_.max_subcompactions = 3;  // L0 compactions split too
  Open();
  Random rnd(7);
  Model model;
  EXPECT_EQ(MostRunningCompactionsOverWriteRounds(&rnd, &model), 2);
  ExpectContents(model);
}

// A manual compaction of several L0 files is split into parts of about equal bytes, compacted at
// once; together they keep exactly what one compaction would, snapshots included.
TEST_F(DBCompactionConcurrentTest, SubcompactionsSplitOneCompactionAndKeepEveryVersion) {
  options_.statistics = CreateDBStatistics();
  UseManualSplitCompactions();
  Open();
  Random rnd(11);
  Model model;
  WriteRandom(&rnd, 8000, &model);
  const Snapshot* snapshot = db_->GetSnapshot();
  const Model at_snapshot = model;
  WriteRandom(&rnd, 8000, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  std::string l0;
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &l0));
  ASSERT_GE(std::stoi(l0), 4);

  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  HistogramData parts;
  options_.statistics->histogramData(NUM_SUBCOMPACTIONS_SCHEDULED, &parts);
  EXPECT_GE(parts.count, 1u);
  EXPECT_GE(parts.max, 2);  // ~1.5 MB of inputs, parts of >= 16 KB: up to four
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &l0));
  EXPECT_EQ(l0, "0");
  ExpectContents(model);
  ExpectContents(at_snapshot, snapshot);
  db_->ReleaseSnapshot(snapshot);
  Reopen();
  ExpectContents(model);
}

// CompactRangeOptions::max_subcompactions replaces the DB's for the call (0: the DB's); out of
// range, like an unknown bottommost_level_compaction, it is InvalidArgument.
TEST_F(DBCompactionConcurrentTest, CompactRangeMaxSubcompactionsOverridesTheDBs) {
  options_.statistics = CreateDBStatistics();
  UseManualSplitCompactions();
  options_.max_subcompactions = 1;
  Open();
  Random rnd(17);
  Model model;
  WriteRandom(&rnd, 16000, &model);
  CompactRangeOptions bad;
  bad.max_subcompactions = 65;
  EXPECT_TRUE(db_->CompactRange(bad, nullptr, nullptr).IsInvalidArgument());
  bad.max_subcompactions = 0;
  bad.bottommost_level_compaction = static_cast<BottommostLevelCompaction>(9);
  EXPECT_TRUE(db_->CompactRange(bad, nullptr, nullptr).IsInvalidArgument());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  HistogramData parts;
  options_.statistics->histogramData(NUM_SUBCOMPACTIONS_SCHEDULED, &parts);
  EXPECT_EQ(parts.count, 0u);  // the DB's 1: nothing split
  CompactRangeOptions split;
  split.max_subcompactions = 4;
  split.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(split, nullptr, nullptr).ok());
  options_.statistics->histogramData(NUM_SUBCOMPACTIONS_SCHEDULED, &parts);
  EXPECT_GE(parts.count, 1u);
  EXPECT_GE(parts.max, 2);  // the last level rewritten in place, in parts
  ExpectContents(model);
  Reopen();
  ExpectContents(model);
}

// A part that fails (a table write error) fails the whole compaction with that error — not
// the Aborted its siblings stop with — and installs nothing; once the fault is gone, Resume
// and the compaction succeed.
TEST_F(DBCompactionConcurrentTest, AFailingSubcompactionFailsTheCompaction) {
  fs_ = FaultInjectionFileSystem::WithParentsOf(dbname_);
  options_.file_system = fs_;
  options_.statistics = CreateDBStatistics();
  UseManualSplitCompactions();
  Open();
  Random rnd(13);
  Model model;
  WriteRandom(&rnd, 12000, &model);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  fs_->SetErrorRate(FaultOp::kWrite, 40, ".sst");
  Status s = db_->CompactRange(CompactRangeOptions(), nullptr, nullptr);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  HistogramData parts;
  options_.statistics->histogramData(NUM_SUBCOMPACTIONS_SCHEDULED, &parts);
  EXPECT_GE(parts.max, 2);  // the failing compaction was split
  fs_->DisableAllFaults();
  ExpectContents(model);  // reads still work; nothing half-installed
  ASSERT_TRUE(db_->Resume().ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ExpectContents(model);
  Reopen();
  ExpectContents(model);
}

// Two background jobs deleting obsolete files at once (a finished compaction and a finished
// flush) list the same files; each file is deleted once, by the job that claimed it: the LOG
// reports no deletion that found its file gone.
TEST_F(DBCompactionConcurrentTest, ConcurrentPurgesDeleteEachFileOnce) {
  if (!test_hook::kEnabled) GTEST_SKIP() << "test hooks are compiled out";
  options_.disable_auto_compactions = true;
  options_.max_background_jobs = 2;
  Open();
  Model model;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 200; i++) {
      const std::string value = "v" + std::to_string(round);
      ASSERT_TRUE(Put(NumberedKey(i), value).ok());
      model[NumberedKey(i)] = value;
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  // The first purge to claim its files waits there until a second purge has claimed its own.
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool paired = false;  // the first purge saw the second arrive while it waited
  test_hook::Set("DBImpl::DeleteObsoleteFiles:Claimed", [&] {
    std::unique_lock<std::mutex> l(mu);
    if (++arrived == 1) {
      cv.notify_all();
      paired = cv.wait_for(l, std::chrono::seconds(10), [&] { return arrived >= 2; });
    } else {
      cv.notify_all();
    }
  });
  // The compaction's purge lists both flushed tables and waits.
  std::thread compaction(
      [&] { ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok()); });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return arrived >= 1; });
  }
  // The flush's purge lists them too (they are still there).
  ASSERT_TRUE(Put("after", "compaction").ok());
  model["after"] = "compaction";
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  compaction.join();
  test_hook::ClearAll();
  EXPECT_TRUE(paired);
  ExpectContents(model);
  Close();
  std::string log;
  ASSERT_TRUE(ReadFileToString(FileSystem::Default().get(), dbname_ + "/LOG", &log).ok());
  EXPECT_NE(log.find("table_file_deletion"), std::string::npos);
  EXPECT_EQ(log.find("NotFound"), std::string::npos) << log;
}

}  // namespace
}  // namespace shale::test
