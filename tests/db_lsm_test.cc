// The LSM behind the DB: flush to L0, compaction into deeper levels, reads across levels,
// snapshots through compaction, iterators and pinned values keeping files alive, properties,
// write stalls, MANIFEST damage, and a crash at every file-system operation of a
// flush-and-compaction workload.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
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

class DBLsmTest : public DBTestBase {
 protected:
  DBLsmTest() {
    options_.write_buffer_size = 32 << 10;
    options_.target_file_size_base = 16 << 10;
    options_.max_bytes_for_level_base = 64 << 10;
    options_.level0_file_num_compaction_trigger = 2;
    options_.num_levels = 4;
    options_.block_size = 512;
  }
  int FilesAt(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &v));
    return std::atoi(v.c_str());
  }
  // A family's property as a number (null: the default family).
  uint64_t NumericProperty(const char* name, ColumnFamilyHandle* cf = nullptr) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(cf != nullptr ? cf : db_->DefaultColumnFamily(), name, &v));
    return std::stoull(v);
  }
  uint64_t PoolBytes(ColumnFamilyHandle* cf = nullptr) {
    return NumericProperty("shale.memtable-block-pool-bytes", cf);
  }
  int TotalFiles() {
    int n = 0;
    for (int l = 0; l < options_.num_levels; l++) n += FilesAt(l);
    return n;
  }
  void Fill(int from, int to, const std::string& prefix) {
    for (int i = from; i < to; i++) {
      ASSERT_TRUE(Put(Key(i), prefix + std::to_string(i) + std::string(50, 'x')).ok());
    }
  }
  std::string Val(const std::string& prefix, int i) {
    return prefix + std::to_string(i) + std::string(50, 'x');
  }
  // Opens the DB on an in-memory file system, writes and flushes two L0 files (keys 0-19) and
  // leaves every sync slow, so that the compaction the second file may start is still running
  // when the test goes on. Returns the file system (the test sets the latency back to 0).
  std::shared_ptr<FaultInjectionFileSystem> OpenWithTwoL0FilesAndSlowSyncs(
      const std::string& prefix, std::chrono::milliseconds latency) {
    auto fs = FaultInjectionFileSystem::WithParentsOf(dbname_);
    options_.file_system = fs;
    Open();
    Fill(0, 10, prefix);
    EXPECT_TRUE(db_->Flush(FlushOptions()).ok());
    fs->SetSyncLatency(latency);
    Fill(10, 20, prefix);
    EXPECT_TRUE(db_->Flush(FlushOptions()).ok());
    return fs;
  }
};

// A memtable switched full leaves its blocks, once flushed, to the next memtable of its family,
// up to one write_buffer_size, and the next memtable takes them. A memtable switched before it
// was full (here by Flush) gives its memory back to the system, and so does the pool, until a
// memtable fills again.
TEST_F(DBLsmTest, FlushedMemtablesLeaveTheirBlocksToTheNext) {
  options_.disable_auto_compactions = true;
  Open();
  EXPECT_EQ(PoolBytes(), 0u);
  Fill(0, 2000, "a");  // several memtables switched full
  // On to the next switch, so that the active memtable is nearly empty (where the last one
  // filled depends on when flushes ran) and the next 100 writes switch none.
  int next = 2000;
  for (uint64_t entries = 0;; next++) {
    ASSERT_LT(next, 2400);
    ASSERT_TRUE(Put(Key(next), Val("a", next)).ok());
    const uint64_t now = NumericProperty("shale.num-entries-active-mem-table");
    if (now < entries) break;
    entries = now;
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  ASSERT_LT(NumericProperty("shale.cur-size-active-mem-table"), options_.write_buffer_size / 4);
  const uint64_t pooled = PoolBytes();
  EXPECT_GT(pooled, 0u);
  EXPECT_LE(pooled, options_.write_buffer_size);
  Fill(2400, 2500, "b");
  EXPECT_LT(PoolBytes(), pooled);  // the new memtable's blocks came from the pool
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(PoolBytes(), 0u);  // neither the pool nor the flushed memtable kept anything
  Fill(2500, 2550, "c");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(PoolBytes(), 0u);
  Fill(3000, 5000, "d");  // full again: retained again
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_GT(PoolBytes(), 0u);
  for (int i = 0; i < 5000; i += 7) {
    const char* prefix = i <= next  ? "a"
                         : i < 2400 ? ""
                         : i < 2500 ? "b"
                         : i < 2550 ? "c"
                         : i < 3000 ? ""
                                    : "d";
    EXPECT_EQ(Get(Key(i)), *prefix ? Val(prefix, i) : "NOT_FOUND") << i;
  }
}

// A family whose memtable was switched full while it took no write (another family's write found
// it full) holds an empty memtable and a full pool; a Flush of it gives the pool back.
TEST_F(DBLsmTest, FlushOfAnIdleFamilyGivesItsMemtableBlocksBack) {
  options_.disable_auto_compactions = true;
  Open();
  std::unique_ptr<ColumnFamilyHandle> idle;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(options_), "idle", &idle).ok());
  const std::string value(100, 'v');
  for (int i = 0;
       NumericProperty("shale.cur-size-active-mem-table", idle.get()) < options_.write_buffer_size;
       i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), idle.get(), Key(i), value).ok());
  }
  ASSERT_TRUE(Put("other", "x").ok());  // switches the idle family's full memtable
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(NumericProperty("shale.num-entries-active-mem-table", idle.get()), 0u);
  EXPECT_GT(PoolBytes(idle.get()), 0u);
  ASSERT_TRUE(db_->Flush(FlushOptions(), std::vector<ColumnFamilyHandle*>{idle.get()}).ok());
  EXPECT_EQ(PoolBytes(idle.get()), 0u);
  std::string got;
  ASSERT_TRUE(db_->Get(ReadOptions(), idle.get(), Key(0), &got).ok());
  EXPECT_EQ(got, value);
}

