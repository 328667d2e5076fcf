// The column family engine: separate keyspaces with their own memtables, tables and options in
// one DB; batches across families; one WAL kept until every family has flushed what it holds,
// and replayed per family; families that must be named at open; dropping.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/column_family.h"
#include "shale/comparator.h"
#include "shale/file_system.h"
#include "shale/merge_operator.h"
#include "src/base/filename.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

// Bytewise order reversed.
class ReverseComparator final : public Comparator {
 public:
  const char* Name() const override { return "test.ReverseBytewise"; }
  int Compare(const Slice& a, const Slice& b) const override {
    return -BytewiseComparator()->Compare(a, b);
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

class DBColumnFamilyEngineTest : public DBTestBase {
 protected:
  using Handles = std::vector<std::unique_ptr<ColumnFamilyHandle>>;

  void TearDown() override {
    handles_.clear();
    Close();
  }
  // Creates families named names (each with options), appended to handles_.
  void Create(const std::vector<std::string>& names, const ColumnFamilyOptions& options) {
    for (const std::string& n : names) {
      std::unique_ptr<ColumnFamilyHandle> h;
      Status s = db_->CreateColumnFamily(options, n, &h);
      ASSERT_TRUE(s.ok()) << s.ToString();
      handles_.push_back(std::move(h));
    }
  }
  // Closes and opens with descriptors for names (options_ for each unless in per_family);
  // handles_ gets one handle per name.
  Status ReopenFamilies(const std::vector<std::string>& names,
                        const std::map<std::string, ColumnFamilyOptions>& per_family = {}) {
    handles_.clear();
    Close();
    std::vector<ColumnFamilyDescriptor> descriptors;
    for (const std::string& n : names) {
      auto it = per_family.find(n);
      descriptors.emplace_back(n, it != per_family.end() ? it->second : options_);
    }
    return DB::Open(options_, dbname_, descriptors, &handles_, &db_);
  }
  std::string Get(ColumnFamilyHandle* h, const std::string& k) {
    std::string v;
    Status s = db_->Get(ReadOptions(), h, k, &v);
    return s.IsNotFound() ? "NOT_FOUND" : s.ok() ? v : s.ToString();
  }
  std::string Scan(ColumnFamilyHandle* h) {
    std::string out;
    auto it = db_->NewIterator(ReadOptions(), h);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + " ";
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return out;
  }
  std::string Property(ColumnFamilyHandle* h, const std::string& name) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(h, name, &v)) << name;
    return v;
  }
  int CountFiles(FileType wanted) {
    std::vector<std::string> children;
    EXPECT_TRUE(FileSystem::Default()->GetChildren(dbname_, &children).ok());
    int n = 0;
    for (const std::string& c : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(c, &number, &type) && type == wanted) n++;
    }
    return n;
  }

  Handles handles_;
};

