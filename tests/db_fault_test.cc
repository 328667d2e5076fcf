// The DB on a file system that crashes, fails and corrupts (docs/reliability.md): acknowledged
// synced writes survive every crash mode, what recovers is a hole-free prefix of history,
// IO errors surface as IOError and leave the DB read-only until Resume(), and damaged bytes
// are reported as Corruption rather than returned as data.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/column_family.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "src/util/coding.h"
#include "tests/fault_injection_fs.h"

namespace shale::test {
namespace {

constexpr char kDbName[] = "/db";

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06d", i);
  return buf;
}
// Values differ per key and are long enough that records span WAL blocks now and then.
std::string Value(int i) {
  return std::string(static_cast<size_t>(50 + (i * 37) % 3000), 'a' + i % 26);
}

// The DB directory's files whose names end in suffix, oldest first (file numbers grow).
std::vector<std::string> DbFiles(FaultInjectionFileSystem* fs, const std::string& suffix) {
  std::vector<std::string> children, files;
  EXPECT_TRUE(fs->GetChildren(kDbName, &children).ok());
  for (const std::string& name : children) {
    if (name.ends_with(suffix)) files.push_back(std::string(kDbName) + "/" + name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

class DBFaultTest : public ::testing::Test {
 protected:
  DBFaultTest() { Reset(301); }

  void Reset(uint64_t seed) {
    db_.reset();
    fs_ = std::make_shared<FaultInjectionFileSystem>(seed);
    EXPECT_TRUE(fs_->CreateDirIfMissing(kDbName).ok());
    options_ = Options();
    options_.create_if_missing = true;
    options_.file_system = fs_;
    // The sweeps reopen the DB thousands of times: two LOG files at most keep the directory
    // (which every open lists) from filling with old logs.
    options_.keep_log_file_num = 2;
  }
  Status TryOpen() {
    db_.reset();
    return DB::Open(options_, kDbName, &db_);
  }
  void Open() {
    Status s = TryOpen();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Drops the handle without a clean close (after a Crash, handles are stale anyway).
  void Abandon() {
    if (db_ != nullptr) db_->Close().PermitUncheckedError();
    db_.reset();
  }
  Status Put(int i, bool sync) {
    WriteOptions wo;
    wo.sync = sync;
    return db_->Put(wo, Key(i), Value(i));
  }
  std::string Get(const std::string& key) {
    PinnableSlice v;
    Status s = db_->Get(ReadOptions(), key, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    if (!s.ok()) return "ERROR:" + s.ToString();
    return v.ToString();
  }
  // The DB's table files, oldest first.
  std::vector<std::string> TableFiles() { return DbFiles(fs_.get(), ".sst"); }
  // Checks that exactly keys 0..n-1 of the history are present with their values and
  // returns n; fails the test on a hole, an extra key or a wrong value.
  int CheckPrefix(int written) {
    int n = 0;
    while (n < written && Get(Key(n)) != "NOT_FOUND") n++;
    for (int i = 0; i < written; i++) {
      std::string v = Get(Key(i));
      if (i < n) {
        EXPECT_EQ(v, Value(i)) << "key " << i;
      } else {
        EXPECT_EQ(v, "NOT_FOUND") << "hole before key " << i << " (prefix " << n << ")";
      }
    }
    return n;
  }

  // For each (path, name) of targets, every bit of the file flipped in turn (restore() puts
  // the files back before each): open() must fail with Corruption naming the file.
  void SweepBitFlips(const std::vector<std::pair<std::string, std::string>>& targets,
                     const std::function<void()>& restore, const std::function<Status()>& open) {
    for (const auto& [path, name] : targets) {
      restore();
      const size_t size = fs_->FileContents(path).size();
      ASSERT_GT(size, 0u) << path;
      for (size_t byte = 0; byte < size; byte++) {
        for (int bit = 0; bit < 8; bit++) {
          restore();
          ASSERT_TRUE(fs_->CorruptFile(path, byte, bit));
          Status s = open();
          ASSERT_TRUE(s.IsCorruption())
              << name << " byte " << byte << " bit " << bit << ": " << s.ToString();
          ASSERT_NE(s.ToString().find(name), std::string::npos)
              << name << " byte " << byte << " bit " << bit << ": " << s.ToString();
        }
      }
      std::printf("figure: %s: %zu bits flipped, every one reported as Corruption\n", name.c_str(),
                  size * 8);
    }
  }

  // EveryBitFlipInALevel0TableIsCaughtByEveryReadPath's body; range_deletions: the level-0
  // table also holds range tombstones.
  void CheckEveryBitFlipInALevel0Table(bool range_deletions);

  std::shared_ptr<FaultInjectionFileSystem> fs_;
  Options options_;
  std::unique_ptr<DB> db_;
};

struct CrashCase {
  CrashMode mode;
  bool revert_directories;
  WALRecoveryMode recovery;
};

std::string CrashCaseName(const ::testing::TestParamInfo<CrashCase>& info) {
  const char* mode[] = {"DropUnsynced", "TornPrefix", "RandomBlocks"};
  const char* rec[] = {"Tolerate", "Absolute", "PointInTime", "Skip"};
  return std::string(mode[static_cast<int>(info.param.mode)]) +
         (info.param.revert_directories ? "RevertDirs" : "") +
         rec[static_cast<int>(info.param.recovery)];
}

class DBCrashTest : public DBFaultTest, public ::testing::WithParamInterface<CrashCase> {};

// One thread writes keys in order, syncing every few writes; after the crash every synced key
// is present and the survivors are a prefix of the history. Reopening twice more (with writes
// in between) keeps that true: recovery must not strand later writes behind a damaged tail.
TEST_P(DBCrashTest, SyncedWritesSurviveAndRecoveryIsAPrefix) {
  const CrashCase c = GetParam();
  for (uint64_t seed = 1; seed <= 12; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Reset(seed);
    options_.wal_recovery_mode = c.recovery;
    Open();
    int written = 0;
    int synced = 0;
    const int total = 200 + static_cast<int>(seed * 17 % 150);
    for (; written < total; written++) {
      const bool sync = written % 7 == 6 || written == 100;
      ASSERT_TRUE(Put(written, sync).ok());
      if (sync) synced = written + 1;
    }
    fs_->Crash(c.mode, c.revert_directories);
    Abandon();
    ASSERT_TRUE(TryOpen().ok());
    const int n = CheckPrefix(written);
    EXPECT_GE(n, synced);

    // Write more, crash again, reopen: the first generation's survivors and every new synced
    // write must still be there.
    // Half of them single-deleted again (records of their own type in the WAL).
    for (int i = 0; i < 40; i++) ASSERT_TRUE(db_->Put(WriteOptions(), "x" + Key(i), "y").ok());
    for (int i = 0; i < 20; i++) ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "x" + Key(i)).ok());
    WriteOptions sync;
    sync.sync = true;
    ASSERT_TRUE(db_->Put(sync, "last", "z").ok());
    fs_->Crash(c.mode, c.revert_directories);
    Abandon();
    Status reopen = TryOpen();
    ASSERT_TRUE(reopen.ok()) << reopen.ToString();
    EXPECT_EQ(CheckPrefix(written), n);
    EXPECT_EQ(Get("last"), "z");
    for (int i = 0; i < 40; i++) EXPECT_EQ(Get("x" + Key(i)), i < 20 ? "NOT_FOUND" : "y");
  }
}

// Memtable switches leave the old log unsynced (a later synced write syncs it first): a crash
// may keep a newer log's unsynced records while an older log loses its own. What recovers is
// still a prefix holding every synced write, in every mode.
TEST_P(DBCrashTest, PrefixAcrossUnsyncedMemtableSwitches) {
  const CrashCase c = GetParam();
  for (uint64_t seed = 1; seed <= 12; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Reset(seed);
    options_.wal_recovery_mode = c.recovery;
    options_.write_buffer_size = 16 << 10;
    options_.max_write_buffer_number = 8;
    Open();
    int written = 0;
    int synced = 0;
    const int total = 150 + static_cast<int>(seed * 17 % 150);
    for (; written < total; written++) {
      const bool sync = written == 60 || written == 61 + static_cast<int>(seed % 40);
      ASSERT_TRUE(Put(written, sync).ok());
      if (sync) synced = written + 1;
    }
    fs_->Crash(c.mode, c.revert_directories);
    Abandon();
    Status s = TryOpen();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_GE(CheckPrefix(written), synced);
  }
}

// Batches that write each key to three column families (one with a memtable that fills and
// flushes often, one that rarely flushes, the default one in between), synced now and then:
// after a crash in each mode, every family holds the same prefix of the history — a batch is in
// all of its families or in none — and that prefix holds every synced batch. Again after more
// writes and a second crash.
TEST_P(DBCrashTest, BatchesAcrossColumnFamiliesSurviveWhole) {
  const CrashCase c = GetParam();
  for (uint64_t seed = 1; seed <= 6; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Reset(seed);
    options_.wal_recovery_mode = c.recovery;
    options_.write_buffer_size = 64 << 10;
    options_.max_write_buffer_number = 8;
    options_.create_missing_column_families = true;
    ColumnFamilyOptions small = options_, large = options_;
    small.write_buffer_size = 16 << 10;
    large.write_buffer_size = 1 << 20;
    const std::vector<ColumnFamilyDescriptor> descriptors = {
        ColumnFamilyDescriptor(kDefaultColumnFamilyName, options_),
        ColumnFamilyDescriptor("small", small), ColumnFamilyDescriptor("large", large)};
    std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
    auto open = [&]() {
      handles.clear();
      db_.reset();
      return DB::Open(options_, kDbName, descriptors, &handles, &db_);
    };
    auto crash = [&]() {
      fs_->Crash(c.mode, c.revert_directories);
      handles.clear();
      Abandon();
    };
    // The prefix of keys 0..written-1 every family holds, checked to be the same in each.
    auto check = [&](int written) {
      int prefix = -1;
      for (const auto& h : handles) {
        int n = 0;
        for (int i = 0; i < written; i++) {
          PinnableSlice v;
          Status s = db_->Get(ReadOptions(), h.get(), Key(i), &v);
          if (s.IsNotFound()) break;
          EXPECT_TRUE(s.ok()) << s.ToString();
          EXPECT_EQ(v.ToString(), Value(i)) << h->GetName() << " key " << i;
          n++;
        }
        for (int i = n + 1; i < written; i++) {
          PinnableSlice v;
          EXPECT_TRUE(db_->Get(ReadOptions(), h.get(), Key(i), &v).IsNotFound())
              << h->GetName() << ": hole before key " << i;
        }
        if (prefix >= 0) {
          EXPECT_EQ(n, prefix) << h->GetName();
        }
        prefix = n;
      }
      return prefix;
    };
    auto write = [&](int i, bool sync) {
      WriteBatch batch;
      for (const auto& h : handles) ASSERT_TRUE(batch.Put(h.get(), Key(i), Value(i)).ok());
      WriteOptions wo;
      wo.sync = sync;
      ASSERT_TRUE(db_->Write(wo, &batch).ok());
    };
    ASSERT_TRUE(open().ok());
    int written = 0, synced = 0;
    const int total = 150 + static_cast<int>(seed * 17 % 100);
    for (; written < total; written++) {
      const bool sync = written % 23 == 22;
      write(written, sync);
      if (HasFatalFailure()) return;
      if (sync) synced = written + 1;
    }
    crash();
    Status s = open();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const int n = check(written);
    EXPECT_GE(n, synced);
    // The history goes on from the prefix that survived.
    written = n;
    for (int i = 0; i < 60; i++, written++) write(written, i == 59);
    if (HasFatalFailure()) return;
    crash();
    s = open();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(check(written + 10), written);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DBCrashTest,
    ::testing::Values(
        CrashCase{CrashMode::kDropUnsynced, false, WALRecoveryMode::kTolerateCorruptedTailRecords},
        CrashCase{CrashMode::kDropUnsynced, true, WALRecoveryMode::kTolerateCorruptedTailRecords},
        CrashCase{CrashMode::kTornPrefix, false, WALRecoveryMode::kTolerateCorruptedTailRecords},
        CrashCase{CrashMode::kTornPrefix, true, WALRecoveryMode::kPointInTimeRecovery},
        CrashCase{CrashMode::kDropUnsynced, false, WALRecoveryMode::kAbsoluteConsistency},
        // Random surviving blocks leave zeroed holes mid-log: only point-in-time recovery
        // (stop at the first damage) can promise a prefix there.
        CrashCase{CrashMode::kRandomBlocks, false, WALRecoveryMode::kPointInTimeRecovery},
        CrashCase{CrashMode::kRandomBlocks, true, WALRecoveryMode::kPointInTimeRecovery}),
    CrashCaseName);

// Recovered data kept in the memtable (avoid_flush_during_recovery) keeps its logs, which may
// end in writes that were never synced. A synced write after the reopen goes to a new log: a
// crash must not keep it while dropping the older unsynced ones, a hole in the history.
TEST_F(DBFaultTest, UnsyncedWritesKeptInLogsAtOpenSurviveWithLaterSyncedWrite) {
  options_.avoid_flush_during_recovery = true;
  Open();
  for (int i = 0; i < 5; i++) ASSERT_TRUE(Put(i, false).ok());
  ASSERT_TRUE(db_->Close().ok());
  Open();
  ASSERT_TRUE(Put(5, true).ok());
  fs_->Crash(CrashMode::kDropUnsynced);
  Abandon();
  Open();
  EXPECT_EQ(Get(Key(5)), Value(5));
  EXPECT_EQ(CheckPrefix(6), 6);
}

// A log that gets no WAL write (its memtable takes only disableWAL writes) passes the chain on:
// the next log's header still names the last sequence of the log before it, so a crash that
// cuts that older log and loses the empty log's header cannot leave a hole. Slow syncs keep
// the first memtable's flush (and so its log) from finishing before the crash.
TEST_F(DBFaultTest, LogWithoutWalWritesPassesTheHeaderChainOn) {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Reset(seed);
    options_.max_write_buffer_number = 8;
    options_.disable_auto_compactions = true;
    Open();
    fs_->SetSyncLatency(std::chrono::milliseconds(50));
    FlushOptions no_wait;
    no_wait.wait = false;
    for (int i = 0; i < 10; i++) ASSERT_TRUE(Put(i, false).ok());
    ASSERT_TRUE(db_->Flush(no_wait).ok());
    WriteOptions no_wal;
    no_wal.disableWAL = true;
    for (int i = 0; i < 5; i++) ASSERT_TRUE(db_->Put(no_wal, "w" + Key(i), "v").ok());
    ASSERT_TRUE(db_->Flush(no_wait).ok());
    for (int i = 10; i < 20; i++) ASSERT_TRUE(Put(i, false).ok());
    fs_->Crash(CrashMode::kTornPrefix);
    Abandon();
    fs_->SetSyncLatency(std::chrono::microseconds(0));
    Status s = TryOpen();
    ASSERT_TRUE(s.ok()) << s.ToString();
    CheckPrefix(20);
  }
}

// The .log files in the DB directory.
std::vector<std::string> LogFiles(FaultInjectionFileSystem* fs) { return DbFiles(fs, ".log"); }

// A memtable switch hands the old log to the OS without a sync, so that a log whose memtable
// is flushed before anything syncs it never costs a device write; the first synced write
// after the switch syncs every older log still kept, then its own.
TEST_F(DBFaultTest, MemtableSwitchDefersTheOldLogsSyncToTheNextSyncedWrite) {
  fs_->SetSyncLatency(std::chrono::milliseconds(300));  // keeps the flushes (and old logs) slow
  options_.write_buffer_size = 16 << 10;
  options_.max_write_buffer_number = 8;
  Open();
  int i = 0;
  while (LogFiles(fs_.get()).size() < 3) ASSERT_TRUE(Put(i++, false).ok());
  std::vector<std::string> logs = LogFiles(fs_.get());
  ASSERT_GE(logs.size(), 3u);
  for (size_t k = 0; k + 1 < logs.size(); k++) {
    EXPECT_LT(fs_->FileDurableSize(logs[k]), fs_->FileSize(logs[k])) << logs[k];
  }
  ASSERT_TRUE(Put(i++, true).ok());
  for (const std::string& log : LogFiles(fs_.get())) {
    EXPECT_EQ(fs_->FileDurableSize(log), fs_->FileSize(log)) << log;
  }
  fs_->Crash(CrashMode::kDropUnsynced);
  Abandon();
  Open();
  EXPECT_EQ(CheckPrefix(i), i);
}

// A log that ends in zeros written ahead (synced more than once) and is killed is copied into
// a new log at an open that keeps recovered data in the memtable; then the old logs are
// dropped. Fails each file-system operation of that open in turn: whatever fails (reading an
// old log again, writing or syncing the copy, the MANIFEST edit), no synced write is lost to
// a power loss afterwards — an open that could not copy everything fails instead.
TEST_F(DBFaultTest, EveryOperationFailureWhileCopyingLogsAtOpenKeepsSyncedWrites) {
  uint64_t ops_in_open = 0;
  for (uint64_t k = 1;; k++) {
    SCOPED_TRACE("failing operation #" + std::to_string(k) + " of the open");
    Reset(k);
    options_.avoid_flush_during_recovery = true;
    Open();
    for (int i = 0; i < 10; i++) ASSERT_TRUE(Put(i, /*sync=*/true).ok());
    fs_->Crash(CrashMode::kDropUnsynced);  // as a kill: everything was synced
    Abandon();
    const std::vector<std::string> old_logs = LogFiles(fs_.get());
    ASSERT_FALSE(old_logs.empty());

    fs_->FailOperationNumber(k + fs_->operation_count());
    bool acked = false;
    Status s = TryOpen();
    if (s.ok()) {
      acked = Put(10, /*sync=*/true).ok();
    } else {
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
    }
    const bool injected = fs_->TotalInjected() > 0;
    fs_->Crash(CrashMode::kDropUnsynced);
    Abandon();
    fs_->DisableAllFaults();
    ASSERT_NO_FATAL_FAILURE(Open());
    EXPECT_EQ(CheckPrefix(acked ? 11 : 10), acked ? 11 : 10);
    if (!injected) {
      // The open that failed nothing copied the records: the old logs are gone.
      for (const std::string& log : old_logs) EXPECT_FALSE(fs_->Exists(log)) << log;
      ops_in_open = k;
      break;
    }
  }
  EXPECT_GT(ops_in_open, 10u);
}

// A flush records the DB's last sequence in the MANIFEST, and that counts writes still in the
// active memtable, here one written without the WAL. When the next open copies the log (it
// ends in a torn record), the log's last record is behind the MANIFEST's sequence: that is no
// sign of a log read back differently, and the open succeeds with every logged write.
TEST_F(DBFaultTest, LogCopyAtOpenAcceptsManifestSequenceAheadOfTheLog) {
  options_.avoid_flush_during_recovery = true;
  Open();
  ASSERT_TRUE(Put(0, false).ok());
  // The flush's syncs are slow, so the writes below reach the new memtable before the flush
  // records the last sequence.
  fs_->SetSyncLatency(std::chrono::milliseconds(500));
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_TRUE(db_->Flush(no_wait).ok());
  ASSERT_TRUE(Put(1, false).ok());
  ASSERT_TRUE(Put(2, false).ok());
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  ASSERT_TRUE(db_->Put(no_wal, Key(3), Value(3)).ok());
  std::string imm;
  while (db_->GetProperty("shale.num-immutable-mem-table", &imm) && imm != "0") {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fs_->SetSyncLatency(std::chrono::microseconds(0));
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  const std::vector<std::string> logs = LogFiles(fs_.get());
  ASSERT_EQ(logs.size(), 1u);  // the flushed memtable's log is gone
  fs_->SetFileContents(logs[0], fs_->FileContents(logs[0]) + std::string("\x5a\x01\x00", 3));

  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(CheckPrefix(3), 3);
  EXPECT_EQ(Get(Key(3)), "NOT_FOUND");  // never logged nor flushed
  std::string seq;
  ASSERT_TRUE(db_->GetProperty("shale.latest-sequence-number", &seq));
  EXPECT_EQ(seq, "4");  // the MANIFEST's, ahead of the log's 3
  // The copy is what the DB now stands on.
  ASSERT_TRUE(Put(4, true).ok());
  fs_->Crash(CrashMode::kDropUnsynced);
  Abandon();
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(CheckPrefix(3), 3);
  EXPECT_EQ(Get(Key(3)), "NOT_FOUND");
  EXPECT_EQ(Get(Key(4)), Value(4));
}

// Reads that fail end an iteration: a newer version, a deletion or a merge operand in a table
// whose block cannot be read must not let an older version below it show through.
TEST_F(DBFaultTest, IteratorStopsAtAnUnreadableBlockRatherThanShowOlderVersions) {
  options_.disable_auto_compactions = true;
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  // Bottom level: the old versions.
  WriteOptions wo;
  ASSERT_TRUE(db_->Put(wo, "a", "old").ok());
  ASSERT_TRUE(db_->Put(wo, "d", "old").ok());
  ASSERT_TRUE(db_->Put(wo, "m", "base").ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  // Level 0: a newer value, a deletion and a merge operand, in a table that will be damaged.
  ASSERT_TRUE(db_->Put(wo, "a", "new").ok());
  ASSERT_TRUE(db_->Delete(wo, "d").ok());
  ASSERT_TRUE(db_->Merge(wo, "m", "l0").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  const std::vector<std::string> tables = TableFiles();
  ASSERT_EQ(tables.size(), 2u);
  ASSERT_TRUE(fs_->CorruptFile(tables.back(), 3, 2));  // the level-0 table's data block
  ASSERT_NO_FATAL_FAILURE(Open());
  // The memtable holds the newest operand, so the merge must read through the damaged table.
  ASSERT_TRUE(db_->Merge(wo, "m", "mem").ok());

  auto expect_stopped = [](Iterator* it, const std::string& where) {
    EXPECT_FALSE(it->Valid()) << where << ": shows " << it->key().ToString() << "="
                              << it->value().ToString();
    EXPECT_TRUE(it->status().IsCorruption()) << where << ": " << it->status().ToString();
  };
  for (const char* target : {"a", "d", "m"}) {
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
    it->Seek(target);
    // Whatever the iterator shows before it stops, it is never an older version.
    for (; it->Valid(); it->Next()) {
      EXPECT_NE(it->value().ToString(), "old") << it->key().ToString();
      EXPECT_NE(it->value().ToString(), "base,mem") << it->key().ToString();
    }
    expect_stopped(it.get(), std::string("forward from ") + target);
    it->SeekForPrev(target);
    for (; it->Valid(); it->Prev()) {
      EXPECT_NE(it->value().ToString(), "old") << it->key().ToString();
      EXPECT_NE(it->value().ToString(), "base,mem") << it->key().ToString();
    }
    expect_stopped(it.get(), std::string("backward from ") + target);
  }
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  int shown = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) shown++;
  expect_stopped(it.get(), "full scan");
  for (it->SeekToLast(); it->Valid(); it->Prev()) shown++;
  expect_stopped(it.get(), "full reverse scan");
  EXPECT_EQ(shown, 0);
  // Point reads report the damage too.
  for (const char* key : {"a", "d", "m"}) {
    EXPECT_TRUE(Get(key).starts_with("ERROR:Corruption")) << key << ": " << Get(key);
  }
}

// A bit flip in every byte of a level-0 table that shadows older versions below it: Get,
// MultiGet and full scans both ways over the two levels show only the newest version of a
// key or stop with Corruption; never an older value, a deleted key or a partial merge.
TEST_F(DBFaultTest, EveryBitFlipInALevel0TableIsCaughtByEveryReadPath) {
  CheckEveryBitFlipInALevel0Table(/*range_deletions=*/false);
}

// The same with range tombstones in the level-0 table (its range-deletion block, and bounds
// that tombstones set): a damaged block is Corruption, never a key brought back.
TEST_F(DBFaultTest, EveryBitFlipInARangeDeletionTableIsCaughtByEveryReadPath) {
  CheckEveryBitFlipInALevel0Table(/*range_deletions=*/true);
}

void DBFaultTest::CheckEveryBitFlipInALevel0Table(bool range_deletions) {
  options_.disable_auto_compactions = true;
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  options_.block_size = 64;  // several data blocks in a small table
  Open();
  const WriteOptions wo;
  constexpr int kKeys = 12;
  std::map<std::string, std::string> model;  // what every read path must show
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(db_->Put(wo, Key(i), "old" + std::to_string(i)).ok());
    model[Key(i)] = "old" + std::to_string(i);
  }
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  for (int i = 0; i < kKeys; i++) {
    const std::string k = Key(i);
    if (i % 3 == 0) {
      ASSERT_TRUE(db_->Put(wo, k, "new" + std::to_string(i)).ok());
      model[k] = "new" + std::to_string(i);
    } else if (i % 3 == 1) {
      ASSERT_TRUE(db_->Delete(wo, k).ok());
      model.erase(k);
    } else {
      ASSERT_TRUE(db_->Merge(wo, k, "op").ok());
      model[k] += ",op";
    }
  }
  if (range_deletions) {
    // Overlapping ranges over values, a merge and a deletion of both levels; one past the keys.
    for (const auto& [from, to] :
         {std::pair{2, 5}, std::pair{4, 7}, std::pair{9, 10}, std::pair{11, 40}}) {
      ASSERT_TRUE(db_->DeleteRange(wo, Key(from), Key(to)).ok());
      model.erase(model.lower_bound(Key(from)), model.lower_bound(Key(to)));
    }
    ASSERT_TRUE(db_->Put(wo, Key(3), "after").ok());
    model[Key(3)] = "after";
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  const std::vector<std::string> tables = TableFiles();
  ASSERT_EQ(tables.size(), 2u);
  const std::string l0 = tables.back();
  const uint64_t size = fs_->FileSize(l0);
  ASSERT_GT(size, 0u);

  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; i++) keys.push_back(Key(i));
  uint64_t flips = 0, failed_open = 0, reads_stopped = 0;
  for (uint64_t byte = 0; byte < size; byte++) {
    // One bit per byte, a different one from byte to byte (every bit of a table is flipped in
    // TableTest.EveryBitFlipIsDetected; this covers the DB's read paths over two levels).
    const int bit = static_cast<int>(byte % 8);
    SCOPED_TRACE("flip " + std::to_string(byte) + ":" + std::to_string(bit));
    ASSERT_TRUE(fs_->CorruptFile(l0, byte, bit));
    flips++;
    Status s = TryOpen();
    if (!s.ok()) {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      failed_open++;
    } else {
      bool stopped = false;
      auto check = [&](const std::string& key, const Status& st, const std::string& value) {
        if (st.ok() || st.IsNotFound()) {
          auto want = model.find(key);
          ASSERT_EQ(st.IsNotFound(), want == model.end()) << key;
          if (st.ok()) {
            ASSERT_EQ(value, want->second) << key;
          }
        } else {
          ASSERT_TRUE(st.IsCorruption()) << key << ": " << st.ToString();
          stopped = true;
        }
      };
      for (const std::string& k : keys) {
        PinnableSlice v;
        Status st = db_->Get(ReadOptions(), k, &v);
        ASSERT_NO_FATAL_FAILURE(check(k, st, v.ToString()));
      }
      std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<std::string> values;
      std::vector<Status> statuses = db_->MultiGet(ReadOptions(), slices, &values);
      for (size_t i = 0; i < keys.size(); i++) {
        ASSERT_NO_FATAL_FAILURE(check(keys[i], statuses[i], values[i]));
      }
      for (bool forward : {true, false}) {
        std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
        std::vector<std::string> shown;
        for (forward ? it->SeekToFirst() : it->SeekToLast(); it->Valid();
             forward ? it->Next() : it->Prev()) {
          const std::string k = it->key().ToString();
          auto want = model.find(k);
          ASSERT_NE(want, model.end()) << "a deleted key came back: " << k;
          ASSERT_EQ(it->value().ToString(), want->second) << k;
          shown.push_back(k);
        }
        if (it->status().ok()) {
          ASSERT_EQ(shown.size(), model.size()) << "a scan ended early without an error";
        } else {
          ASSERT_TRUE(it->status().IsCorruption()) << it->status().ToString();
          stopped = true;
        }
      }
      if (stopped) reads_stopped++;
      db_.reset();
    }
    ASSERT_TRUE(fs_->CorruptFile(l0, byte, bit));  // flipped back
  }
  std::printf(
      "figure: level-0 table%s over level 1: %llu bits flipped (one per byte), %llu failed the "
      "open, %llu stopped a read with Corruption, 0 wrong values\n",
      range_deletions ? " with range deletions" : "", static_cast<unsigned long long>(flips),
      static_cast<unsigned long long>(failed_open), static_cast<unsigned long long>(reads_stopped));
  // Every block is checksummed and every block of a table this small is read by some path.
  EXPECT_EQ(failed_open + reads_stopped, flips);
}

TEST_F(DBFaultTest, FailedWalSyncMakesDbReadOnlyUntilResume) {
  Open();
  for (int i = 0; i < 10; i++) ASSERT_TRUE(Put(i, true).ok());
  fs_->SetErrorRate(FaultOp::kSync, 1, ".log");
  Status s = Put(10, true);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  // Read-only: every write fails, synced or not, and reads still work.
  fs_->DisableAllFaults();
  s = Put(11, false);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(Get(Key(3)), Value(3));
  EXPECT_EQ(Get(Key(11)), "NOT_FOUND");
  // The failed write was not acknowledged and is not visible.
  EXPECT_EQ(Get(Key(10)), "NOT_FOUND");

  ASSERT_TRUE(db_->Resume().ok());
  for (int i = 11; i < 20; i++) ASSERT_TRUE(Put(i, i == 19).ok());
  fs_->Crash(CrashMode::kDropUnsynced);
  Abandon();
  Open();
  for (int i = 0; i < 20; i++) {
    if (i == 10) continue;  // unacknowledged: may or may not have reached the log
    EXPECT_EQ(Get(Key(i)), Value(i)) << i;
  }
}

// Resume with several families writes all their memtables in one MANIFEST record: the log it
// retires may have lost its unsynced tail, so a family recorded alone would hold batches the
// others no longer have. Every operation of Resume fails in turn, then power is lost: every
// family holds the same keys, every acknowledged synced batch among them.
TEST_F(DBFaultTest, EveryOperationFailureDuringResumeKeepsColumnFamiliesTogether) {
  uint64_t ops_in_resume = 0;
  for (uint64_t k = 1;; k++) {
    SCOPED_TRACE("failing operation #" + std::to_string(k) + " of Resume");
    Reset(k);
    options_.create_missing_column_families = true;
    const std::vector<ColumnFamilyDescriptor> descriptors = {
        ColumnFamilyDescriptor(kDefaultColumnFamilyName, options_),
        ColumnFamilyDescriptor("a", options_), ColumnFamilyDescriptor("b", options_)};
    std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
    auto open = [&] {
      handles.clear();
      db_.reset();
      return DB::Open(options_, kDbName, descriptors, &handles, &db_);
    };
    auto write = [&](int i, bool sync) {
      WriteBatch batch;
      for (const auto& h : handles) EXPECT_TRUE(batch.Put(h.get(), Key(i), Value(i)).ok());
      WriteOptions wo;
      wo.sync = sync;
      return db_->Write(wo, &batch);
    };
    ASSERT_TRUE(open().ok());
    for (int i = 0; i < 20; i++) ASSERT_TRUE(write(i, i == 4).ok());
    fs_->SetErrorRate(FaultOp::kSync, 1, ".log");
    EXPECT_TRUE(write(20, true).IsIOError());
    fs_->DisableAllFaults();
    const uint64_t injected_before = fs_->TotalInjected();  // the failed WAL sync
    fs_->FailOperationNumber(k + fs_->operation_count());
    const Status resumed = db_->Resume();
    const bool injected = fs_->TotalInjected() > injected_before;
    fs_->DisableAllFaults();
    fs_->Crash(CrashMode::kDropUnsynced);
    handles.clear();
    Abandon();
    Status s = open();
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int i = 0; i < 20; i++) {
      std::vector<bool> found;
      for (const auto& h : handles) {
        PinnableSlice v;
        Status g = db_->Get(ReadOptions(), h.get(), Key(i), &v);
        ASSERT_TRUE(g.ok() || g.IsNotFound()) << g.ToString();
        if (g.ok()) {
          EXPECT_EQ(v.ToString(), Value(i));
        }
        found.push_back(g.ok());
      }
      EXPECT_TRUE(found[0] == found[1] && found[1] == found[2])
          << "key " << i << ": " << found[0] << found[1] << found[2] << "; Resume said "
          << resumed.ToString();
      if (i <= 4) {
        EXPECT_TRUE(found[0]) << "synced key " << i;
      }
    }
    if (!injected) {
      ops_in_resume = k;
      break;
    }
  }
  EXPECT_GT(ops_in_resume, 5u);
}

TEST_F(DBFaultTest, FailedWalAppendIsReportedAndResumable) {
  Open();
  for (int i = 0; i < 10; i++) ASSERT_TRUE(Put(i, false).ok());
  fs_->SetErrorRate(FaultOp::kWrite, 1, ".log");
  Status s = Put(10, false);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_GT(fs_->InjectedCount(FaultKind::kIOError), 0u);
  // Resume fails while the device still fails, then succeeds.
  fs_->SetErrorRate(FaultOp::kOpen, 1);
  EXPECT_FALSE(db_->Resume().ok());
  EXPECT_TRUE(Put(11, false).IsIOError());
  fs_->DisableAllFaults();
  ASSERT_TRUE(db_->Resume().ok());
  ASSERT_TRUE(Put(11, true).ok());
  ASSERT_TRUE(db_->Close().ok());
  Open();
  for (int i = 0; i < 12; i++) {
    if (i == 10) continue;
    EXPECT_EQ(Get(Key(i)), Value(i)) << i;
  }
}

TEST_F(DBFaultTest, OutOfSpaceThenResume) {
  Open();
  uint64_t used = 0;
  for (const std::string& f : fs_->ListFiles()) used += fs_->FileSize(f);
  fs_->SetSpaceQuota(used + 20000);
  int acked = 0;
  Status s;
  for (int i = 0; i < 1000; i++) {
    s = Put(i, i % 4 == 0);
    if (!s.ok()) break;
    acked = i + 1;
  }
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_LT(acked, 1000);
  EXPECT_GT(fs_->InjectedCount(FaultKind::kNoSpace), 0u);
  EXPECT_TRUE(Put(5000, false).IsIOError());
  fs_->SetSpaceQuota(UINT64_MAX);
  ASSERT_TRUE(db_->Resume().ok());
  ASSERT_TRUE(Put(acked + 1, true).ok());
  ASSERT_TRUE(db_->Close().ok());
  Open();
  EXPECT_GE(CheckPrefix(acked), acked);
  EXPECT_EQ(Get(Key(acked + 1)), Value(acked + 1));
}

// The first write to a log fails, so the memtable is empty (right after Open, or after a
// memtable switch as here). Resume retires that log as it does when the memtable holds data:
// a partial record left at the end of a live log would fail every later open in absolute
// consistency mode, and a write whose fsync failed would come back at the next open.
TEST_F(DBFaultTest, ResumeRetiresALogWhoseFirstWriteFailed) {
  for (const bool out_of_space : {true, false}) {
    SCOPED_TRACE(out_of_space ? "out of space in the write" : "failed fsync");
    Reset(7);
    options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
    Open();
    for (int i = 0; i < 5; i++) ASSERT_TRUE(Put(i, true).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // an empty memtable on a new log
    if (out_of_space) {
      uint64_t used = 0;
      for (const std::string& f : fs_->ListFiles()) used += fs_->FileSize(f);
      fs_->SetSpaceQuota(used + 10);  // the record's first 10 bytes land
    } else {
      fs_->SetErrorRate(FaultOp::kSync, 1, ".log");
    }
    EXPECT_TRUE(Put(5, true).IsIOError());
    fs_->DisableAllFaults();
    fs_->SetSpaceQuota(UINT64_MAX);
    ASSERT_TRUE(db_->Resume().ok());
    EXPECT_EQ(Get(Key(5)), "NOT_FOUND");
    ASSERT_TRUE(Put(6, true).ok());
    ASSERT_TRUE(db_->Close().ok());
    ASSERT_NO_FATAL_FAILURE(Open());
    EXPECT_EQ(CheckPrefix(5), 5);
    EXPECT_EQ(Get(Key(5)), "NOT_FOUND");  // failed, and stays so
    EXPECT_EQ(Get(Key(6)), Value(6));
    // The same after a power loss.
    fs_->Crash(CrashMode::kDropUnsynced, /*revert_directories=*/true);
    Abandon();
    ASSERT_NO_FATAL_FAILURE(Open());
    EXPECT_EQ(CheckPrefix(5), 5);
    EXPECT_EQ(Get(Key(5)), "NOT_FOUND");
    EXPECT_EQ(Get(Key(6)), Value(6));
  }
}

TEST_F(DBFaultTest, ReadErrorsDuringRecoveryFailOpen) {
  Open();
  for (int i = 0; i < 50; i++) ASSERT_TRUE(Put(i, false).ok());
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  fs_->SetErrorRate(FaultOp::kRead, 1, ".log");
  Status s = TryOpen();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(db_, nullptr);
  // Nothing was lost or rewritten by the failed attempt.
  fs_->DisableAllFaults();
  Open();
  EXPECT_EQ(CheckPrefix(50), 50);
}

TEST_F(DBFaultTest, ShortReadsDuringRecoveryAreHandled) {
  Open();
  for (int i = 0; i < 200; i++) ASSERT_TRUE(Put(i, false).ok());
  ASSERT_TRUE(db_->Close().ok());
  fs_->SetShortReadRate(2);
  Open();
  EXPECT_GT(fs_->InjectedCount(FaultKind::kShortRead), 0u);
  EXPECT_EQ(CheckPrefix(200), 200);
}

// Bits flipped on the way from the device: recovery reports Corruption (or recovers a
// prefix in point-in-time mode) and never returns a damaged value.
TEST_F(DBFaultTest, ReadBitFlipsNeverBecomeData) {
  for (uint64_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (WALRecoveryMode mode :
         {WALRecoveryMode::kAbsoluteConsistency, WALRecoveryMode::kPointInTimeRecovery,
          WALRecoveryMode::kTolerateCorruptedTailRecords}) {
      Reset(seed);
      options_.wal_recovery_mode = mode;
      Open();
      for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(i, false).ok());
      ASSERT_TRUE(db_->Close().ok());
      db_.reset();
      fs_->SetReadBitFlipRate(5);
      Status s = TryOpen();
      fs_->DisableAllFaults();
      if (!s.ok()) {
        EXPECT_TRUE(s.IsCorruption()) << s.ToString();
        continue;
      }
      if (mode == WALRecoveryMode::kPointInTimeRecovery) {
        CheckPrefix(100);
      } else {
        // No damage reached a checksum-verified record, so everything is there.
        EXPECT_EQ(CheckPrefix(100), 100);
      }
    }
  }
}

// Bits flipped on the way to the device are caught by the record checksums at recovery.
TEST_F(DBFaultTest, WriteBitFlipsAreDetectedAtRecovery) {
  int detected = 0;
  for (uint64_t seed = 1; seed <= 10; seed++) {
    Reset(seed);
    options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
    Open();
    fs_->SetWriteBitFlipRate(20);
    for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(i, false).ok());
    fs_->DisableAllFaults();
    const bool flipped = fs_->InjectedCount(FaultKind::kWriteBitFlip) > 0;
    ASSERT_TRUE(db_->Close().ok());
    Status s = TryOpen();
    if (flipped) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      detected += s.IsCorruption() ? 1 : 0;
    } else {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(CheckPrefix(100), 100);
    }
    // Point-in-time recovery opens the same files and keeps the undamaged prefix.
    db_.reset();
    options_.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
    Open();
    CheckPrefix(100);
  }
  EXPECT_GT(detected, 0);
}

// Every bit of the MANIFEST (each of its records), of CURRENT and of the WAL, flipped in turn
// on a closed DB: Open reports Corruption naming the damaged file (the WAL read in absolute
// consistency mode) — never a crash, never an open that then serves different data.
TEST_F(DBFaultTest, EveryBitFlipInManifestCurrentAndWalIsCorruption) {
  options_.disable_auto_compactions = true;
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  Open();
  auto value = [](int i) { return std::string(static_cast<size_t>(8 + i % 5), 'a' + i % 26); };
  for (int round = 0; round < 3; round++) {
    for (int i = round * 4; i < round * 4 + 4; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), value(i)).ok());
    }
    // A range tombstone (over keys never written) in a table: the MANIFEST records that file
    // with its count and tombstone bounds.
    if (round == 2) {
      ASSERT_TRUE(db_->DeleteRange(WriteOptions(), Key(100), Key(110)).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  for (int i = 12; i < 20; i++) ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), value(i)).ok());
  // And one as a WAL record.
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), Key(200), Key(210)).ok());
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();

  std::map<std::string, std::string> image;
  for (const std::string& f : fs_->ListFiles()) image[f] = fs_->FileContents(f);
  auto restore = [&] {
    for (const std::string& f : fs_->ListFiles()) {
      if (!image.contains(f)) {
        ASSERT_TRUE(fs_->DeleteFile(f).ok());
      }
    }
    for (const auto& [path, contents] : image) fs_->SetFileContents(path, contents);
  };
  const std::string current = std::string(kDbName) + "/CURRENT";
  ASSERT_TRUE(image.contains(current));
  std::vector<std::pair<std::string, std::string>> targets;  // path, name in the message
  const std::string manifest = image[current].substr(0, image[current].size() - 1);
  targets.emplace_back(std::string(kDbName) + "/" + manifest, manifest);
  targets.emplace_back(current, "CURRENT");
  for (const auto& [path, contents] : image) {
    if (path.ends_with(".log") && !contents.empty()) {
      targets.emplace_back(path, path.substr(path.rfind('/') + 1));
    }
  }
  ASSERT_EQ(targets.size(), 3u) << "expected one non-empty WAL";
  {
    // The WAL was started by the last Flush's memtable switch, so it begins with a header
    // record (an empty batch naming the previous log's last sequence, 13): its bits are swept
    // too. Record: checksum(4) length(2) type(1), then the batch: sequence(8) count(4).
    const std::string& wal = image[targets.back().first];
    ASSERT_GE(wal.size(), 7u + 12u);
    EXPECT_EQ(static_cast<uint8_t>(wal[4]) | static_cast<uint8_t>(wal[5]) << 8, 12);
    EXPECT_EQ(DecodeFixed64(wal.data() + 7), 13u);  // 12 puts and a DeleteRange
    EXPECT_EQ(DecodeFixed32(wal.data() + 7 + 8), 0u);
  }
  SweepBitFlips(targets, restore, [this] { return TryOpen(); });
  restore();
  Open();
  for (int i = 0; i < 20; i++) EXPECT_EQ(Get(Key(i)), value(i)) << i;
}