// Under atomic flush, a family written as much as another is switched with it just short of
// full, every time the other fills first: it keeps its pool all the same. A memtable replayed at
// open and flushed short of full leaves no pool behind.
TEST_F(DBLsmTest, AtomicFlushPartnersKeepTheirPoolsAndRecoveryLeavesNone) {
  options_.disable_auto_compactions = true;
  options_.atomic_flush = true;
  Open();
  std::unique_ptr<ColumnFamilyHandle> partner;
  ASSERT_TRUE(db_->CreateColumnFamily(ColumnFamilyOptions(options_), "partner", &partner).ok());
  const std::string value(100, 'v');
  for (int i = 0; i < 3000; i++) {  // the default family fills first, each time
    ASSERT_TRUE(Put(Key(i), value).ok());
    ASSERT_TRUE(db_->Put(WriteOptions(), partner.get(), Key(i), value).ok());
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_GT(PoolBytes(db_->DefaultColumnFamily()), 0u);
  EXPECT_GT(PoolBytes(partner.get()), 0u);
  // Unflushed writes in both families, replayed and flushed at the next open.
  ASSERT_TRUE(Put("tail", value).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), partner.get(), "tail", value).ok());
  partner.reset();
  Close();
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  ASSERT_TRUE(DB::Open(options_, dbname_,
                       {ColumnFamilyDescriptor(kDefaultColumnFamilyName, options_),
                        ColumnFamilyDescriptor("partner", options_)},
                       &handles, &db_)
                  .ok());
  EXPECT_GT(FilesAt(0), 0);  // the replayed memtables, flushed at open
  EXPECT_EQ(PoolBytes(handles[0].get()), 0u);
  EXPECT_EQ(PoolBytes(handles[1].get()), 0u);
  std::string got;
  ASSERT_TRUE(db_->Get(ReadOptions(), handles[1].get(), "tail", &got).ok());
  EXPECT_EQ(got, value);
}

// Compaction outputs above the last level run on past target_file_size_base, to at most twice
// it, to end at a boundary of the level below rather than inside one of its files; outputs of the
// last level stop at the target.
TEST_F(DBLsmTest, OutputsAboveTheLastLevelRunOnToAGrandparentBoundary) {
  options_.num_levels = 3;
  options_.max_bytes_for_level_base = 64 << 20;  // L1 stays put
  options_.write_buffer_size = 4 << 20;
  options_.compression = CompressionType::kNoCompression;
  Open();
  auto sst_bytes = [&] {
    uint64_t bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
      if (e.path().extension() == ".sst") bytes += e.file_size();
    }
    return bytes;
  };
  // L2: one file whose range spans every key written next, so L1 outputs meet no boundary.
  ASSERT_TRUE(Put(Key(0), "lo").ok());
  ASSERT_TRUE(Put(Key(1000000), "hi").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_EQ(FilesAt(2), 1) << FilesAt(0) << " " << FilesAt(1);
  // Static level sizes from here on: L0 compacts into L1, above the L2 file.
  options_.level_compaction_dynamic_level_bytes = false;
  Reopen();
  ASSERT_EQ(FilesAt(2), 1);
  const uint64_t l2_bytes = sst_bytes();
  // Two L0 files of the same keys (~230 KB, ~14 targets): the L0 -> L1 compaction merges them.
  for (int round = 0; round < 2; round++) {
    Fill(1, 3000, "a");
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  ASSERT_EQ(FilesAt(0), 0);
  ASSERT_EQ(FilesAt(2), 1);
  const uint64_t l1_bytes = sst_bytes() - l2_bytes;
  const uint64_t target = options_.target_file_size_base;
  EXPECT_GT(l1_bytes / FilesAt(1), target * 3 / 2) << FilesAt(1) << " files, " << l1_bytes;
  EXPECT_GE(FilesAt(1), static_cast<int>(l1_bytes / (2 * target + 4096))) << l1_bytes;
  // Into the last level: cut at the target.
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_EQ(FilesAt(1), 0);
  EXPECT_GE(FilesAt(2), static_cast<int>(sst_bytes() / (target + 4096))) << sst_bytes();
  for (int i = 1; i < 3000; i += 11) EXPECT_EQ(Get(Key(i)), Val("a", i));
  EXPECT_EQ(Get(Key(1000000)), "hi");
}

TEST_F(DBLsmTest, FlushWritesL0AndReadsComeFromTables) {
  Open();
  Fill(0, 100, "a");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(FilesAt(0), 1);
  std::string mem;
  ASSERT_TRUE(db_->GetProperty("shale.num-entries-active-mem-table", &mem));
  EXPECT_EQ(mem, "0");
  for (int i = 0; i < 100; i++) ASSERT_EQ(Get(Key(i)), Val("a", i));
  EXPECT_EQ(Get("missing"), "NOT_FOUND");
  // Newer data in the memtable shadows the table; deletions too.
  ASSERT_TRUE(Put(Key(5), "new").ok());
  ASSERT_TRUE(Delete(Key(6)).ok());
  EXPECT_EQ(Get(Key(5)), "new");
  EXPECT_EQ(Get(Key(6)), "NOT_FOUND");
  Reopen();
  EXPECT_EQ(Get(Key(5)), "new");
  EXPECT_EQ(Get(Key(6)), "NOT_FOUND");
  EXPECT_EQ(Get(Key(7)), Val("a", 7));
  // Reopen flushed the replayed log: no old logs linger.
  int logs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
    logs += e.path().extension() == ".log" ? 1 : 0;
  }
  EXPECT_EQ(logs, 1);
}