// The same key in three families holds three values, through memtables, flushes of one
// family, compaction of another, and reopen.
TEST_F(DBColumnFamilyEngineTest, FamiliesAreSeparateKeyspaces) {
  Open();
  Create({"a", "b"}, options_);
  ColumnFamilyHandle* def = db_->DefaultColumnFamily();
  ColumnFamilyHandle* a = handles_[0].get();
  ColumnFamilyHandle* b = handles_[1].get();
  for (int i = 0; i < 20; i++) {
    const std::string k = "k" + std::to_string(i);
    ASSERT_TRUE(db_->Put(WriteOptions(), def, k, "d" + std::to_string(i)).ok());
    ASSERT_TRUE(db_->Put(WriteOptions(), a, k, "a" + std::to_string(i)).ok());
    if (i % 2 == 0) {
      ASSERT_TRUE(db_->Put(WriteOptions(), b, k, "b" + std::to_string(i)).ok());
    }
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), a, "k3").ok());
  EXPECT_EQ(Get(def, "k3"), "d3");
  EXPECT_EQ(Get(a, "k3"), "NOT_FOUND");
  EXPECT_EQ(Get(b, "k3"), "NOT_FOUND");
  EXPECT_EQ(Get(b, "k4"), "b4");
  // Flushing one family leaves the others' memtables alone.
  ASSERT_TRUE(db_->Flush(FlushOptions(), a).ok());
  EXPECT_EQ(Property(a, "shale.num-files-at-level0"), "1");
  EXPECT_EQ(Property(def, "shale.num-files-at-level0"), "0");
  EXPECT_EQ(Property(b, "shale.num-entries-active-mem-table"), "10");
  EXPECT_EQ(Property(a, "shale.num-entries-active-mem-table"), "0");
  ASSERT_TRUE(db_->Flush(FlushOptions(), {def, b}).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), b, nullptr, nullptr).ok());
  EXPECT_EQ(Property(b, "shale.num-files-at-level0"), "0");
  EXPECT_EQ(Property(def, "shale.num-files-at-level0"), "1");
  const std::string scan_b = Scan(b);
  EXPECT_EQ(scan_b.substr(0, 20), "k0=b0 k10=b10 k12=b1");
  // MultiGet with a handle per key reads each key in its family.
  std::vector<ColumnFamilyHandle*> families = {def, a, b, a};
  std::vector<Slice> keys = {"k5", "k5", "k5", "k3"};
  std::vector<std::string> values;
  std::vector<Status> statuses = db_->MultiGet(ReadOptions(), families, keys, &values);
  EXPECT_EQ(values[0], "d5");
  EXPECT_EQ(values[1], "a5");
  EXPECT_TRUE(statuses[2].IsNotFound());
  EXPECT_TRUE(statuses[3].IsNotFound());

  ASSERT_TRUE(ReopenFamilies({"default", "a", "b"}).ok());
  def = db_->DefaultColumnFamily();
  EXPECT_EQ(Get(handles_[0].get(), "k5"), "d5");
  EXPECT_EQ(Get(handles_[1].get(), "k5"), "a5");
  EXPECT_EQ(Get(handles_[1].get(), "k3"), "NOT_FOUND");
  EXPECT_EQ(Scan(handles_[2].get()), scan_b);
  EXPECT_EQ(handles_[2]->GetID(), 2u);
}

// One batch writes to several families at one sequence range: all of it or none is seen, by
// NewIterators at one sequence, and after a reopen that replays the WAL.
TEST_F(DBColumnFamilyEngineTest, BatchesSpanFamilies) {
  Open();
  Create({"lock", "write"}, options_);
  ColumnFamilyHandle* lock = handles_[0].get();
  ColumnFamilyHandle* write = handles_[1].get();
  const Snapshot* before = db_->GetSnapshot();
  WriteBatch batch;
  ASSERT_TRUE(batch.Put(lock, "row1", "L").ok());
  ASSERT_TRUE(batch.Put(write, "row1", "W").ok());
  ASSERT_TRUE(batch.Put("row1", "D").ok());
  ASSERT_TRUE(batch.Delete(lock, "row0").ok());
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  ReadOptions at_before;
  at_before.snapshot = before;
  std::vector<std::unique_ptr<Iterator>> its;
  ASSERT_TRUE(db_->NewIterators(at_before, {lock, write}, &its).ok());
  for (auto& it : its) {
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
  }
  ASSERT_TRUE(db_->NewIterators(ReadOptions(), {lock, write}, &its).ok());
  for (auto& it : its) {
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "row1");
  }
  its.clear();
  db_->ReleaseSnapshot(before);
  ASSERT_TRUE(ReopenFamilies({"default", "lock", "write"}).ok());
  EXPECT_EQ(Get(handles_[1].get(), "row1"), "L");
  EXPECT_EQ(Get(handles_[2].get(), "row1"), "W");
  EXPECT_EQ(Get(handles_[0].get(), "row1"), "D");
}

