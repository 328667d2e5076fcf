// Batched MultiGet: equal to a loop of Get over a many-level DB (snapshots, merges, deletions,
// duplicates, unsorted and sorted input) on the synchronous and the asynchronous path, with
// io_uring on real files (buffered and direct IO) and with the test file system's reader;
// per-key errors; the io_uring-unavailable fallback and require_io_uring.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/statistics.h"
#include "src/base/filename.h"
#include "src/util/random.h"
#include "tests/db_test_util.h"
#include "tests/fault_injection_fs.h"

namespace shale::test {
namespace {

std::string Key(uint64_t i) { return NumberedKey(i); }

class DBMultiGetTest : public DBTestBase {
 protected:
  DBMultiGetTest() {
    options_.write_buffer_size = 16 << 10;
    options_.target_file_size_base = 8 << 10;
    options_.max_bytes_for_level_base = 32 << 10;
    options_.level0_file_num_compaction_trigger = 2;
    options_.num_levels = 5;
    options_.block_size = 256;
    options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    options_.block_cache = NewLRUCache(64 << 10);  // small: most reads miss it
  }

  // "value" / "NOT_FOUND" / error text per key, by MultiGet.
  std::vector<std::string> Multi(const std::vector<std::string>& keys, const ReadOptions& ro,
                                 bool sorted_input = false) {
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<PinnableSlice> values(keys.size());
    std::vector<Status> statuses(keys.size());
    db_->MultiGet(ro, keys.size(), slices.data(), values.data(), statuses.data(), sorted_input);
    std::vector<std::string> out;
    for (size_t i = 0; i < keys.size(); i++) {
      if (statuses[i].ok()) {
        out.push_back(values[i].ToString());
      } else if (statuses[i].IsNotFound()) {
        EXPECT_TRUE(values[i].empty());
        out.push_back("NOT_FOUND");
      } else {
        out.push_back(statuses[i].ToString());
      }
    }
    return out;
  }
  std::vector<std::string> Loop(const std::vector<std::string>& keys, const ReadOptions& ro) {
    std::vector<std::string> out;
    for (const std::string& k : keys) {
      std::string v;
      Status s = db_->Get(ro, k, &v);
      out.push_back(s.ok() ? v : s.IsNotFound() ? "NOT_FOUND" : s.ToString());
    }
    return out;
  }

  // Random puts, deletes and merges over a key space, flushed and compacted into many levels.
  void Load(Random* rnd, int ops, uint64_t key_space) {
    for (int i = 0; i < ops; i++) {
      const std::string k = Key(rnd->Uniform(key_space));
      const uint32_t r = rnd->Uniform(10);
      if (r < 6) {
        Status s = Put(k, "v" + std::to_string(i) + std::string(rnd->Uniform(80), 'p'));
        ASSERT_TRUE(s.ok()) << s.ToString();
      } else if (r < 8) {
        ASSERT_TRUE(Merge(k, "m" + std::to_string(i)).ok());
      } else {
        ASSERT_TRUE(Delete(k).ok());
      }
    }
  }
  std::vector<std::string> RandomBatch(Random* rnd, uint64_t key_space, size_t n) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < n; i++) keys.push_back(Key(rnd->Uniform(key_space + key_space / 8)));
    if (n > 2) keys.push_back(keys[0]);  // a duplicate
    return keys;
  }
  std::string AsyncPath() {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("shale.io.async-path", &v));
    return v;
  }
};