TEST_F(DBLsmTest, GetFollowsPathsLongerThanOneWindowOfTables) {
  // A point read takes its files in windows of 8 (filters of open readers probed together):
  // 21 L0 files and a deeper level, with the answers in the newest file, past the first
  // window, in the last file on the path, and behind a deletion; with every reader open and
  // with a table cache too small to hold them (readers opened when their turn comes).
  for (int max_open : {-1, 3}) {
    SCOPED_TRACE(max_open);
    options_.disable_auto_compactions = true;
    options_.max_open_files = max_open;
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    Open();
    ASSERT_TRUE(Put("deep", "l2").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    ASSERT_TRUE(Put("deep2", "l1").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    for (int f = 0; f < 20; f++) {
      ASSERT_TRUE(Put(Key(f), Val("f", f)).ok());
      ASSERT_TRUE(Put("shared", Val("s", f)).ok());
      ASSERT_TRUE(Put("a", "").ok());  // every file's range holds every key read below
      if (f == 15) {
        ASSERT_TRUE(Delete(Key(2)).ok());
      }
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    }
    EXPECT_EQ(FilesAt(0), 21);
    for (int round = 0; round < 2; round++) {
      EXPECT_EQ(Get("shared"), Val("s", 19));
      for (int f = 0; f < 20; f++) {
        EXPECT_EQ(Get(Key(f)), f == 2 ? "NOT_FOUND" : Val("f", f));
      }
      EXPECT_EQ(Get("deep"), "l2");
      EXPECT_EQ(Get("deep2"), "l1");
      EXPECT_EQ(Get("missing"), "NOT_FOUND");
      Reopen();
    }
  }
}

TEST_F(DBLsmTest, CompactionBuildsLevelsAndKeepsEverything) {
  options_.statistics = CreateDBStatistics();
  Open();
  Random rnd(3);
  std::map<std::string, std::string> model;
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < 300; i++) {
      const int k = static_cast<int>(rnd.Uniform(3000));
      std::string v = "r" + std::to_string(round) + "." + std::to_string(i) + std::string(30, 'v');
      if (rnd.OneIn(10)) {
        ASSERT_TRUE(Delete(Key(k)).ok());
        model.erase(Key(k));
      } else {
        ASSERT_TRUE(Put(Key(k), v).ok());
        model[Key(k)] = v;
      }
    }
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_LT(FilesAt(0), options_.level0_file_num_compaction_trigger);
  EXPECT_GT(FilesAt(1) + FilesAt(2) + FilesAt(3), 0);
  // Every compaction deleted the inputs it replaced: no table outside the Version is left.
  int tables_on_disk = 0;
  for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
    tables_on_disk += e.path().extension() == ".sst" ? 1 : 0;
  }
  EXPECT_EQ(tables_on_disk, TotalFiles());
  for (const auto& [k, v] : model) ASSERT_EQ(Get(k), v) << k;
  std::string expect;
  for (const auto& [k, v] : model) expect += (expect.empty() ? "" : " ") + k + "=" + v;
  EXPECT_EQ(Contents(), expect);
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("shale.stats", &stats));
  EXPECT_NE(stats.find("Compactions: "), std::string::npos) << stats;
  {
    // The per-level rows add up to the totals: compactions + moves, and bytes written.
    std::istringstream in(stats);
    std::string line;
    uint64_t jobs = 0, total_jobs = 0;
    double written = 0, total_written = -1;
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string level;
      uint64_t files, comp, moves;
      double size, score, rn, rnp1, write, moved;
      if (line.starts_with("  L") && (row >> level >> files >> size >> score >> comp >> moves >>
                                      rn >> rnp1 >> write >> moved)) {
        jobs += comp + moves;
        written += write;
      }
      if (line.starts_with("Compactions: ")) {
        std::sscanf(line.c_str(), "Compactions: %" SCNu64 " (read %*f MB, wrote %lf MB)",
                    &total_jobs, &total_written);
      }
    }
    EXPECT_GT(total_jobs, 0u) << stats;
    EXPECT_EQ(jobs, total_jobs) << stats;
    EXPECT_NEAR(written, total_written, 0.1 * options_.num_levels) << stats;
  }
  EXPECT_GT(options_.statistics->getTickerCount(COMPACT_WRITE_BYTES), 0u) << stats;
  EXPECT_GT(options_.statistics->getTickerCount(NUMBER_FLUSHES), 0u);
  std::string keys;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-num-keys", &keys));
  EXPECT_GE(std::stoull(keys), model.size());
  Reopen();
  for (const auto& [k, v] : model) ASSERT_EQ(Get(k), v) << k;
}