// Every family the DB holds must be opened; descriptors of families it does not hold fail the
// open unless create_missing_column_families; each names the families.
TEST_F(DBColumnFamilyEngineTest, OpenNamesMissingAndUnknownFamilies) {
  Open();
  Create({"a", "b"}, options_);
  ASSERT_TRUE(db_->Put(WriteOptions(), handles_[1].get(), "k", "v").ok());
  handles_.clear();
  Close();
  Status s = TryOpen();  // no descriptors: the default family alone
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("column families not opened: a, b"), std::string::npos)
      << s.ToString();
  s = ReopenFamilies({"default", "b"});
  EXPECT_NE(s.ToString().find("column families not opened: a"), std::string::npos) << s.ToString();
  EXPECT_TRUE(handles_.empty());
  s = ReopenFamilies({"default", "a", "b", "x", "y"});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("column families not found: x, y"), std::string::npos)
      << s.ToString();
  options_.create_missing_column_families = true;
  ASSERT_TRUE(ReopenFamilies({"default", "a", "b", "x"}).ok());
  EXPECT_EQ(handles_[3]->GetID(), 3u);
  EXPECT_EQ(Get(handles_[2].get(), "k"), "v");
  ASSERT_TRUE(db_->Put(WriteOptions(), handles_[3].get(), "k", "x").ok());
  options_.create_missing_column_families = false;
  ASSERT_TRUE(ReopenFamilies({"x", "default", "b", "a"}).ok());  // any order
  EXPECT_EQ(Get(handles_[0].get(), "k"), "x");
  EXPECT_EQ(handles_[0]->GetName(), "x");
}

// A family keeps the comparator it was created with: opening it with another is refused,
// naming the family; its own order holds in its tables and iterators.
TEST_F(DBColumnFamilyEngineTest, FamilyComparatorIsChecked) {
  ReverseComparator reverse;
  ColumnFamilyOptions reversed = options_;
  reversed.comparator = &reverse;
  Open();
  Create({"rev"}, reversed);
  for (const char* k : {"a", "c", "b"}) {
    ASSERT_TRUE(db_->Put(WriteOptions(), handles_[0].get(), k, k).ok());
    ASSERT_TRUE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), k, k).ok());
  }
  EXPECT_EQ(Scan(handles_[0].get()), "c=c b=b a=a ");
  ASSERT_TRUE(db_->Flush(FlushOptions(), handles_[0].get()).ok());
  EXPECT_EQ(Scan(handles_[0].get()), "c=c b=b a=a ");
  EXPECT_EQ(Scan(db_->DefaultColumnFamily()), "a=a b=b c=c ");
  Status s = ReopenFamilies({"default", "rev"});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("column family rev was created with comparator test.ReverseBytewise"),
            std::string::npos)
      << s.ToString();
  ASSERT_TRUE(ReopenFamilies({"default", "rev"}, {{"rev", reversed}}).ok());
  EXPECT_EQ(Scan(handles_[1].get()), "c=c b=b a=a ");
  EXPECT_EQ(handles_[1]->GetComparator(), &reverse);
}

// Per-family options: a merge operator in one family only; write buffers that fill apart.
TEST_F(DBColumnFamilyEngineTest, OptionsArePerFamily) {
  ColumnFamilyOptions merging = options_;
  merging.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  Create({"m"}, merging);
  ColumnFamilyHandle* m = handles_[0].get();
  ASSERT_TRUE(db_->Merge(WriteOptions(), m, "k", "x").ok());
  ASSERT_TRUE(db_->Merge(WriteOptions(), m, "k", "y").ok());
  EXPECT_EQ(Get(m, "k"), "x,y");
  Status s = db_->Merge(WriteOptions(), db_->DefaultColumnFamily(), "k", "x");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  WriteBatch batch;
  ASSERT_TRUE(batch.Merge(m, "k", "z").ok());
  ASSERT_TRUE(batch.Merge("k", "z").ok());  // the default family has no operator
  s = db_->Write(WriteOptions(), &batch);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(Get(m, "k"), "x,y");
  // The operands in the WAL are replayed into family m: without its operator the open
  // refuses; with it they survive.
  s = ReopenFamilies({"default", "m"});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("merge operands"), std::string::npos) << s.ToString();
  ASSERT_TRUE(ReopenFamilies({"default", "m"}, {{"m", merging}}).ok());
  EXPECT_EQ(Get(handles_[1].get(), "k"), "x,y");
}