TEST_F(DBMultiGetTest, EqualsLoopOfGetAcrossLevelsSnapshotsAndPaths) {
  for (bool direct : {false, true}) {
    options_.use_direct_reads = direct;
    Reopen();
    Random rnd(direct ? 11 : 7);
    const uint64_t space = 600;
    Load(&rnd, 3000, space);
    const Snapshot* snap = db_->GetSnapshot();
    Load(&rnd, 2000, space);
    ASSERT_TRUE(db_->WaitForCompact().ok());
    Load(&rnd, 300, space);  // some in the memtable too
    int levels_used = 0;
    for (int l = 0; l < options_.num_levels; l++) {
      std::string v;
      ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level" + std::to_string(l), &v));
      levels_used += v != "0";
    }
    EXPECT_GE(levels_used, 2);
    // io_uring where the machine allows it; otherwise the synchronous fallback, named.
    std::unique_ptr<AsyncReader> probe;
    if (FileSystem::Default()->NewAsyncReader(&probe).ok()) {
      EXPECT_EQ(AsyncPath(), "io_uring");
    } else {
      EXPECT_NE(AsyncPath().find("sync (asynchronous reads unavailable"), std::string::npos);
    }
    for (int round = 0; round < 60; round++) {
      std::vector<std::string> keys = RandomBatch(&rnd, space, 1 + rnd.Uniform(64));
      for (bool async : {false, true}) {
        for (const Snapshot* s : {static_cast<const Snapshot*>(nullptr), snap}) {
          ReadOptions ro;
          ro.async_io = async;
          ro.snapshot = s;
          ro.fill_cache = round % 3 != 0;
          EXPECT_EQ(Multi(keys, ro), Loop(keys, ro)) << "round " << round << " async " << async;
        }
      }
      std::vector<std::string> sorted = keys;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(Multi(sorted, ReadOptions(), true), Loop(sorted, ReadOptions()));
      // A false claim of sorted input is not trusted.
      EXPECT_EQ(Multi(keys, ReadOptions(), true), Loop(keys, ReadOptions()));
    }
    db_->ReleaseSnapshot(snap);
  }
}

TEST_F(DBMultiGetTest, EmptyBatchAndValuesArePinned) {
  Open();
  db_->MultiGet(ReadOptions(), 0, nullptr, nullptr, nullptr);
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("b", "2").ok());
  std::vector<Slice> keys = {"b", "a", "c"};
  std::vector<PinnableSlice> values(3);
  std::vector<Status> st(3);
  values[2].PinSelf("stale");  // reused output is reset first
  db_->MultiGet(ReadOptions(), 3, keys.data(), values.data(), st.data());
  ASSERT_TRUE(st[0].ok() && st[1].ok() && st[2].IsNotFound());
  EXPECT_EQ(values[0].ToString(), "2");
  EXPECT_EQ(values[1].ToString(), "1");
  EXPECT_TRUE(values[0].IsPinned());  // memtable
  EXPECT_TRUE(values[1].IsPinned());  // cached block
  EXPECT_TRUE(values[2].empty());
}

