// Group commit under concurrency: many writer threads, readers racing with them, fsync counts.
// Suite names contain "Concurrent": CI also runs them under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "shale/statistics.h"
#include "src/db/write_thread.h"
#include "src/util/random.h"
#include "src/util/test_hook.h"
#include "tests/db_test_util.h"
#include "tests/fault_injection_fs.h"

namespace shale::test {
namespace {

// Every test runs with write groups whole (the leader writes the WAL and the memtable) and
// pipelined (Options::enable_pipelined_write).
class DBWriteConcurrentTest : public DBTestBase, public testing::WithParamInterface<bool> {
 public:
  DBWriteConcurrentTest() { options_.enable_pipelined_write = GetParam(); }
  void WriteDuringASlowInsert(bool fill);
  // Reads counters c<w> and their mirrors m<w> (written in one batch: the mirror's value starts
  // with the counter's) under one snapshot; returns how many of them went back since *last, or
  // showed half a batch.
  int CheckCounters(std::vector<long>* last) {
    int violations = 0;
    const Snapshot* snap = db_->GetSnapshot();
    ReadOptions ro;
    ro.snapshot = snap;
    for (size_t w = 0; w < last->size(); w++) {
      std::string c, m;
      const Status s1 = db_->Get(ro, "c" + std::to_string(w), &c);
      const Status s2 = db_->Get(ro, "m" + std::to_string(w), &m);
      if (s1.IsNotFound() && s2.IsNotFound()) continue;  // not written yet
      if (!s1.ok()) {
        violations++;
        continue;
      }
      const long v = std::stol(c);
      if (v < (*last)[w]) violations++;
      if (v > 0 && (!s2.ok() || std::stol(m) != v)) violations++;  // whole batches only
      (*last)[w] = v;
    }
    db_->ReleaseSnapshot(snap);
    return violations;
  }
  static std::string Key(int thread, int i) {
    return "t" + std::to_string(thread) + "_" + std::to_string(i);
  }
  static std::string Value(int thread, int i) {
    return "value-" + std::to_string(thread * 1000003 + i);
  }
};

// `threads` threads each make `writes` synchronous Puts of Key(t, i) = Value(t, i) into db;
// returns how many failed.
int RunSyncWriters(DB* db, int threads, int writes) {
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([&, t] {
      WriteOptions wo;
      wo.sync = true;
      for (int i = 0; i < writes; i++) {
        const std::string key = DBWriteConcurrentTest::Key(t, i);
        if (!db->Put(wo, key, DBWriteConcurrentTest::Value(t, i)).ok()) failures++;
      }
    });
  }
  for (auto& w : workers) w.join();
  return failures.load();
}

INSTANTIATE_TEST_SUITE_P(WritePath, DBWriteConcurrentTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Pipelined" : "Grouped";
                         });

TEST_P(DBWriteConcurrentTest, SixteenThreadsFiveThousandWritesEach) {
  constexpr int kThreads = 16;
  constexpr int kWrites = 5000;
  options_.statistics = CreateDBStatistics();
  Open();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; i++) {
        Status s;
        if (i % 10 == 9) {  // some writes arrive as batches
          WriteBatch batch;
          s = batch.Put(Key(t, i), Value(t, i));
          if (s.ok()) s = db_->Write(WriteOptions(), &batch);
        } else {
          s = db_->Put(WriteOptions(), Key(t, i), Value(t, i));
        }
        if (!s.ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);

  auto verify_all = [&] {
    int missing = 0;
    for (int t = 0; t < kThreads; t++) {
      for (int i = 0; i < kWrites; i++) {
        if (Get(Key(t, i)) != Value(t, i)) missing++;
      }
    }
    return missing;
  };
  EXPECT_EQ(verify_all(), 0);
  Statistics* st = options_.statistics.get();
  EXPECT_EQ(st->getTickerCount(NUMBER_KEYS_WRITTEN), uint64_t{kThreads} * kWrites);
  EXPECT_EQ(st->getTickerCount(WRITE_DONE_BY_SELF) + st->getTickerCount(WRITE_DONE_BY_OTHER),
            uint64_t{kThreads} * kWrites);
  std::string n;
  ASSERT_TRUE(db_->GetProperty("shale.latest-sequence-number", &n));
  EXPECT_EQ(n, std::to_string(kThreads * kWrites));

  Reopen();
  EXPECT_EQ(verify_all(), 0);
}