// One WAL for every family: a log goes once every family has flushed what it held in it. A
// family with nothing written never keeps a log; one with unflushed data keeps its log, and
// after a reopen its data comes back from it once, while a family that had flushed past that
// log does not get its data twice.
TEST_F(DBColumnFamilyEngineTest, WalIsKeptUntilEveryFamilyFlushed) {
  Open();
  Create({"idle", "slow"}, options_);
  ColumnFamilyHandle* def = db_->DefaultColumnFamily();
  ColumnFamilyHandle* slow = handles_[1].get();
  for (int round = 0; round < 5; round++) {
    ASSERT_TRUE(Put("d" + std::to_string(round), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), def).ok());
  }
  EXPECT_EQ(CountFiles(FileType::kLog), 1);  // the idle family holds none back
  ASSERT_TRUE(db_->Put(WriteOptions(), slow, "s", "1").ok());
  for (int round = 5; round < 10; round++) {
    ASSERT_TRUE(Put("d" + std::to_string(round), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), def).ok());
  }
  EXPECT_GE(CountFiles(FileType::kLog), 5);  // from slow's write on
  ASSERT_TRUE(Put("late", "v").ok());        // in the default memtable only
  EXPECT_EQ(Property(def, "shale.estimate-num-keys"), "11");
  ASSERT_TRUE(ReopenFamilies({"default", "idle", "slow"}).ok());
  def = db_->DefaultColumnFamily();
  EXPECT_EQ(Get(handles_[2].get(), "s"), "1");
  EXPECT_EQ(Get(def, "late"), "v");
  // The default family's records in the kept logs were in its tables: not replayed again.
  EXPECT_EQ(Property(def, "shale.estimate-num-keys"), "11");
  EXPECT_EQ(CountFiles(FileType::kLog), 1);  // recovery flushed everything
  ASSERT_TRUE(db_->Put(WriteOptions(), handles_[2].get(), "s", "2").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), handles_[2].get()).ok());
  EXPECT_EQ(CountFiles(FileType::kLog), 1);
}

// The same with the recovered data kept in the memtables (avoid_flush_during_recovery): the
// logs stay until the families flush, and a second reopen still finds every write once.
TEST_F(DBColumnFamilyEngineTest, WalReplayPerFamilyWithoutRecoveryFlush) {
  options_.avoid_flush_during_recovery = true;
  Open();
  Create({"slow"}, options_);
  ASSERT_TRUE(db_->Put(WriteOptions(), handles_[0].get(), "s", "1").ok());
  for (int i = 0; i < 4; i++) {
    ASSERT_TRUE(Put("d" + std::to_string(i), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions(), db_->DefaultColumnFamily()).ok());
  }
  ASSERT_TRUE(Put("late", "v").ok());
  for (int reopen = 0; reopen < 2; reopen++) {
    ASSERT_TRUE(ReopenFamilies({"default", "slow"}).ok());
    EXPECT_EQ(Get(handles_[1].get(), "s"), "1");
    EXPECT_EQ(Get(handles_[0].get(), "late"), "v");
    EXPECT_EQ(Property(handles_[0].get(), "shale.estimate-num-keys"), "5");
    EXPECT_EQ(Property(handles_[1].get(), "shale.estimate-num-keys"), "1");
  }
}