// Dynamic level sizing: a new DB's data goes from L0 straight to the last level, and the levels
// above fill only as the last one grows. A DB sized statically before drains its upper levels
// down once reopened with dynamic sizing. Every key reads back throughout.
TEST_F(DBLsmTest, DynamicLevelSizesFillFromTheBottomAndDrainOldLevels) {
  Random rnd(5);
  std::map<std::string, std::string> model;
  auto write = [&](int n) {
    for (int i = 0; i < n; i++) {
      const std::string k = Key(rnd.Uniform(20000));
      model[k] = k + std::string(60, 'd');
      ASSERT_TRUE(Put(k, model[k]).ok());
    }
    ASSERT_TRUE(db_->WaitForCompact().ok());
  };
  auto check = [&] {
    for (const auto& [k, v] : model) ASSERT_EQ(Get(k), v) << k;
  };
  options_.level_compaction_dynamic_level_bytes = true;
  Open();
  // Two L0 files of ~18 KB go straight to the last level (nothing lies below L0).
  for (int file = 0; file < 2; file++) {
    write(200);
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(FilesAt(0), 0);
  EXPECT_EQ(FilesAt(1), 0);
  EXPECT_EQ(FilesAt(2), 0);
  EXPECT_GT(FilesAt(3), 0);
  // Once the last level passes max_bytes_for_level_base (64 KB), L2 becomes the base level:
  // L0 compacts into it, and it stays under its target.
  write(1500);  // ~150 KB in all
  for (int file = 0; file < 2; file++) {
    write(100);
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(FilesAt(1), 0);
  EXPECT_GT(FilesAt(2), 0);
  EXPECT_GT(FilesAt(3), FilesAt(2));
  check();
  Close();
  ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  model.clear();

  options_.level_compaction_dynamic_level_bytes = false;
  Open();
  write(8000);  // ~700 KB: L1 (64 KB) and L2 (640 KB) hold data
  ASSERT_GT(FilesAt(1), 0);
  check();
  Close();
  options_.level_compaction_dynamic_level_bytes = true;
  Open();
  ASSERT_TRUE(db_->WaitForCompact().ok());
  // ~700 KB at the bottom: L2's share is ~70 KB (the base level), L1's would be ~7 KB, under
  // 64 KB / 10: L1 is unnecessary and drains.
  EXPECT_EQ(FilesAt(1), 0);
  EXPECT_GT(FilesAt(3), FilesAt(2));
  check();
  write(2000);  // past ~640 KB at the bottom, L1 becomes the base level again
  check();
  Reopen();
  check();
}

// A flush writes only what some reader can see: the newest version of a key, the versions
// snapshots read, and deletions (older data may lie below). Keys with merge operands keep all
// their entries (compactions merge them).
TEST_F(DBLsmTest, FlushDropsHiddenVersionsButSnapshotsKeepTheirs) {
  options_.disable_auto_compactions = true;
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  for (int i = 0; i < 100; i++) ASSERT_TRUE(Put("k1", "v" + std::to_string(i)).ok());
  ASSERT_TRUE(Put("k2", "a").ok());
  const Snapshot* snapshot = db_->GetSnapshot();
  ASSERT_TRUE(Put("k2", "b").ok());
  ASSERT_TRUE(Put("k2", "c").ok());
  ASSERT_TRUE(Put("k3", "x").ok());
  ASSERT_TRUE(Delete("k3").ok());
  ASSERT_TRUE(Put("k4", "base").ok());
  ASSERT_TRUE(Merge("k4", "m1").ok());
  ASSERT_TRUE(Merge("k4", "m2").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  std::string entries;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-num-keys", &entries));
  EXPECT_EQ(entries, "7");  // k1 v99; k2 c and a; k3's deletion; k4 base, m1, m2
  auto check = [&](const Snapshot* s) {
    EXPECT_EQ(Get("k1"), "v99");
    EXPECT_EQ(Get("k2"), "c");
    if (s != nullptr) {
      EXPECT_EQ(Get("k2", s), "a");
    }
    EXPECT_EQ(Get("k3"), "NOT_FOUND");
    EXPECT_EQ(Get("k4"), "base,m1,m2");
  };
  check(snapshot);
  db_->ReleaseSnapshot(snapshot);
  Reopen();
  check(nullptr);
}

TEST_F(DBLsmTest, CompactRangeDropsHiddenVersionsButSnapshotsKeepTheirs) {
  options_.disable_auto_compactions = true;
  options_.level_compaction_dynamic_level_bytes = false;  // the data ends in L1
  Open();
  Fill(0, 200, "old");
  const Snapshot* snap = db_->GetSnapshot();
  Fill(0, 200, "new");
  for (int i = 0; i < 200; i += 2) ASSERT_TRUE(Delete(Key(i)).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(FilesAt(0), 0);
  for (int i = 0; i < 200; i++) {
    ASSERT_EQ(Get(Key(i)), i % 2 == 0 ? "NOT_FOUND" : Val("new", i));
    ASSERT_EQ(Get(Key(i), snap), Val("old", i));
  }
  db_->ReleaseSnapshot(snap);
  // Everything is in the bottom level now: by default a second CompactRange leaves it there as
  // it is; with kForce it rewrites it in place, dropping the old versions and the tombstones.
  std::string before;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-num-keys", &before));
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  std::string unchanged;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-num-keys", &unchanged));
  EXPECT_EQ(unchanged, before);
  CompactRangeOptions force;
  force.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(force, nullptr, nullptr).ok());
  std::string after;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-num-keys", &after));
  EXPECT_EQ(std::stoull(after), 100u) << "before: " << before;
  for (int i = 1; i < 200; i += 2) ASSERT_EQ(Get(Key(i)), Val("new", i));
  for (int l = 2; l < options_.num_levels; l++) EXPECT_EQ(FilesAt(l), 0) << l;
}

// Static level sizes: CompactRange compacts down to the deepest level holding data and no
// further; bottommost_level_compaction decides whether that level's files are rewritten in
// place: kSkip (and the default) only those the compaction from above overlaps,
// kForceOptimized also the others but not the ones just written, kForce all of them again.
TEST_F(DBLsmTest, BottommostLevelCompactionRewritesTheLastLevelAsAsked) {
  auto bytes_written = [&](BottommostLevelCompaction bottommost, int* files) {
    Close();
    EXPECT_TRUE(DestroyDB(dbname_, options_).ok());
    options_.disable_auto_compactions = true;
    options_.level_compaction_dynamic_level_bytes = false;
    options_.statistics = CreateDBStatistics();
    Open();
    Fill(0, 900, "a");
    EXPECT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    EXPECT_EQ(FilesAt(0), 0);
    EXPECT_GE(FilesAt(1), 4);
    Fill(440, 450, "b");  // into a middle L1 file: old files on both sides of it
    const uint64_t before = options_.statistics->getTickerCount(COMPACT_WRITE_BYTES);
    CompactRangeOptions o;
    o.bottommost_level_compaction = bottommost;
    EXPECT_TRUE(db_->CompactRange(o, nullptr, nullptr).ok());
    for (int i = 0; i < 900; i++) {
      EXPECT_EQ(Get(Key(i)), Val(i >= 440 && i < 450 ? "b" : "a", i)) << i;
    }
    // L0 went into L1, and L1 stays the last level.
    EXPECT_EQ(FilesAt(0), 0);
    EXPECT_GT(FilesAt(1), 0);
    for (int l = 2; l < options_.num_levels; l++) EXPECT_EQ(FilesAt(l), 0) << l;
    *files = FilesAt(1);
    return options_.statistics->getTickerCount(COMPACT_WRITE_BYTES) - before;
  };
  int skip_files = 0, files = 0;
  const uint64_t skip = bytes_written(BottommostLevelCompaction::kSkip, &skip_files);
  EXPECT_EQ(bytes_written(BottommostLevelCompaction::kIfHaveCompactionFilter, &files), skip);
  EXPECT_EQ(files, skip_files);
  const uint64_t optimized = bytes_written(BottommostLevelCompaction::kForceOptimized, &files);
  const uint64_t force = bytes_written(BottommostLevelCompaction::kForce, &files);
  // kSkip rewrites the L1 files with the new writes; kForceOptimized all of L1 once (the old
  // files before, between and after the new ones, in runs); kForce those new ones twice.
  EXPECT_GT(skip, 0u);
  EXPECT_GT(optimized, skip);
  EXPECT_GT(force, optimized);
}

TEST_F(DBLsmTest, MergeOperandsAcrossLevels) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  options_.disable_auto_compactions = true;
  Open();
  ASSERT_TRUE(Put("m", "base").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_TRUE(Merge("m", "a").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Merge("m", "b").ok());
  EXPECT_EQ(Get("m"), "base,a,b");  // memtable operand, L0 operand, base in L1
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(Get("m"), "base,a,b");
  ASSERT_TRUE(Delete("m").ok());
  ASSERT_TRUE(Merge("m", "c").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Get("m"), "c");
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(Get("m"), "c");
  EXPECT_EQ(Contents(), "m=c");
}

TEST_F(DBLsmTest, IteratorsAndPinnedValuesKeepCompactedFilesAlive) {
  options_.disable_auto_compactions = true;
  options_.block_cache = NewLRUCache(1 << 20);
  Open();
  Fill(0, 300, "a");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  PinnableSlice pinned;
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(10), &pinned).ok());
  EXPECT_TRUE(pinned.IsPinned());
  Fill(0, 300, "b");
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  options_.block_cache->EraseUnRefEntries();
  // The old file is gone from the Version but the iterator still reads it.
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    ASSERT_EQ(it->value().ToString(), Val("a", n));
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(n, 300);
  EXPECT_EQ(pinned.ToString(), Val("a", 10));
  it.reset();
  pinned.Reset();
  EXPECT_EQ(Get(Key(10)), Val("b", 10));
}

TEST_F(DBLsmTest, CorruptManifestFailsOpen) {
  Open();
  Fill(0, 100, "a");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  Close();
  std::string current;
  {
    std::ifstream in(dbname_ + "/CURRENT");
    std::getline(in, current);
  }
  const std::string manifest = dbname_ + "/" + current;
  std::string data;
  {
    std::ifstream in(manifest, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(data.size(), 20u);
  data[12] ^= 0x40;
  {
    std::ofstream out(manifest, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // A missing table file is named.
  data[12] ^= 0x40;
  {
    std::ofstream out(manifest, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
    if (e.path().extension() == ".sst") std::filesystem::remove(e.path());
  }
  s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("missing"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(".sst listed in the MANIFEST"), std::string::npos) << s.ToString();
}

// Reopening with fewer levels than the data uses is the options' fault: InvalidArgument naming
// num_levels (not Corruption), and the DB opens again with enough levels.
TEST_F(DBLsmTest, TooFewLevelsForTheDataIsInvalidArgument) {
  options_.disable_auto_compactions = true;
  options_.level_compaction_dynamic_level_bytes = true;  // CompactRange goes to the last level
  Open();
  Fill(0, 100, "v");
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_GT(FilesAt(3), 0);
  Close();
  options_.num_levels = 3;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("num_levels"), std::string::npos) << s.ToString();
  options_.num_levels = 4;
  Open();
  EXPECT_EQ(Get(Key(7)), Val("v", 7));
}

TEST_F(DBLsmTest, CompactRangeWithBeginAfterEndIsInvalidArgument) {
  Open();
  Fill(0, 10, "v");
  const Slice begin("k5"), end("k1");
  EXPECT_TRUE(db_->CompactRange(CompactRangeOptions(), &begin, &end).IsInvalidArgument());
  EXPECT_TRUE(db_->CompactRange(CompactRangeOptions(), &end, &begin).ok());
  EXPECT_TRUE(db_->CompactRange(CompactRangeOptions(), &begin, &begin).ok());
}

TEST_F(DBLsmTest, WriteStallsAreCountedAndReported) {
  // In memory, where every sync can be made slow: the compaction that the second L0 file
  // starts is still running while the last writes find L0 at the slowdown trigger.
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 100;
  options_.statistics = CreateDBStatistics();
  auto fs = OpenWithTwoL0FilesAndSlowSyncs("s", std::chrono::milliseconds(300));
  Fill(100, 110, "s");
  fs->SetSyncLatency(std::chrono::microseconds(0));
  std::string stall;
  ASSERT_TRUE(db_->GetProperty("shale.write-stall", &stall));
  EXPECT_NE(stall.find("level0-slowdown: "), std::string::npos);
  EXPECT_EQ(stall.find("level0-slowdown: 0;"), std::string::npos) << stall;
  EXPECT_GT(options_.statistics->getTickerCount(STALL_MICROS), 0u);
  // Once compaction has caught up, the next write finds no stall and says so.
  ASSERT_TRUE(db_->WaitForCompact().ok());
  ASSERT_TRUE(Put(Key(200), "later").ok());
  ASSERT_TRUE(db_->GetProperty("shale.write-stall", &stall));
  EXPECT_EQ(stall.rfind("reason: none;", 0), 0u) << stall;
}

// At hard_pending_compaction_bytes_limit writes wait for compaction: with a limit of 1 byte, L0
// at its trigger is enough, and the write after the flush that brings it there is admitted only
// once the (slow) compaction has emptied L0.
TEST_F(DBLsmTest, HardPendingCompactionBytesLimitStopsWritesUntilCompactionCatchesUp) {
  options_.level0_file_num_compaction_trigger = 2;
  options_.soft_pending_compaction_bytes_limit = 0;
  options_.hard_pending_compaction_bytes_limit = 1;
  auto fs = OpenWithTwoL0FilesAndSlowSyncs("h", std::chrono::milliseconds(200));
  std::string pending;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-pending-compaction-bytes", &pending));
  EXPECT_GT(std::stoull(pending), 0u);
  ASSERT_TRUE(Put(Key(100), "after").ok());
  EXPECT_EQ(FilesAt(0), 0);
  fs->SetSyncLatency(std::chrono::microseconds(0));
  std::string stall;
  ASSERT_TRUE(db_->GetProperty("shale.write-stall", &stall));
  EXPECT_EQ(stall.find("pending-compaction-bytes-stop: 0"), std::string::npos) << stall;
  ASSERT_TRUE(db_->GetProperty("shale.estimate-pending-compaction-bytes", &pending));
  EXPECT_EQ(pending, "0");
  for (int i = 0; i < 20; i++) EXPECT_EQ(Get(Key(i)), Val("h", i));
  EXPECT_EQ(Get(Key(100)), "after");
}

// At soft_pending_compaction_bytes_limit writes are slowed down (a slowdown starts with a sleep),
// not stopped.
TEST_F(DBLsmTest, SoftPendingCompactionBytesLimitSlowsWritesDown) {
  options_.level0_file_num_compaction_trigger = 2;
  options_.soft_pending_compaction_bytes_limit = 1;
  options_.hard_pending_compaction_bytes_limit = 0;
  options_.statistics = CreateDBStatistics();
  auto fs = OpenWithTwoL0FilesAndSlowSyncs("s", std::chrono::milliseconds(300));
  Fill(100, 110, "s");
  std::string stall;
  ASSERT_TRUE(db_->GetProperty("shale.write-stall", &stall));
  fs->SetSyncLatency(std::chrono::microseconds(0));
  EXPECT_EQ(stall.find("pending-compaction-bytes-slowdown: 0"), std::string::npos) << stall;
  EXPECT_NE(stall.find("pending-compaction-bytes-stop: 0"), std::string::npos) << stall;
  EXPECT_GT(options_.statistics->getTickerCount(STALL_MICROS), 0u);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  for (int i = 100; i < 110; i++) EXPECT_EQ(Get(Key(i)), Val("s", i));
}

// Flush without waiting switches memtables only while max_write_buffer_number allows: with
// slow flushes, a loop of Put and Flush(wait = false) waits for room instead of piling up
// immutable memtables.
TEST_F(DBLsmTest, FlushWithoutWaitingKeepsTheMemtableBound) {
  auto fs = FaultInjectionFileSystem::WithParentsOf(dbname_);
  options_.file_system = fs;
  options_.max_write_buffer_number = 3;
  options_.disable_auto_compactions = true;
  Open();
  fs->SetSyncLatency(std::chrono::milliseconds(20));
  FlushOptions no_wait;
  no_wait.wait = false;
  size_t most = 0;
  for (int i = 0; i < 12; i++) {
    ASSERT_TRUE(Put(Key(i), Val("f", i)).ok());
    ASSERT_TRUE(db_->Flush(no_wait).ok());
    std::string n;
    ASSERT_TRUE(db_->GetProperty("shale.num-immutable-mem-table", &n));
    most = std::max(most, static_cast<size_t>(std::stoul(n)));
  }
  EXPECT_LE(most, 2u);
  fs->SetSyncLatency(std::chrono::microseconds(0));
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  for (int i = 0; i < 12; i++) EXPECT_EQ(Get(Key(i)), Val("f", i));
}

// With automatic compactions off nothing brings L0 down, so its slowdown and stop triggers do
// not apply: a bulk load past the stop trigger neither hangs (it did: the writer waited for a
// compaction that never came, and CompactRange queued behind it) nor crawls, and CompactRange
// afterwards brings L0 down.
TEST_F(DBLsmTest, L0TriggersDoNotStallWritesWhenAutoCompactionsAreOff) {
  options_.disable_auto_compactions = true;
  options_.level0_file_num_compaction_trigger = 1;
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 3;
  options_.soft_pending_compaction_bytes_limit = 1;
  options_.hard_pending_compaction_bytes_limit = 1;
  Open();
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 1200 && !finished.load(); i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!finished.load()) {
      std::fprintf(stderr, "writes are stalled for good: L0 = %d\n", FilesAt(0));
      std::abort();
    }
  });
  for (int f = 0; f < 6; f++) {
    Fill(f * 10, f * 10 + 10, "b");
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  Fill(100, 110, "b");
  EXPECT_EQ(FilesAt(0), 6);
  std::string stall;
  ASSERT_TRUE(db_->GetProperty("shale.write-stall", &stall));
  EXPECT_NE(stall.find("level0-slowdown: 0; level0-stop: 0;"), std::string::npos) << stall;
  EXPECT_NE(stall.find("pending-compaction-bytes-slowdown: 0; pending-compaction-bytes-stop: 0"),
            std::string::npos)
      << stall;
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(FilesAt(0), 0);
  for (int i = 0; i < 60; i++) EXPECT_EQ(Get(Key(i)), Val("b", i));
  finished.store(true);
  watchdog.join();
}

// Readers run while writers force flushes and compactions: every read sees a value some
// writer wrote for that key (or nothing before the first write), never garbage, and scans stay
// sorted. Run under ThreadSanitizer in CI.
TEST_F(DBLsmTest, ConcurrentReadsDuringFlushAndCompaction) {
  options_.write_buffer_size = 16 << 10;
  Open();
  constexpr int kKeys = 2000;
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; w++) {
    threads.emplace_back([&, w] {
      Random rnd(w + 1);
      for (int i = 0; i < 6000; i++) {
        const int k = static_cast<int>(rnd.Uniform(kKeys));
        if (!db_->Put(WriteOptions(), Key(k), "v" + Key(k) + "-" + std::to_string(i)).ok()) bad++;
      }
    });
  }
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([&, r] {
      Random rnd(100 + r);
      while (!stop.load()) {
        const int k = static_cast<int>(rnd.Uniform(kKeys));
        PinnableSlice v;
        Status s = db_->Get(ReadOptions(), Key(k), &v);
        if (s.ok()) {
          if (!v.ToStringView().starts_with("v" + Key(k) + "-")) bad++;
        } else if (!s.IsNotFound()) {
          bad++;
        }
        if (rnd.OneIn(50)) {
          std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
          std::string prev;
          int steps = 0;
          for (it->Seek(Key(k)); it->Valid() && steps < 100; it->Next(), steps++) {
            if (!prev.empty() && it->key().ToString() <= prev) bad++;
            if (!it->value().ToStringView().starts_with("v" + it->key().ToString() + "-")) bad++;
            prev = it->key().ToString();
          }
          if (!it->status().ok()) bad++;
        }
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop.store(true);
  threads[2].join();
  threads[3].join();
  EXPECT_EQ(bad.load(), 0);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_GT(TotalFiles(), 0);
}

// A simulated power loss at every file-system operation of a workload that writes, flushes,
// compacts and rolls the MANIFEST over, in every crash mode: the DB always reopens, every
// synced write is there, and what survived of the unsynced ones is a prefix with no hole.
struct PowerLossCase {
  CrashMode mode;
  bool revert_directories;
  // 0: puts with every 25th synced; 1: also deletes, bigger values, every 9th synced, parallel
  // compactions, subcompactions, dynamic level sizes and a CompactRange; 2: as 1, each write a
  // batch whose every 7th also deletes a range of earlier keys (RangeModel)
  int workload;
};

class DBPowerLossTest : public ::testing::TestWithParam<PowerLossCase> {
 protected:
  // Workload 2's write i deletes [Key(i - 10), Key(i - 5)) too when this holds.
  static bool DeletesRange(int i) { return i >= 10 && i % 7 == 6; }
  // Whether Key(k) has a value after workload 2's first n writes.
  static bool LiveAfter(int k, int n) {
    if (k >= n) return false;
    for (int i = k + 5; i < n; i++) {
      if (DeletesRange(i) && k >= i - 10 && k < i - 5) return false;
    }
    return true;
  }
  static std::string ValueFor(int workload, int i) {
    return std::string(workload == 0 ? 60 : 150 + (i * 53) % 700, static_cast<char>('a' + i % 26));
  }
  // Runs the workload on fs, failing operation crash_at (0: none), then crashes. *synced_upto:
  // the writes [0, n) acknowledged by a synced write; *written: all acknowledged writes.
  static void Run(const PowerLossCase& c, uint64_t crash_at,
                  const std::shared_ptr<FaultInjectionFileSystem>& fs, int* synced_upto,
                  int* written) {
    Options o;
    o.create_if_missing = true;
    o.file_system = fs;
    o.write_buffer_size = 4 << 10;
    o.target_file_size_base = 4 << 10;
    o.max_bytes_for_level_base = 16 << 10;
    o.level0_file_num_compaction_trigger = 2;
    o.num_levels = 3;
    o.max_background_jobs = 1;
    o.max_manifest_file_size = 2 << 10;  // several MANIFEST rollovers per run
    if (c.workload >= 1) {  // compactions in parallel, L0's split in two, levels from the bottom
      o.max_background_compactions = 2;
      o.max_subcompactions = 2;
      o.level_compaction_dynamic_level_bytes = true;
    }
    std::unique_ptr<DB> db;
    if (!DB::Open(o, "/db", &db).ok()) return;
    fs->FailOperationNumber(crash_at);
    const int sync_every = c.workload == 0 ? 25 : 9;
    for (int i = 0; i < 300; i++) {
      WriteOptions wo;
      wo.sync = i % sync_every == sync_every - 1;
      // Workload 1 also writes a deletion (of a key outside the checked range) every 5th
      // write, so tombstones go through flush and compaction too.
      Status st;
      if (c.workload == 2) {
        WriteBatch batch;
        st = batch.Put(Key(i), ValueFor(c.workload, i));
        if (st.ok() && DeletesRange(i)) st = batch.DeleteRange(Key(i - 10), Key(i - 5));
        if (st.ok()) st = db->Write(wo, &batch);
      } else {
        st = db->Put(wo, Key(i), ValueFor(c.workload, i));
      }
      if (st.ok() && c.workload >= 1 && i % 5 == 4) st = db->Delete(wo, Key(1000 + i));
      // Workload 1 also compacts everything into the last level halfway, rewriting it.
      if (st.ok() && c.workload >= 1 && i == 150) {
        CompactRangeOptions co;
        co.bottommost_level_compaction = BottommostLevelCompaction::kForceOptimized;
        st = db->CompactRange(co, nullptr, nullptr);
      }
      if (!st.ok()) break;
      *written = i + 1;
      if (wo.sync) *synced_upto = i + 1;
    }
    db->WaitForCompact().PermitUncheckedError();
    fs->Crash(c.mode, c.revert_directories);
    db.reset();
  }
};

std::string PowerLossName(const ::testing::TestParamInfo<PowerLossCase>& info) {
  const char* mode[] = {"DropUnsynced", "TornPrefix", "RandomBlocks"};
  return std::string(mode[static_cast<int>(info.param.mode)]) +
         (info.param.revert_directories ? "RevertDirs" : "") + "Workload" +
         std::to_string(info.param.workload);
}

TEST_P(DBPowerLossTest, CrashAtEveryOperationOfWritesFlushCompactionAndManifestRollover) {
  const PowerLossCase c = GetParam();
  uint64_t total_ops = 0;
  {
    auto fs = std::make_shared<FaultInjectionFileSystem>(1);
    EXPECT_TRUE(fs->CreateDirIfMissing("/db").ok());
    int s = 0, w = 0;
    const uint64_t before = fs->operation_count();
    Run(c, 0, fs, &s, &w);
    total_ops = fs->operation_count() - before;
    // The workload did roll the MANIFEST over.
    int manifests = 0;
    for (const std::string& f : fs->ListFiles())
      manifests += f.find("MANIFEST-") != std::string::npos;
    EXPECT_GE(manifests, 1);
  }
  ASSERT_GT(total_ops, 100u);
  // Flush and compaction run on threads of their own, so the operation numbered k need not be
  // the same one in every run: the crash points are spread over the runs, not replayed exactly.
  // About 20 evenly spread operation indexes per case by default (CI: 10 cases), or
  // SHALE_CRASH_POINTS of them; SHALE_CRASH_STRIDE=1 tries every one (the long run: every case,
  // > 100,000 crash points).
  const char* stride_env = std::getenv("SHALE_CRASH_STRIDE");
  const char* points_env = std::getenv("SHALE_CRASH_POINTS");
  const uint64_t points_wanted =
      points_env != nullptr ? std::max<uint64_t>(1, std::strtoull(points_env, nullptr, 10)) : 20;
  const uint64_t stride = stride_env != nullptr
                              ? std::max<uint64_t>(1, std::strtoull(stride_env, nullptr, 10))
                              : std::max<uint64_t>(1, total_ops / points_wanted);
  uint64_t points = 0, synced_writes_checked = 0, unsynced_lost = 0;
  for (uint64_t k = 1; k <= total_ops; k += stride) {
    SCOPED_TRACE("crash at operation " + std::to_string(k));
    auto fs = std::make_shared<FaultInjectionFileSystem>(k);
    ASSERT_TRUE(fs->CreateDirIfMissing("/db").ok());
    int synced_upto = 0, written = 0;
    Run(c, fs->operation_count() + k, fs, &synced_upto, &written);
    points++;
    fs->DisableAllFaults();
    Options o;
    o.file_system = fs;
    o.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, "/db", &db);
    if (synced_upto == 0 && !s.ok()) continue;  // failed before anything durable existed
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (c.workload == 2) {
      // The writes kept are the first n for some n: the last kept one's key is never deleted by
      // them, and every key then reads as after those n. The write in flight at the crash (not
      // acknowledged, so not in written) may be kept too.
      const int limit = written + 1;
      int n = 0;
      for (int i = 0; i < limit; i++) {
        PinnableSlice v;
        if (db->Get(ReadOptions(), Key(i), &v).ok()) n = i + 1;
      }
      EXPECT_GE(n, synced_upto) << "synced writes lost";
      for (int k = 0; k < limit; k++) {
        PinnableSlice v;
        const Status g = db->Get(ReadOptions(), Key(k), &v);
        ASSERT_EQ(g.ok(), LiveAfter(k, n)) << "key " << k << " after " << n << " writes";
        if (g.ok()) {
          ASSERT_EQ(v.ToString(), ValueFor(c.workload, k));
        }
      }
      synced_writes_checked += static_cast<uint64_t>(synced_upto);
      unsynced_lost += static_cast<uint64_t>(std::max(0, written - n));
      continue;
    }
    int present = 0;
    while (present < written) {
      PinnableSlice v;
      if (!db->Get(ReadOptions(), Key(present), &v).ok()) break;
      ASSERT_EQ(v.ToString(), ValueFor(c.workload, present));
      present++;
    }
    EXPECT_GE(present, synced_upto) << "synced writes lost";
    for (int i = present; i < written; i++) {
      PinnableSlice v;
      ASSERT_TRUE(db->Get(ReadOptions(), Key(i), &v).IsNotFound()) << "hole before " << i;
    }
    synced_writes_checked += static_cast<uint64_t>(synced_upto);
    unsynced_lost += static_cast<uint64_t>(written - present);
  }
  std::printf(
      "figure: power loss, %s: %llu crash points over %llu operations, %llu synced writes checked "
      "present, "
      "%llu unsynced writes lost (always a suffix)\n",
      PowerLossName(::testing::TestParamInfo<PowerLossCase>(c, 0)).c_str(),
      static_cast<unsigned long long>(points), static_cast<unsigned long long>(total_ops),
      static_cast<unsigned long long>(synced_writes_checked),
      static_cast<unsigned long long>(unsynced_lost));
  RecordProperty("crash_points", std::to_string(points));
}

INSTANTIATE_TEST_SUITE_P(Modes, DBPowerLossTest,
                         ::testing::Values(PowerLossCase{CrashMode::kDropUnsynced, false, 0},
                                           PowerLossCase{CrashMode::kDropUnsynced, true, 0},
                                           PowerLossCase{CrashMode::kTornPrefix, true, 0},
                                           PowerLossCase{CrashMode::kRandomBlocks, true, 0},
                                           PowerLossCase{CrashMode::kDropUnsynced, false, 1},
                                           PowerLossCase{CrashMode::kDropUnsynced, true, 1},
                                           PowerLossCase{CrashMode::kTornPrefix, true, 1},
                                           PowerLossCase{CrashMode::kRandomBlocks, true, 1},
                                           PowerLossCase{CrashMode::kTornPrefix, true, 2},
                                           PowerLossCase{CrashMode::kRandomBlocks, true, 2}),
                         PowerLossName);

}  // namespace
}  // namespace shale::test