// DB::Close while writers, point readers, Flush, SyncWAL and a thread taking snapshots and
// iterators run (db.h): Close waits for the write groups in flight, every later write,
// exclusive section (Flush, SyncWAL), read, snapshot and iterator is refused with Aborted
// (none reaches the closed log, the released memtables or versions), Close itself refuses while
// a snapshot or iterator is out, reads before that answer right, and every write that was
// acknowledged is in the DB when it opens again. A small write buffer keeps memtable switches
// and flushes racing with the close.
TEST_P(DBWriteConcurrentTest, CloseRacingWritesReadsAndFlushesKeepsEveryAcknowledgedWrite) {
  constexpr int kWriters = 3;
  constexpr int kReaders = 2;
  options_.write_buffer_size = 64 << 10;
  for (int round = 0; round < 3; round++) {
    Open();
    std::vector<std::vector<int>> acknowledged(kWriters);
    std::vector<std::atomic<int>> written(kWriters);
    std::atomic<int> writes{0};
    std::atomic<int> unexpected{0};
    std::atomic<int> wrong_values{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kWriters; t++) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 1000000; i++) {
          const Status s = db_->Put(WriteOptions(), Key(t, i), Value(t, i));
          if (s.ok()) {
            acknowledged[t].push_back(i);
            written[t].store(i + 1);
            writes++;
          } else {
            if (!s.IsAborted()) unexpected++;
            break;
          }
        }
      });
    }
    for (int r = 0; r < kReaders; r++) {
      threads.emplace_back([&, r] {
        Random rnd(static_cast<uint32_t>(round * 10 + r + 1));
        for (;;) {
          const int t = static_cast<int>(rnd.Uniform(kWriters));
          const int n = written[t].load();
          if (n == 0) {
            std::this_thread::yield();
            continue;
          }
          const int i = static_cast<int>(rnd.Uniform(static_cast<uint64_t>(n)));
          const std::string key = Key(t, i), other = Key(t, n - 1);
          std::string value;
          const Status s = db_->Get(ReadOptions(), key, &value);
          if (s.IsAborted()) break;
          if (!s.ok()) unexpected++;
          if (s.ok() && value != Value(t, i)) wrong_values++;
          std::vector<std::string> values;
          const std::vector<Status> statuses =
              db_->MultiGet(ReadOptions(), {Slice(key), Slice(other)}, &values);
          if (statuses[0].IsAborted()) break;
          if (!statuses[0].ok() || !statuses[1].ok()) unexpected++;
          if (statuses[0].ok() && values[0] != Value(t, i)) wrong_values++;
        }
      });
    }
    threads.emplace_back([&] {
      for (int i = 0;; i++) {
        const Status s = i % 2 == 0 ? db_->Flush(FlushOptions()) : db_->SyncWAL();
        if (s.IsAborted()) break;
        if (!s.ok()) unexpected++;
      }
    });
    // Snapshots and iterators: each handed out keeps Close from closing until it is released;
    // the thread stops once one is refused (Aborted, or a null snapshot) or Close was refused.
    std::atomic<int> scans{0};
    std::atomic<bool> close_refused{false};
    threads.emplace_back([&] {
      while (!close_refused.load()) {
        const Snapshot* snapshot = db_->GetSnapshot();
        if (snapshot == nullptr) break;
        ReadOptions ro;
        ro.snapshot = snapshot;
        std::unique_ptr<Iterator> it = db_->NewIterator(ro);
        const bool refused = it->status().IsAborted();
        if (!refused) {
          int seen = 0;
          for (it->SeekToFirst(); it->Valid() && seen < 50; it->Next(), seen++) {
            int t = 0, i = 0;
            const std::string key = it->key().ToString();
            if (std::sscanf(key.c_str(), "t%d_%d", &t, &i) != 2 ||
                it->value().ToString() != Value(t, i)) {
              wrong_values++;
            }
          }
          if (!it->status().ok()) unexpected++;
          scans++;
        }
        it.reset();
        db_->ReleaseSnapshot(snapshot);
        if (refused) break;
      }
    });
    while (writes.load() < 2000 * (round + 1) || scans.load() == 0) std::this_thread::yield();
    // Close refuses while the scanning thread holds a snapshot or an iterator.
    Status closed = db_->Close();
    while (closed.IsAborted() && closed.ToString().find("cannot close") != std::string::npos) {
      close_refused.store(true);
      std::this_thread::yield();
      closed = db_->Close();
    }
    for (auto& th : threads) th.join();
    ASSERT_TRUE(closed.ok()) << closed.ToString();
    EXPECT_GT(scans.load(), 0);
    EXPECT_EQ(unexpected.load(), 0);
    EXPECT_EQ(wrong_values.load(), 0);
    EXPECT_TRUE(db_->Close().IsAborted());
    db_.reset();
    Open();
    int missing = 0;
    for (int t = 0; t < kWriters; t++) {
      for (int i : acknowledged[t]) {
        if (Get(Key(t, i)) != Value(t, i)) missing++;
      }
    }
    EXPECT_EQ(missing, 0) << "round " << round;
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