// A family written once and then left alone would keep every later WAL; past
// max_total_wal_size the next write switches its memtable so that a flush lets the old WALs go.
// Without the bound (a large one) they pile up, so the test sees the difference.
TEST_F(DBColumnFamilyEngineTest, MaxTotalWalSizeFlushesFamiliesHoldingTheOldestLog) {
  options_.write_buffer_size = 64 << 10;
  options_.max_write_buffer_number = 4;
  options_.level0_file_num_compaction_trigger = 100;
  options_.level0_slowdown_writes_trigger = 100;
  options_.level0_stop_writes_trigger = 100;
  const std::string value(1000, 'x');
  for (const uint64_t bound : {uint64_t{1} << 40, uint64_t{256} << 10}) {
    SCOPED_TRACE(bound);
    options_.max_total_wal_size = bound;
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    Open();
    Create({"light"}, options_);
    ColumnFamilyHandle* light = handles_[0].get();
    ASSERT_TRUE(db_->Put(WriteOptions(), light, "once", "1").ok());
    int most_logs = 0;
    for (int i = 0; i < 3000; i++) {  // ~3 MB: ~45 memtables of the default family
      ASSERT_TRUE(Put("k" + std::to_string(i), value).ok());
      if (i % 100 == 0) {
        ASSERT_TRUE(db_->WaitForCompact().ok());
        most_logs = std::max(most_logs, CountFiles(FileType::kLog));
      }
    }
    if (bound > (uint64_t{1} << 30)) {
      EXPECT_GE(most_logs, 30);
      EXPECT_EQ(Property(light, "shale.num-files-at-level0"), "0");
    } else {
      // 256 KiB of logs of 64 KiB memtables, plus the one being written.
      EXPECT_LE(most_logs, 7);
      EXPECT_EQ(Property(light, "shale.num-files-at-level0"), "1");
    }
    ASSERT_TRUE(ReopenFamilies({"default", "light"}).ok());
    EXPECT_EQ(Get(handles_[1].get(), "once"), "1");
    EXPECT_EQ(Get(db_->DefaultColumnFamily(), "k2999"), value);
    EXPECT_EQ(Property(db_->DefaultColumnFamily(), "shale.estimate-num-keys"), "3000");
    handles_.clear();
  }
}

// A dropped family refuses reads and writes through its handles and does not come back after
// a reopen; an iterator opened before the drop keeps reading; its files go once nothing holds
// them; records of it still in the WAL are skipped at recovery.
TEST_F(DBColumnFamilyEngineTest, DroppedFamily) {
  Open();
  Create({"gone"}, options_);
  ColumnFamilyHandle* gone = handles_[0].get();
  for (int i = 0; i < 10; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), gone, "k" + std::to_string(i), "v").ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions(), gone).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), gone, "wal-only", "v").ok());  // in the WAL and memtable
  ASSERT_TRUE(Put("keep", "v").ok());
  const int tables_before = CountFiles(FileType::kTable);
  EXPECT_EQ(tables_before, 1);
  auto it = db_->NewIterator(ReadOptions(), gone);
  ASSERT_TRUE(db_->DropColumnFamily(gone).ok());
  Status s = db_->Put(WriteOptions(), gone, "k", "v");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("was dropped"), std::string::npos) << s.ToString();
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), gone, "k1", &v).IsInvalidArgument());
  EXPECT_FALSE(db_->GetProperty(gone, "shale.stats", &v));
  WriteBatch batch;
  ASSERT_TRUE(batch.Put(gone, "k", "v").ok());
  EXPECT_TRUE(db_->Write(WriteOptions(), &batch).IsInvalidArgument());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_EQ(n, 11);
  EXPECT_EQ(CountFiles(FileType::kTable), 1);  // the iterator holds it
  it.reset();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // a pass of obsolete-file deletion
  EXPECT_EQ(CountFiles(FileType::kTable), 1);    // the default family's, not the dropped one's
  ASSERT_TRUE(ReopenFamilies({"default"}).ok());
  EXPECT_EQ(Get(db_->DefaultColumnFamily(), "keep"), "v");
  std::vector<std::string> names;
  ASSERT_TRUE(DB::ListColumnFamilies(options_, dbname_, &names).ok());
  EXPECT_EQ(names, std::vector<std::string>{"default"});
  s = ReopenFamilies({"default", "gone"});
  EXPECT_NE(s.ToString().find("column families not found: gone"), std::string::npos)
      << s.ToString();
}