TEST_F(DBMultiGetTest, ConcurrentMultiGetsDuringFlushAndCompaction) {
  Open();
  const uint64_t space = 2000;
  // Every value names its key, so a reader can check any version it sees.
  auto value_of = [](const std::string& k, int gen) {
    return k + "@" + std::to_string(gen) + std::string(40, 'x');
  };
  for (uint64_t i = 0; i < space; i += 2) ASSERT_TRUE(Put(Key(i), value_of(Key(i), 0)).ok());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> checked{0};
  auto reader = [&](int id) {
    Random rnd(100 + id);
    while (!stop.load()) {
      std::vector<std::string> keys;
      for (int i = 0; i < 32; i++) keys.push_back(Key(rnd.Uniform(space) & ~uint64_t{1}));
      std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<PinnableSlice> values(keys.size());
      std::vector<Status> st(keys.size());
      ReadOptions ro;
      ro.async_io = id % 2 == 0;
      db_->MultiGet(ro, keys.size(), slices.data(), values.data(), st.data());
      for (size_t i = 0; i < keys.size(); i++) {
        ASSERT_TRUE(st[i].ok()) << keys[i] << ": " << st[i].ToString();
        ASSERT_EQ(values[i].ToString().substr(0, keys[i].size() + 1), keys[i] + "@");
      }
      checked += keys.size();
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; i++) readers.emplace_back(reader, i);
  for (int gen = 1; gen <= 6; gen++) {
    for (uint64_t i = 0; i < space; i += 2) ASSERT_TRUE(Put(Key(i), value_of(Key(i), gen)).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_GT(checked.load(), 0u);
}

class DBMultiGetFaultTest : public DBMultiGetTest {
 protected:
  DBMultiGetFaultTest() {
    fs_ = std::make_shared<FaultInjectionFileSystem>();
    dbname_ = "/db";
    EXPECT_TRUE(fs_->CreateDirIfMissing(dbname_).ok());
    options_.file_system = fs_;
    options_.disable_auto_compactions = true;
    options_.statistics = CreateDBStatistics();
  }
  // Two L0 files: "a..." keys in the first, "b..." keys in the second. Returns the first's path.
  std::string TwoFiles() {
    Open();
    if (db_ == nullptr) return "";
    for (int i = 0; i < 50; i++) EXPECT_TRUE(Put("a" + Key(i), "va" + std::to_string(i)).ok());
    EXPECT_TRUE(db_->Flush(FlushOptions()).ok());
    for (int i = 0; i < 50; i++) EXPECT_TRUE(Put("b" + Key(i), "vb" + std::to_string(i)).ok());
    EXPECT_TRUE(db_->Flush(FlushOptions()).ok());
    std::string first;
    for (const std::string& f : fs_->ListFiles()) {
      if (f.ends_with(".sst") && (first.empty() || f < first)) first = f;
    }
    Reopen();  // a cold block cache
    return first;
  }
  std::vector<std::string> Batch() {
    std::vector<std::string> keys;
    for (int i = 0; i < 50; i += 7) {
      keys.push_back("a" + Key(i));
      keys.push_back("b" + Key(i));
    }
    return keys;
  }
  std::shared_ptr<FaultInjectionFileSystem> fs_;
};

TEST_F(DBMultiGetFaultTest, ReadErrorOnOneFileFailsOnlyItsKeys) {
  for (bool async : {false, true}) {
    const std::string first = TwoFiles();
    EXPECT_EQ(AsyncPath(), "sync");  // the test file system answers asynchronous reads itself
    fs_->SetErrorRate(FaultOp::kRead, 1, first);

    ReadOptions ro;
    ro.async_io = async;
    std::vector<std::string> keys = Batch();
    std::vector<std::string> got = Multi(keys, ro);
    for (size_t i = 0; i < keys.size(); i++) {
      if (keys[i][0] == 'a') {
        EXPECT_NE(got[i].find("IO error"), std::string::npos) << got[i];
      } else {
        EXPECT_EQ(got[i], "vb" + std::to_string(std::stoi(keys[i].substr(4))));
      }
    }
    fs_->DisableAllFaults();
    EXPECT_EQ(Multi(keys, ro), Loop(keys, ro));
    if (async) {
      EXPECT_GT(options_.statistics->getTickerCount(ASYNC_READ_SUBMITTED), 0u);
    }
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

TEST_F(DBMultiGetFaultTest, CorruptBlockFailsOnlyItsKeys) {
  for (bool async : {false, true}) {
    const std::string first = TwoFiles();
    Close();
    // Damage the first data block of the first file (offset 10 is inside it).
    ASSERT_TRUE(fs_->CorruptFile(first, 10, 3));
    Open();
    ReadOptions ro;
    ro.async_io = async;
    std::vector<std::string> keys = Batch();
    std::vector<std::string> got = Multi(keys, ro);
    int corrupt = 0;
    for (size_t i = 0; i < keys.size(); i++) {
      if (keys[i][0] == 'b') {
        EXPECT_EQ(got[i], "vb" + std::to_string(std::stoi(keys[i].substr(4))));
      } else if (got[i].find("Corruption") != std::string::npos) {
        corrupt++;
      } else {
        // Keys in the file's other blocks still read correctly.
        EXPECT_EQ(got[i], "va" + std::to_string(std::stoi(keys[i].substr(4))));
      }
    }
    EXPECT_GE(corrupt, 1);
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

TEST_F(DBMultiGetFaultTest, FallsBackToSyncReadsWhenAsyncIsUnavailable) {
  fs_->SetAsyncReaderUnavailable(Status::IOError("io_uring_queue_init", "Operation not permitted"));
  TwoFiles();
  EXPECT_NE(AsyncPath().find("sync (asynchronous reads unavailable"), std::string::npos)
      << AsyncPath();
  EXPECT_NE(AsyncPath().find("Operation not permitted"), std::string::npos);
  std::vector<std::string> keys = Batch();
  ReadOptions ro;
  ro.async_io = true;
  const uint64_t fallbacks = options_.statistics->getTickerCount(ASYNC_READ_FALLBACK);
  EXPECT_EQ(Multi(keys, ro), Loop(keys, ro));
  EXPECT_GT(options_.statistics->getTickerCount(ASYNC_READ_FALLBACK), fallbacks);
  EXPECT_EQ(options_.statistics->getTickerCount(ASYNC_READ_SUBMITTED), 0u);
  Close();
  options_.require_io_uring = true;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
}

}  // namespace
}  // namespace shale::test