// The same with column families: the MANIFEST holds family records (added, flushed,
// compacted, one dropped) and the WAL records of several families, among them a dropped one's.
TEST_F(DBFaultTest, EveryBitFlipInAManifestAndWalWithColumnFamiliesIsCorruption) {
  options_.disable_auto_compactions = true;
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  const std::vector<ColumnFamilyDescriptor> descriptors = {
      ColumnFamilyDescriptor(kDefaultColumnFamilyName, options_),
      ColumnFamilyDescriptor("kept", options_)};
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  auto open = [&] {
    handles.clear();
    db_.reset();
    return DB::Open(options_, kDbName, descriptors, &handles, &db_);
  };
  Open();
  std::unique_ptr<ColumnFamilyHandle> kept, gone;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "kept", &kept).ok());
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "gone", &gone).ok());
  for (int i = 0; i < 8; i++) {
    WriteBatch batch;
    ASSERT_TRUE(batch.Put(kept.get(), Key(i), "k").ok());
    ASSERT_TRUE(batch.Put(gone.get(), Key(i), "g").ok());
    ASSERT_TRUE(batch.Put(Key(i), "d").ok());
    ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    if (i == 3) {
      ASSERT_TRUE(db_->Flush(FlushOptions(), {kept.get(), gone.get()}).ok());
      ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), kept.get(), nullptr, nullptr).ok());
    }
  }
  ASSERT_TRUE(db_->DropColumnFamily(gone.get()).ok());
  kept.reset();
  gone.reset();
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();

  std::map<std::string, std::string> image;
  for (const std::string& f : fs_->ListFiles()) image[f] = fs_->FileContents(f);
  auto restore = [&] {
    handles.clear();
    db_.reset();
    for (const std::string& f : fs_->ListFiles()) {
      if (!image.contains(f)) {
        ASSERT_TRUE(fs_->DeleteFile(f).ok());
      }
    }
    for (const auto& [path, contents] : image) fs_->SetFileContents(path, contents);
  };
  const std::string current = std::string(kDbName) + "/CURRENT";
  const std::string manifest = image[current].substr(0, image[current].size() - 1);
  std::vector<std::pair<std::string, std::string>> targets = {
      {std::string(kDbName) + "/" + manifest, manifest}};
  for (const auto& [path, contents] : image) {
    if (path.ends_with(".log") && !contents.empty()) {
      targets.emplace_back(path, path.substr(path.rfind('/') + 1));
    }
  }
  ASSERT_GE(targets.size(), 2u);
  SweepBitFlips(targets, restore, open);
  restore();
  ASSERT_TRUE(open().ok());
  for (int i = 0; i < 8; i++) {
    PinnableSlice v;
    ASSERT_TRUE(db_->Get(ReadOptions(), handles[1].get(), Key(i), &v).ok());
    EXPECT_EQ(v.ToString(), "k");
    EXPECT_EQ(Get(Key(i)), "d");
  }
}