// An exclusive section (SyncWAL, Flush) that passed its open check before Close began but
// reaches the write slot only after Close drained it is refused (Aborted): it would otherwise
// run on the log and memtables Close is releasing. Test hooks hold the section's thread before
// the slot until Close's drain is done, then hold Close until the section has returned.
// A write or an exclusive section that passed the open check before Close, and reaches the write
// slot only after Close drained it, is refused: a write group leads with nothing from the locked
// room check (MakeRoomForWrite's lock-free path) unless Close has begun.
TEST_P(DBWriteConcurrentTest, WritesAndSectionsReachingTheSlotAfterCloseDrainsAreRefused) {
  if (!test_hook::kEnabled) GTEST_SKIP() << "test hooks are compiled out of this build";
  enum class Kind { kSyncWAL, kFlush, kPut };
  for (const Kind kind : {Kind::kSyncWAL, Kind::kFlush, Kind::kPut}) {
    const char* const name = kind == Kind::kSyncWAL ? "SyncWAL"
                             : kind == Kind::kFlush ? "Flush"
                                                    : "Put";
    Open();
    ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
    std::atomic<std::thread::id> section_thread{};
    std::atomic<bool> held{false};
    std::atomic<bool> may_go{false};
    std::atomic<bool> returned{false};
    test_hook::Set(
        kind == Kind::kPut ? "DBImpl::WriteImpl:AfterCheckOpen" : "DBImpl::WithWritesStopped:Enter",
        [&] {
          if (std::this_thread::get_id() != section_thread.load()) return;
          held.store(true);
          while (!may_go.load()) std::this_thread::yield();
        });
    test_hook::Set("DBImpl::CloseImpl:AfterDrain", [&] {
      may_go.store(true);
      while (!returned.load()) std::this_thread::yield();
    });
    Status section;
    std::thread t([&] {
      section_thread.store(std::this_thread::get_id());
      switch (kind) {
        case Kind::kSyncWAL:
          section = db_->SyncWAL();
          break;
        case Kind::kFlush:
          section = db_->Flush(FlushOptions());
          break;
        case Kind::kPut:
          section = db_->Put(WriteOptions(), "k", "late");
          break;
      }
      returned.store(true);
    });
    while (!held.load()) std::this_thread::yield();
    const Status closed = db_->Close();
    t.join();
    test_hook::ClearAll();
    EXPECT_TRUE(closed.ok()) << closed.ToString();
    EXPECT_TRUE(section.IsAborted()) << name << ": " << section.ToString();
    db_.reset();
    Open();
    EXPECT_EQ(Get("k"), "v") << name;
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

TEST_P(DBWriteConcurrentTest, SyncWritesShareFsyncs) {
  constexpr int kThreads = 16;
  constexpr int kWrites = 100;
  options_.statistics = CreateDBStatistics();
  Open();
  ASSERT_EQ(RunSyncWriters(db_.get(), kThreads, kWrites), 0);
  Statistics* st = options_.statistics.get();
  const uint64_t writes = kThreads * kWrites;
  const uint64_t syncs = st->getTickerCount(WAL_FILE_SYNCED);
  HistogramData groups;
  st->histogramData(WRITE_GROUP_SIZE, &groups);
  // One fsync per group: as many syncs as groups, and groups hold several writers.
  EXPECT_EQ(syncs, groups.count);
  EXPECT_EQ(groups.sum, writes);
  EXPECT_LT(syncs, writes);
  EXPECT_GT(groups.max, 1.0);
  EXPECT_GT(st->getTickerCount(WRITE_DONE_BY_OTHER), 0u);
  RecordProperty("fsyncs", std::to_string(syncs));
  RecordProperty("writes", std::to_string(writes));
  Reopen();
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kWrites; i++) ASSERT_EQ(Get(Key(t, i)), Value(t, i));
  }
}