// A drop whose records are still in the WAL (nothing flushed) recovers without them, in every
// recovery ending: flushed, kept in the memtables, or copied into a new log.
TEST_F(DBColumnFamilyEngineTest, DroppedFamilyRecordsInTheWalAreSkipped) {
  for (bool avoid_flush : {false, true}) {
    SCOPED_TRACE(avoid_flush);
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    options_.avoid_flush_during_recovery = avoid_flush;
    Open();
    Create({"gone", "kept"}, options_);
    WriteBatch batch;
    ASSERT_TRUE(batch.Put(handles_[0].get(), "k", "gone").ok());
    ASSERT_TRUE(batch.Put(handles_[1].get(), "k", "kept").ok());
    ASSERT_TRUE(batch.Put("k", "default").ok());
    ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    ASSERT_TRUE(db_->DropColumnFamily(handles_[0].get()).ok());
    for (int reopen = 0; reopen < 2; reopen++) {
      ASSERT_TRUE(ReopenFamilies({"default", "kept"}).ok());
      EXPECT_EQ(Get(handles_[0].get(), "k"), "default");
      EXPECT_EQ(Get(handles_[1].get(), "k"), "kept");
    }
    handles_.clear();
    Close();
  }
}

// Batches across two families written without the WAL: what survives a reopen (which loses
// the memtables) is what the flushes recorded. With atomic_flush the two families are
// flushed together, so every batch is in both or in neither; without it the family whose
// memtable fills flushes alone and holds batches the other lacks.
TEST_F(DBColumnFamilyEngineTest, AtomicFlushKeepsFamiliesAtOnePoint) {
  for (bool atomic : {true, false}) {
    SCOPED_TRACE(atomic);
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
    options_.atomic_flush = atomic;
    Open();
    ColumnFamilyOptions small = options_;
    small.write_buffer_size = 64 << 10;
    Create({"small"}, small);
    Create({"large"}, options_);
    WriteOptions no_wal;
    no_wal.disableWAL = true;
    const std::string value(200, 'v');
    for (int i = 0; i < 2000; i++) {
      WriteBatch batch;
      const std::string k = "k" + std::to_string(100000 + i);
      ASSERT_TRUE(batch.Put(handles_[0].get(), k, value).ok());
      ASSERT_TRUE(batch.Put(handles_[1].get(), k, value).ok());
      ASSERT_TRUE(db_->Write(no_wal, &batch).ok());
    }
    ASSERT_TRUE(db_->WaitForCompact().ok());
    ASSERT_TRUE(ReopenFamilies({"default", "small", "large"}, {{"small", small}}).ok());
    int in_small = 0, in_large = 0, apart = 0;
    for (int i = 0; i < 2000; i++) {
      const std::string k = "k" + std::to_string(100000 + i);
      const bool s = Get(handles_[1].get(), k) == value;
      const bool l = Get(handles_[2].get(), k) == value;
      in_small += s;
      in_large += l;
      apart += s != l;
    }
    EXPECT_GT(in_small, 0);  // the small family's memtable filled: something was flushed
    if (atomic) {
      EXPECT_EQ(apart, 0) << in_small << " in small, " << in_large << " in large";
      EXPECT_EQ(in_small, in_large);
    } else {
      EXPECT_GT(apart, 0);
      EXPECT_EQ(in_large, 0);
    }
    handles_.clear();
    Close();
  }
}

// Properties answer for the family of the handle; shale.stats names it.
TEST_F(DBColumnFamilyEngineTest, PropertiesArePerFamily) {
  Open();
  Create({"p"}, options_);
  ASSERT_TRUE(db_->Put(WriteOptions(), handles_[0].get(), "k", "v").ok());
  EXPECT_EQ(Property(handles_[0].get(), "shale.num-entries-active-mem-table"), "1");
  EXPECT_EQ(Property(db_->DefaultColumnFamily(), "shale.num-entries-active-mem-table"), "0");
  EXPECT_NE(Property(handles_[0].get(), "shale.stats").find("Compaction Stats [p]"),
            std::string::npos);
  EXPECT_NE(Property(handles_[0].get(), "shale.write-stall").find("reason: none"),
            std::string::npos);
}