TEST_F(DBFaultTest, SecondOpenOfLockedDbIsRefused) {
  Open();
  std::unique_ptr<DB> second;
  Status s = DB::Open(options_, kDbName, &second);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(second, nullptr);
  ASSERT_TRUE(db_->Close().ok());
  s = DB::Open(options_, kDbName, &second);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Fails each file-system operation of an open/write/close/reopen workload in turn. Whatever
// fails, every call returns (no crash, no hang), errors are IOError, and a clean reopen
// afterwards finds every acknowledged write.
TEST_F(DBFaultTest, EveryOperationFailureIsSurvivable) {
  uint64_t ops_in_workload = 0;
  for (uint64_t k = 1;; k++) {
    SCOPED_TRACE("failing operation #" + std::to_string(k));
    Reset(k);
    fs_->FailOperationNumber(k + fs_->operation_count());
    std::set<int> acked;
    Status s = TryOpen();
    if (s.ok()) {
      for (int i = 0; i < 30; i++) {
        s = Put(i, i % 3 == 2);
        if (s.ok()) {
          acked.insert(i);
        } else {
          EXPECT_TRUE(s.IsIOError()) << s.ToString();
          if (db_->Resume().ok()) continue;
        }
      }
      s = db_->Close();
      EXPECT_TRUE(s.ok() || s.IsIOError()) << s.ToString();
    } else {
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
    }
    db_.reset();
    const bool injected = fs_->TotalInjected() > 0;
    fs_->DisableAllFaults();
    Open();
    for (int i : acked) EXPECT_EQ(Get(Key(i)), Value(i)) << i;
    if (!injected) {
      ops_in_workload = k;
      break;
    }
  }
  EXPECT_GT(ops_in_workload, 30u);
}

// Fails each file-system operation of a workload that flushes, compacts and writes a new
// MANIFEST for every edit, then loses power. Whatever failed (a table write, the directory
// sync after CURRENT's rename, a MANIFEST append), the DB reopens with every acknowledged
// write: no file that a durable MANIFEST may name is deleted while its edit's fate is unknown.
TEST_F(DBFaultTest, EveryOperationFailureDuringFlushAndCompactionSurvivesPowerLoss) {
  uint64_t ops_in_workload = 0;
  for (const bool revert_directories : {false, true}) {
    for (uint64_t k = 1;; k++) {
      SCOPED_TRACE("failing operation #" + std::to_string(k) +
                   (revert_directories ? ", directories reverted" : ""));
      Reset(k);
      options_.disable_auto_compactions = true;
      options_.max_manifest_file_size = 64;  // every edit starts a new MANIFEST
      fs_->FailOperationNumber(k + fs_->operation_count());
      std::set<int> acked;
      Status s = TryOpen();
      if (s.ok()) {
        for (int round = 0; round < 3; round++) {
          for (int i = round * 10; i < round * 10 + 10; i++) {
            if (Put(i, /*sync=*/true).ok()) acked.insert(i);
          }
          // Overlapping key ranges, so the compaction rewrites rather than moves.
          if (Put(round, /*sync=*/true).ok()) acked.insert(round);
          if (!db_->Flush(FlushOptions()).ok()) db_->Resume().PermitUncheckedError();
        }
        // L0 into L1, then L1 rewritten in place.
        CompactRangeOptions force;
        force.bottommost_level_compaction = BottommostLevelCompaction::kForce;
        if (!db_->CompactRange(force, nullptr, nullptr).ok()) {
          db_->Resume().PermitUncheckedError();
        }
        if (Put(100, /*sync=*/true).ok()) acked.insert(100);
      }
      const bool injected = fs_->TotalInjected() > 0;
      fs_->Crash(CrashMode::kDropUnsynced, revert_directories);
      Abandon();
      fs_->DisableAllFaults();
      s = TryOpen();
      if (!s.ok() && acked.empty()) continue;  // nothing durable had been created yet
      ASSERT_TRUE(s.ok()) << s.ToString();
      for (int i : acked) EXPECT_EQ(Get(Key(i)), Value(i)) << i;
      if (!injected) {
        ops_in_workload = k;
        break;
      }
    }
  }
  EXPECT_GT(ops_in_workload, 50u);
}

}  // namespace
}  // namespace shale::test