TEST_P(DBWriteConcurrentTest, ReadersSeeMonotonicCounters) {
  // Each writer bumps its own counter key; readers must never see a counter go backwards,
  // and a snapshot must never see a later batch's half.
  constexpr int kWriters = 4;
  constexpr int kUpdates = 2000;
  Open();
  for (int w = 0; w < kWriters; w++) ASSERT_TRUE(Put("c" + std::to_string(w), "0").ok());
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      for (int i = 1; i <= kUpdates; i++) {
        WriteBatch batch;  // the counter and its mirror change together
        Status s = batch.Put("c" + std::to_string(w), std::to_string(i));
        if (s.ok()) s = batch.Put("m" + std::to_string(w), std::to_string(i));
        if (s.ok()) s = db_->Write(WriteOptions(), &batch);
        if (!s.ok()) violations++;
      }
    });
  }
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([&] {
      std::vector<long> last(kWriters, 0);
      while (!done.load()) violations += CheckCounters(&last);
    });
  }
  for (int w = 0; w < kWriters; w++) threads[w].join();
  done.store(true);
  for (size_t i = kWriters; i < threads.size(); i++) threads[i].join();
  EXPECT_EQ(violations.load(), 0);
  for (int w = 0; w < kWriters; w++)
    EXPECT_EQ(Get("c" + std::to_string(w)), std::to_string(kUpdates));
}

// Writers of two-key batches while memtables switch every few writes, a thread flushes and
// syncs the WAL (writes that must stop all others), and readers check that counters never go
// back and batches show whole: pipelined groups must finish inserting before a switch or an
// exclusive write, and publish in order.
TEST_P(DBWriteConcurrentTest, WritesAcrossMemtableSwitchesAndExclusiveWrites) {
  constexpr int kWriters = 4;
  constexpr int kUpdates = 1500;
  options_.write_buffer_size = 32 << 10;
  options_.file_system = FaultInjectionFileSystem::WithParentsOf(dbname_, 5);  // fast syncs
  Open();
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      const std::string pad(100 + 50 * w, 'p');
      for (int i = 1; i <= kUpdates; i++) {
        WriteBatch batch;
        Status s = batch.Put("c" + std::to_string(w), std::to_string(i));
        if (s.ok()) s = batch.Put("m" + std::to_string(w), std::to_string(i) + pad);
        WriteOptions wo;
        wo.sync = i % 100 == 0;
        if (s.ok()) s = db_->Write(wo, &batch);
        if (!s.ok()) violations++;
      }
    });
  }
  std::atomic<int> exclusive{0};
  std::thread stopper([&] {
    while (!done.load()) {
      if (!db_->Flush(FlushOptions()).ok()) violations++;
      if (!db_->SyncWAL().ok()) violations++;
      exclusive++;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  std::thread reader([&] {
    std::vector<long> last(kWriters, 0);
    while (!done.load()) violations += CheckCounters(&last);
  });
  for (auto& t : threads) t.join();
  done.store(true);
  stopper.join();
  reader.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(exclusive.load(), 0);
  std::string n;
  ASSERT_TRUE(db_->GetProperty("shale.latest-sequence-number", &n));
  EXPECT_EQ(n, std::to_string(2 * kWriters * kUpdates));
  Reopen();
  for (int w = 0; w < kWriters; w++) {
    EXPECT_EQ(Get("c" + std::to_string(w)), std::to_string(kUpdates));
  }
}

// Comparisons sleep on a thread that set slow_inserts (its memtable inserts then take
// milliseconds); slowed says one did.
thread_local bool slow_inserts = false;
class SlowInsertComparator final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override {
    if (slow_inserts) {
      slowed.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return BytewiseComparator()->Compare(a, b);
  }
  const char* Name() const override { return "shale.test.SlowInsertComparator"; }
  void FindShortestSeparator(std::string* start, const Slice& limit) const override {
    BytewiseComparator()->FindShortestSeparator(start, limit);
  }
  void FindShortSuccessor(std::string* key) const override {
    BytewiseComparator()->FindShortSuccessor(key);
  }
  mutable std::atomic<bool> slowed{false};
};

// Thread A's write inserts slowly (its skiplist insert takes milliseconds); the main thread
// writes meanwhile. Whole groups: it waits behind A. Pipelined: it leads the next group at
// once, but returns only once A's write is visible (groups publish in order). With fill, A's
// value fills the memtable past write_buffer_size before A's insert starts (MemTable::Add copies
// a value longer than kMaxInlineValue into its arena before it links the entry): the main thread
// then switches the memtable only after A's insert (A's entry would otherwise land in a
// memtable being flushed, its record in the log being closed).
void DBWriteConcurrentTest::WriteDuringASlowInsert(bool fill) {
  SlowInsertComparator cmp;
  options_.comparator = &cmp;
  options_.write_buffer_size = 64 << 10;
  Open();
  // Entries for A's insert to compare with.
  for (int i = 0; i < 64; i++) ASSERT_TRUE(Put("k" + std::to_string(i), "v").ok());
  const std::string a_value(fill ? 80 << 10 : 10, 'a');
  std::thread a([&] {
    slow_inserts = true;
    EXPECT_TRUE(db_->Put(WriteOptions(), "a", a_value).ok());
    slow_inserts = false;
  });
  while (!cmp.slowed.load()) std::this_thread::yield();
  ASSERT_TRUE(Put("b", "b").ok());
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), "a", &v).ok()) << "a later write returned first";
  a.join();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Get("a"), a_value);
  EXPECT_EQ(Get("b"), "b");
  Reopen();
  EXPECT_EQ(Get("a"), a_value);
  EXPECT_EQ(Get("b"), "b");
  Close();
}