// Writers of batches across families, readers of every family, and a thread that creates,
// writes, reads and drops families, all at once, with small memtables so that flushes and
// compactions of every family run meanwhile. Each writer's last batch is in every family
// afterwards, also after a reopen. (Run under TSan in CI.)
TEST_F(DBColumnFamilyEngineTest, ConcurrentWritesReadsCreatesAndDrops) {
  options_.write_buffer_size = 32 << 10;
  options_.target_file_size_base = 64 << 10;
  options_.max_bytes_for_level_base = 256 << 10;
  options_.max_background_jobs = 4;
  Open();
  Create({"a", "b"}, options_);
  std::vector<ColumnFamilyHandle*> families = {db_->DefaultColumnFamily(), handles_[0].get(),
                                               handles_[1].get()};
  constexpr int kWriters = 3, kRounds = 400;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kRounds && !failed; i++) {
        WriteBatch batch;
        const std::string k = "w" + std::to_string(w) + "-" + std::to_string(i % 50);
        const std::string v = std::to_string(i) + std::string(100, 'x');
        for (ColumnFamilyHandle* f : families) {
          if (!batch.Put(f, k, v).ok()) failed = true;
        }
        if (!db_->Write(WriteOptions(), &batch).ok()) failed = true;
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 2000 && !failed; i++) {
      ColumnFamilyHandle* f = families[i % families.size()];
      std::string v;
      Status s = db_->Get(ReadOptions(), f, "w0-" + std::to_string(i % 50), &v);
      if (!s.ok() && !s.IsNotFound()) failed = true;
      if (i % 100 == 0) {
        std::vector<std::unique_ptr<Iterator>> its;
        if (!db_->NewIterators(ReadOptions(), families, &its).ok()) failed = true;
        for (auto& it : its) {
          for (it->SeekToFirst(); it->Valid(); it->Next()) {
          }
          if (!it->status().ok()) failed = true;
        }
      }
    }
  });
  threads.emplace_back([&] {
    for (int i = 0; i < 20 && !failed; i++) {
      std::unique_ptr<ColumnFamilyHandle> h;
      if (!db_->CreateColumnFamily(options_, "temp" + std::to_string(i), &h).ok()) {
        failed = true;
        break;
      }
      for (int j = 0; j < 200; j++) {
        if (!db_->Put(WriteOptions(), h.get(), "t" + std::to_string(j), std::string(200, 't'))
                 .ok()) {
          failed = true;
        }
      }
      auto it = db_->NewIterator(ReadOptions(), h.get());
      if (!db_->DropColumnFamily(h.get()).ok()) failed = true;
      int n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
      if (n != 200) failed = true;  // the iterator outlives the drop
    }
  });
  for (std::thread& t : threads) t.join();
  ASSERT_FALSE(failed);
  ASSERT_TRUE(db_->WaitForCompact().ok());
  auto check = [&](const std::vector<ColumnFamilyHandle*>& fs) {
    for (int w = 0; w < kWriters; w++) {
      for (int i = kRounds - 50; i < kRounds; i++) {
        const std::string k = "w" + std::to_string(w) + "-" + std::to_string(i % 50);
        const std::string v = std::to_string(i) + std::string(100, 'x');
        for (ColumnFamilyHandle* f : fs) ASSERT_EQ(Get(f, k), v) << f->GetName() << " " << k;
      }
    }
  };
  check(families);
  ASSERT_TRUE(ReopenFamilies({"default", "a", "b"}).ok());
  check({handles_[0].get(), handles_[1].get(), handles_[2].get()});
  std::vector<std::string> names;
  ASSERT_TRUE(DB::ListColumnFamilies(options_, dbname_, &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"default", "a", "b"}));
}

}  // namespace
}  // namespace shale::test