TEST_P(DBWriteConcurrentTest, AWriteIsVisibleBeforeLaterOnes) { WriteDuringASlowInsert(false); }

TEST_P(DBWriteConcurrentTest, AWriteIsInsertedBeforeTheNextGroupSwitchesMemtables) {
  WriteDuringASlowInsert(true);
}

// Reads without a snapshot race with compactions that keep only the newest version of a key.
// A read must take its SuperVersion before its sequence: the other order lets a compaction
// between the two drop the only version at or below the sequence, and the key reads as
// missing. Readers (more than the cores, so they are preempted anywhere) read keys that
// always exist while a writer overwrites them and compacts; NotFound is a failure.
TEST_P(DBWriteConcurrentTest, ReadsNeverMissAKeyWhileCompactionsDropOldVersions) {
  constexpr int kKeys = 4;
  options_.file_system = FaultInjectionFileSystem::WithParentsOf(dbname_, 5);  // fast syncs
  options_.disable_auto_compactions = true;
  Open();
  std::vector<std::string> keys;
  for (int k = 0; k < kKeys; k++) {
    keys.push_back("key" + std::to_string(k));
    ASSERT_TRUE(Put(keys.back(), "0").ok());
  }
  std::atomic<bool> done{false};
  std::atomic<int> misses{0};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 6; r++) {
    readers.emplace_back([&, r] {
      std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<PinnableSlice> values(kKeys);
      std::vector<Status> statuses(kKeys);
      for (long i = r; !done.load(std::memory_order_relaxed); i++) {
        PinnableSlice v;
        if (!db_->Get(ReadOptions(), keys[i % kKeys], &v).ok()) misses++;
        if (i % 4 == 0) {
          db_->MultiGet(ReadOptions(), kKeys, slices.data(), values.data(), statuses.data());
          for (const Status& s : statuses) misses += s.ok() ? 0 : 1;
        }
        if (i % 16 == 0) {
          std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
          int n = 0;
          for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
          if (n != kKeys || !it->status().ok()) misses++;
        }
        reads++;
      }
    });
  }
  int cycles = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < end) {
    cycles++;
    for (const std::string& k : keys) ASSERT_TRUE(Put(k, std::to_string(cycles)).ok());
    // Flushes the overwrites, then merges them with the older versions below.
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  }
  done.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0) << "of " << reads.load() << " reads over " << cycles
                              << " compactions";
  EXPECT_GT(cycles, 10);
}

TEST_P(DBWriteConcurrentTest, IteratorsDuringWrites) {
  Open();
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::thread writer([&] {
    for (int i = 0; i < 5000; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%06d", (i * 7919) % 5000);
      if (!db_->Put(WriteOptions(), key, std::to_string(i)).ok()) violations++;
    }
    done.store(true);
  });
  while (!done.load()) {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    std::string prev;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string k = it->key().ToString();
      if (!prev.empty() && k <= prev) violations++;
      prev = k;
    }
    if (!it->status().ok()) violations++;
  }
  writer.join();
  EXPECT_EQ(violations.load(), 0);
}

// WriteThread alone, its ticket count wrapping past 2^32 mid-run: every writer is finished
// exactly once, in a group it was queued in, and groups follow queue order; with queued writers
// sleeping at once, spinning briefly, and spinning for longer than a group takes.
// Pipelined, leaders leave the WAL stage before they finish their groups, which finish in queue
// order, and later writers lead meanwhile.
class WriteThreadConcurrentTest : public testing::TestWithParam<std::tuple<int, bool>> {};

INSTANTIATE_TEST_SUITE_P(SpinMicrosPipelined, WriteThreadConcurrentTest,
                         testing::Combine(testing::Values(0, 20, 1000), testing::Bool()));

TEST_P(WriteThreadConcurrentTest, EveryWriterFinishesOnceAcrossTheTicketWrap) {
  constexpr int kThreads = 8;
  constexpr int kWrites = 300;
  const int spin_us = std::get<0>(GetParam());
  const bool pipelined = std::get<1>(GetParam());
  WriteThread write_thread(1 << 20, std::chrono::microseconds(spin_us),
                           /*first_ticket=*/UINT32_MAX - 1000, pipelined);
  std::atomic<int> finished{0};
  // Groups in the memtable stage now, and leaders that took over while one was.
  std::atomic<int> inserting{0};
  std::atomic<int> overlapped{0};
  Mutex order_mu;
  bool first_group = true;
  uint32_t last_finished = 0;  // the last ticket of the last group finished
  std::atomic<int> led{0};
  std::atomic<int> members{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; t++) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < kWrites; i++) {
        WriteBatch batch;
        batch.Put("k" + std::to_string(t), "v" + std::to_string(i)).PermitUncheckedError();
        WriteOptions wo;
        wo.sync = i % 3 == 0;
        WriteThread::Writer w(wo, &batch);
        if (!write_thread.JoinBatchGroup(&w)) {
          if (!w.status.IsIOError()) errors++;  // the leaders below finish with IOError
          finished++;
          continue;
        }
        if (inserting.load() > 0) overlapped++;
        WriteThread::Group group;
        write_thread.BuildBatchGroup(&w, &group);
        if (group.members.front() != &w) errors++;
        for (size_t m = 1; m < group.members.size(); m++) {
          // Queue order: tickets follow one another (wrapping).
          if (group.members[m]->ticket != group.members[m - 1]->ticket + 1) errors++;
        }
        members += static_cast<int>(group.members.size());
        led++;
        if (pipelined) {
          inserting++;
          write_thread.ExitWalStage(&group);
          write_thread.WaitForEarlierGroups(&w);
          // A memtable insert of some microseconds, now and then.
          if (i % 4 == 0) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(30);
            while (std::chrono::steady_clock::now() < until) {
            }
          }
        }
        {
          MutexLock l(&order_mu);
          if (!first_group && group.members.front()->ticket != last_finished + 1) errors++;
          first_group = false;
          last_finished = group.members.back()->ticket;
        }
        if (pipelined) inserting--;
        write_thread.ExitAsBatchGroupLeader(group, Status::IOError("finished"));
        if (!w.status.IsIOError()) errors++;
        finished++;
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(finished.load(), kThreads * kWrites);
  EXPECT_EQ(members.load(), kThreads * kWrites);  // each writer in exactly one group
  EXPECT_GT(led.load(), 0);
  EXPECT_EQ(write_thread.spinners(), 0u);
  if (pipelined) {
    EXPECT_GT(overlapped.load(), 0);
  }
  if (spin_us == 0) {
    EXPECT_EQ(write_thread.spins_that_saw_the_change(), 0u);
  }
}

// One write through write_thread, as a DB writer does it (leaders finish at once).
void WriteThrough(WriteThread* write_thread) {
  WriteBatch batch;
  batch.Put("k", "v").PermitUncheckedError();
  WriteThread::Writer w(WriteOptions(), &batch);
  if (!write_thread->JoinBatchGroup(&w)) return;
  WriteThread::Group group;
  write_thread->BuildBatchGroup(&w, &group);
  write_thread->ExitAsBatchGroupLeader(group, Status::OK());
}

// A leader holds its group for hold (stalling first when stalls) while three writers queue
// behind it and write through; returns once all are done.
void QueueBehindALeader(WriteThread* write_thread, std::chrono::milliseconds hold, bool stalls) {
  std::atomic<bool> leading{false};
  std::thread leader([&] {
    WriteBatch batch;
    batch.Put("k", "v").PermitUncheckedError();
    WriteThread::Writer w(WriteOptions(), &batch);
    ASSERT_TRUE(write_thread->JoinBatchGroup(&w));
    WriteThread::Group group;
    write_thread->BuildBatchGroup(&w, &group);
    if (stalls) write_thread->LeaderStalls();
    leading = true;
    std::this_thread::sleep_for(hold);
    write_thread->ExitAsBatchGroupLeader(group, Status::OK());
  });
  while (!leading) std::this_thread::yield();
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) threads.emplace_back([&] { WriteThrough(write_thread); });
  for (auto& th : threads) th.join();
  leader.join();
}

// Writers queued behind a leader that holds its group for 200 ms (without a stall): one of them
// spins (bound 2 s) and sees the group finish (a writer that queued late may spin too); none is
// left counted as spinning.
TEST(WriteThreadSpinConcurrentTest, QueuedWritersSpinWhenNoGroupSyncs) {
  WriteThread write_thread(1 << 20, std::chrono::seconds(2));
  QueueBehindALeader(&write_thread, std::chrono::milliseconds(200), /*stalls=*/false);
  EXPECT_GE(write_thread.spins_that_saw_the_change(), 1u);
  EXPECT_EQ(write_thread.spinners(), 0u);
}

// A leader that stalls (holding its group for 500 ms) makes the writers queued behind it sleep
// at once: with a spin bound of 2 s, a writer that spun through the stall would see it end.
TEST(WriteThreadSpinConcurrentTest, WritersDoNotSpinThroughAStall) {
  WriteThread write_thread(1 << 20, std::chrono::seconds(2));
  QueueBehindALeader(&write_thread, std::chrono::milliseconds(500), /*stalls=*/true);
  EXPECT_EQ(write_thread.spins_that_saw_the_change(), 0u);
  EXPECT_EQ(write_thread.spinners(), 0u);
}

// A writer that leads a group of its own and holds it until another writer has queued behind
// it; *leading turns true once it leads.
std::thread LeadUntilAnotherQueues(WriteThread* write_thread, std::atomic<bool>* leading) {
  return std::thread([=] {
    WriteBatch batch;
    batch.Put("a", "v").PermitUncheckedError();
    WriteThread::Writer w(WriteOptions(), &batch);
    ASSERT_TRUE(write_thread->JoinBatchGroup(&w));
    WriteThread::Group group;
    write_thread->BuildBatchGroup(&w, &group);
    *leading = true;
    while (write_thread->queued() < 2) std::this_thread::yield();
    write_thread->ExitAsBatchGroupLeader(group, Status::OK());
  });
}

// A writer that queues behind a leader holding its group (LeadAndHold), then leads the next
// group; *group_size: how many writers that group took.
std::thread QueueThenLead(WriteThread* write_thread, bool sync, std::atomic<size_t>* group_size) {
  return std::thread([=] {
    WriteBatch batch;
    batch.Put("b", "v").PermitUncheckedError();
    WriteOptions wo;
    wo.sync = sync;
    WriteThread::Writer w(wo, &batch);
    ASSERT_TRUE(write_thread->JoinBatchGroup(&w));
    WriteThread::Group group;
    write_thread->BuildBatchGroup(&w, &group);
    *group_size = group.members.size();
    write_thread->ExitAsBatchGroupLeader(group, Status::OK());
  });
}

// A companion for a lone leader (WriteThread): A holds its group until B queues; once A exits,
// B leads alone right after a group that left a writer queued, so it spins (for up to 200 ms
// here) for another writer. C, queued once B spins, joins B's group; without C, B spins once,
// finds nobody, and writes a group of one.
TEST(WriteThreadSpinConcurrentTest, ALoneLeaderSpinsForACompanion) {
  for (const bool companion_comes : {true, false}) {
    SCOPED_TRACE(companion_comes);
    WriteThread write_thread(1 << 20, std::chrono::seconds(1));
    std::atomic<bool> leading{false};
    std::thread a = LeadUntilAnotherQueues(&write_thread, &leading);
    while (!leading) std::this_thread::yield();
    std::atomic<size_t> b_group_size{0};
    std::thread b = QueueThenLead(&write_thread, /*sync=*/false, &b_group_size);
    a.join();
    if (companion_comes) {
      while (write_thread.companion_spins() == 0) std::this_thread::yield();
      WriteThrough(&write_thread);
    }
    b.join();
    EXPECT_EQ(write_thread.companion_spins(), 1u);
    EXPECT_EQ(write_thread.companions_found(), companion_comes ? 1u : 0u);
    EXPECT_EQ(b_group_size.load(), companion_comes ? 2u : 1u);
    // A writer alone from now on: after B's group of two the first one spins once more (in
    // vain); after a group of one that left nobody queued, none spins.
    for (int i = 0; i < 50; i++) WriteThrough(&write_thread);
    EXPECT_EQ(write_thread.companion_spins(), companion_comes ? 2u : 1u);
    EXPECT_EQ(write_thread.companions_found(), companion_comes ? 1u : 0u);
  }
}

// A synchronous leader never spins for a companion (it gathers before its fsync instead), nor
// does any leader with spinning off.
TEST(WriteThreadSpinConcurrentTest, NoCompanionSpinForSyncLeadersOrWithoutSpinning) {
  for (const int spin_ms : {0, 1000}) {
    WriteThread write_thread(1 << 20, std::chrono::milliseconds(spin_ms));
    std::atomic<bool> leading{false};
    std::thread a = LeadUntilAnotherQueues(&write_thread, &leading);
    while (!leading) std::this_thread::yield();
    std::atomic<size_t> b_group_size{0};
    // With spinning on, the leader syncs.
    std::thread b = QueueThenLead(&write_thread, /*sync=*/spin_ms != 0, &b_group_size);
    a.join();
    b.join();
    EXPECT_EQ(write_thread.companion_spins(), 0u);
    EXPECT_EQ(b_group_size.load(), 1u);
  }
}

// Gathering before a sync (WriteThread): with a slow device and eight threads writing
// synchronously, a sync leader waits for the writers of the last group, so nearly every fsync
// covers all eight. Without it, groups alternate between the writers that arrived during the
// previous fsync and the rest, about two fsyncs per eight writes. (Not a "Concurrent" suite:
// under ThreadSanitizer's slowdown the writers may miss the gathering bound; the suite above
// runs the same code there.)
TEST(DBSyncGroupTest, SyncLeaderGathersTheWritersOfTheLastGroup) {
  constexpr int kThreads = 8;
  constexpr int kWrites = 25;
  auto fs = std::make_shared<FaultInjectionFileSystem>();
  fs->SetSyncLatency(std::chrono::milliseconds(5));
  Options options;
  options.create_if_missing = true;
  options.file_system = fs;
  options.statistics = CreateDBStatistics();
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, "/db", &db).ok());
  ASSERT_EQ(RunSyncWriters(db.get(), kThreads, kWrites), 0);
  const uint64_t syncs = options.statistics->getTickerCount(WAL_FILE_SYNCED);
  RecordProperty("fsyncs", std::to_string(syncs));
  // kWrites rounds of kThreads writers, plus a few groups that missed the bound.
  EXPECT_LE(syncs, uint64_t{kWrites} * 3 / 2) << "fsyncs for " << kThreads * kWrites << " writes";
  ASSERT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace shale::test
