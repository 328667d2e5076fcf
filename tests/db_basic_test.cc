// DB-level behaviour on the POSIX file system: open semantics, reads and writes, merges,
// snapshots, iterators, recovery across reopen, and the API's error contract.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <limits>

#include "shale/statistics.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

class DBBasicTest : public DBTestBase {};

TEST_F(DBBasicTest, OpenMissingWithoutCreateIsInvalidArgument) {
  options_.create_if_missing = false;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(db_, nullptr);
}

// Options is DBOptions plus ColumnFamilyOptions, as in RocksDB: assembled from the two parts,
// each part's fields reach the DB.
TEST_F(DBBasicTest, OptionsAssembleFromDBAndColumnFamilyParts) {
  DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.max_background_jobs = 3;
  ColumnFamilyOptions cf_options;
  cf_options.block_size = 0;  // invalid: proves the column family part is the one used
  options_ = Options(db_options, cf_options);
  EXPECT_EQ(options_.max_background_jobs, 3);
  Status s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("block_size"), std::string::npos) << s.ToString();
  cf_options.block_size = 512;
  cf_options.write_buffer_size = 4096;
  options_ = Options(db_options, cf_options);
  Open();
  for (int i = 0; i < 200; i++)
    ASSERT_TRUE(Put("key" + std::to_string(i), std::string(64, 'v')).ok());
  ASSERT_TRUE(db_->WaitForCompact().ok());
  // 200 × ~80 bytes through a 4 KiB write buffer: flushed to tables, not all in the memtable.
  std::string entries;
  ASSERT_TRUE(db_->GetProperty("shale.num-entries-active-mem-table", &entries));
  EXPECT_LT(std::stoi(entries), 200);
  EXPECT_EQ(Get("key7"), std::string(64, 'v'));
  // Slicing an Options back into its parts keeps each part's fields.
  const DBOptions back = options_;
  const ColumnFamilyOptions cf_back = options_;
  EXPECT_EQ(back.max_background_jobs, 3);
  EXPECT_EQ(cf_back.block_size, 512u);
}

TEST_F(DBBasicTest, ErrorIfExists) {
  Open();
  Close();
  options_.error_if_exists = true;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  options_.error_if_exists = false;
  Open();
}

TEST_F(DBBasicTest, SecondOpenerIsRefusedByLock) {
  Open();
  std::unique_ptr<DB> second;
  Status s = DB::Open(options_, dbname_, &second);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("LOCK"), std::string::npos) << s.ToString();
  EXPECT_EQ(second, nullptr);
  Close();
  ASSERT_TRUE(DB::Open(options_, dbname_, &second).ok());
}

TEST_F(DBBasicTest, SecondOpenerInAnotherProcessIsRefused) {
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(options_, dbname_, &db);
    _exit(s.IsIOError() && s.ToString().find("LOCK") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the other process opened a locked DB";
  EXPECT_EQ(Get("k"), "v");
}

TEST_F(DBBasicTest, InvalidOptionsAreRejected) {
  // Each rule of options.h: InvalidArgument naming the field, and no DB.
  auto expect_invalid = [&](const char* field, auto mutate) {
    Options saved = options_;
    mutate(options_);
    Status s = TryOpen();
    EXPECT_TRUE(s.IsInvalidArgument()) << field << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(std::string("Options::") + field + " "), std::string::npos)
        << field << ": " << s.ToString();
    EXPECT_EQ(db_, nullptr);
    options_ = saved;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_invalid("comparator", [](Options& o) { o.comparator = nullptr; });
  expect_invalid("write_buffer_size", [](Options& o) { o.write_buffer_size = 0; });
  expect_invalid("write_buffer_size", [](Options& o) { o.write_buffer_size = SIZE_MAX; });
  expect_invalid("memtable_bloom_size_ratio", [](Options& o) { o.memtable_bloom_size_ratio = -1; });
  expect_invalid("memtable_bloom_size_ratio",
                 [](Options& o) { o.memtable_bloom_size_ratio = 0.5; });
  expect_invalid("memtable_bloom_size_ratio",
                 [&](Options& o) { o.memtable_bloom_size_ratio = nan; });
  expect_invalid("max_write_buffer_number", [](Options& o) { o.max_write_buffer_number = 1; });
  expect_invalid("max_write_batch_group_size_bytes",
                 [](Options& o) { o.max_write_batch_group_size_bytes = 0; });
  expect_invalid("write_thread_max_yield_usec",
                 [](Options& o) { o.write_thread_max_yield_usec = 1000001; });
  expect_invalid("num_levels", [](Options& o) { o.num_levels = 1; });
  expect_invalid("num_levels", [](Options& o) { o.num_levels = 65; });
  expect_invalid("delayed_write_rate", [](Options& o) { o.delayed_write_rate = 0; });
  expect_invalid("hard_pending_compaction_bytes_limit", [](Options& o) {
    o.soft_pending_compaction_bytes_limit = 2 << 20;
    o.hard_pending_compaction_bytes_limit = 1 << 20;
  });
  expect_invalid("compaction_pri",
                 [](Options& o) { o.compaction_pri = static_cast<CompactionPri>(0); });
  expect_invalid("level0_file_num_compaction_trigger",
                 [](Options& o) { o.level0_file_num_compaction_trigger = 0; });
  expect_invalid("level0_slowdown_writes_trigger",
                 [](Options& o) { o.level0_slowdown_writes_trigger = 1; });
  expect_invalid("level0_stop_writes_trigger",
                 [](Options& o) { o.level0_stop_writes_trigger = 1; });
  expect_invalid("target_file_size_base", [](Options& o) { o.target_file_size_base = 0; });
  expect_invalid("max_bytes_for_level_base", [](Options& o) { o.max_bytes_for_level_base = 0; });
  expect_invalid("max_bytes_for_level_multiplier",
                 [](Options& o) { o.max_bytes_for_level_multiplier = 0.5; });
  expect_invalid("max_bytes_for_level_multiplier",
                 [&](Options& o) { o.max_bytes_for_level_multiplier = nan; });
  expect_invalid("max_background_jobs", [](Options& o) { o.max_background_jobs = 0; });
  expect_invalid("max_background_jobs", [](Options& o) { o.max_background_jobs = 1 << 20; });
  expect_invalid("max_background_compactions",
                 [](Options& o) { o.max_background_compactions = 0; });
  expect_invalid("max_background_compactions",
                 [](Options& o) { o.max_background_compactions = 65; });
  expect_invalid("max_subcompactions", [](Options& o) { o.max_subcompactions = 0; });
  expect_invalid("max_subcompactions", [](Options& o) { o.max_subcompactions = 1000; });
  expect_invalid("max_open_files", [](Options& o) { o.max_open_files = 0; });
  expect_invalid("compression", [](Options& o) { o.compression = CompressionType{0x55}; });
  expect_invalid("block_size", [](Options& o) { o.block_size = 0; });
  expect_invalid("block_size", [](Options& o) { o.block_size = (size_t{1} << 30) + 1; });
  expect_invalid("block_restart_interval", [](Options& o) { o.block_restart_interval = 0; });
  expect_invalid("format_version", [](Options& o) { o.format_version = 2; });
  expect_invalid("format_version", [](Options& o) { o.format_version = 4; });
  expect_invalid("bloom_bits_per_key", [](Options& o) { o.bloom_bits_per_key = -1; });
  expect_invalid("bloom_bits_per_key", [](Options& o) { o.bloom_bits_per_key = 101; });
  Open();  // the defaults are valid
}

TEST_F(DBBasicTest, PutGetDeleteOverwrite) {
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("b", "2").ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("c"), "NOT_FOUND");
  ASSERT_TRUE(Put("a", "3").ok());
  EXPECT_EQ(Get("a"), "3");
  ASSERT_TRUE(Delete("a").ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  ASSERT_TRUE(Delete("never-there").ok());
  ASSERT_TRUE(Put("", "empty key").ok());
  EXPECT_EQ(Get(""), "empty key");
  ASSERT_TRUE(Put("e", "").ok());
  EXPECT_EQ(Get("e"), "");
}

TEST_F(DBBasicTest, BinaryKeysAndValues) {
  Open();
  std::string k("\0\xff\x01key", 6);
  std::string v("\0\0value\xff", 8);
  ASSERT_TRUE(Put(k, v).ok());
  EXPECT_EQ(Get(k), v);
  EXPECT_EQ(Get(std::string("\0\xff\x01", 3)), "NOT_FOUND");
}

TEST_F(DBBasicTest, GetIntoPinnableSlicePinsTheMemtable) {
  Open();
  std::string big(10000, 'x');
  ASSERT_TRUE(Put("k", big).ok());
  PinnableSlice value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  EXPECT_TRUE(value.IsPinned());
  EXPECT_EQ(value.ToString(), big);
  // Reuse resets the previous pin first.
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  EXPECT_TRUE(value.IsPinned());
  // The pin keeps the memtable alive past Close.
  const char* data = value.data();
  Close();
  EXPECT_EQ(std::string(data, value.size()), big);
  value.Reset();
  EXPECT_FALSE(value.IsPinned());
  EXPECT_EQ(value.size(), 0u);
}

TEST_F(DBBasicTest, NotFoundResetsPinnableSlice) {
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  PinnableSlice value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  Status s = db_->Get(ReadOptions(), "missing", &value);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_FALSE(value.IsPinned());
  EXPECT_EQ(value.size(), 0u);
}

TEST_F(DBBasicTest, KeyAndValueSizeLimits) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  std::string huge_key(DB::kMaxKeySize + 1, 'k');
  EXPECT_TRUE(db_->Put(WriteOptions(), huge_key, "v").IsInvalidArgument());
  EXPECT_TRUE(db_->Delete(WriteOptions(), huge_key).IsInvalidArgument());
  EXPECT_TRUE(db_->Merge(WriteOptions(), huge_key, "v").IsInvalidArgument());
  WriteBatch batch;
  EXPECT_TRUE(batch.Put(huge_key, "v").IsInvalidArgument());
  EXPECT_TRUE(batch.Delete(huge_key).IsInvalidArgument());
  EXPECT_TRUE(batch.Merge(huge_key, "v").IsInvalidArgument());
  EXPECT_EQ(batch.Count(), 0u);
  EXPECT_EQ(batch.GetDataSize(), WriteBatch().GetDataSize());
  // A value over the limit. The size is checked before a byte of the value is read, so the
  // slice does not need a GiB of memory behind it.
  const char byte = 'v';
  const Slice huge_value(&byte, DB::kMaxValueSize + 1);
  EXPECT_TRUE(db_->Put(WriteOptions(), "k", huge_value).IsInvalidArgument());
  EXPECT_TRUE(db_->Merge(WriteOptions(), "k", huge_value).IsInvalidArgument());
  EXPECT_TRUE(batch.Put("k", huge_value).IsInvalidArgument());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  std::string max_key(DB::kMaxKeySize, 'k');
  ASSERT_TRUE(db_->Put(WriteOptions(), max_key, "v").ok());
  EXPECT_EQ(Get(max_key), "v");
}

TEST_F(DBBasicTest, MergeRequiresOperator) {
  Open();
  EXPECT_TRUE(Merge("k", "v").IsInvalidArgument());
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.Merge("k", "v").ok());
  EXPECT_TRUE(db_->Write(WriteOptions(), &batch).IsInvalidArgument());
  EXPECT_EQ(Get("a"), "NOT_FOUND");  // the whole batch was refused
}

TEST_F(DBBasicTest, MergeWithStringAppend) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  ASSERT_TRUE(Merge("k", "a").ok());
  EXPECT_EQ(Get("k"), "a");
  ASSERT_TRUE(Merge("k", "b").ok());
  ASSERT_TRUE(Merge("k", "c").ok());
  EXPECT_EQ(Get("k"), "a,b,c");
  ASSERT_TRUE(Put("k", "base").ok());
  ASSERT_TRUE(Merge("k", "d").ok());
  EXPECT_EQ(Get("k"), "base,d");
  ASSERT_TRUE(Delete("k").ok());
  ASSERT_TRUE(Merge("k", "e").ok());
  EXPECT_EQ(Get("k"), "e");
  EXPECT_EQ(Contents(), "k=e");
  Reopen();
  EXPECT_EQ(Get("k"), "e");
}

TEST_F(DBBasicTest, FailingMergeIsCorruptionForThatKey) {
  options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  Open();
  ASSERT_TRUE(Merge("bad", "not eight bytes").ok());
  std::string one(8, '\0');
  one[0] = 1;
  ASSERT_TRUE(Merge("good", one).ok());
  ASSERT_TRUE(Merge("good", one).ok());
  std::string value;
  EXPECT_TRUE(db_->Get(ReadOptions(), "bad", &value).IsCorruption());
  ASSERT_TRUE(db_->Get(ReadOptions(), "good", &value).ok());
  EXPECT_EQ(value[0], 2);
}

TEST_F(DBBasicTest, WriteBatchIsAtomicAndOrdered) {
  Open();
  ASSERT_TRUE(Put("x", "old").ok());
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.Delete("x").ok());
  ASSERT_TRUE(batch.Put("a", "2").ok());  // later record wins
  EXPECT_EQ(batch.Count(), 3u);
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(batch.Count(), 3u);  // not modified
  EXPECT_EQ(Contents(), "a=2");
  batch.Clear();
  EXPECT_EQ(batch.Count(), 0u);
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
}

TEST_F(DBBasicTest, SnapshotsSeeAFixedState) {
  Open();
  ASSERT_TRUE(Put("k", "v1").ok());
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_TRUE(Put("k", "v2").ok());
  ASSERT_TRUE(Put("new", "n").ok());
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_TRUE(Delete("k").ok());
  EXPECT_EQ(Get("k", s1), "v1");
  EXPECT_EQ(Get("new", s1), "NOT_FOUND");
  EXPECT_EQ(Get("k", s2), "v2");
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  EXPECT_EQ(Contents(s1), "k=v1");
  EXPECT_EQ(Contents(s2), "k=v2 new=n");
  EXPECT_EQ(Contents(), "new=n");
  std::string n;
  ASSERT_TRUE(db_->GetProperty("shale.num-snapshots", &n));
  EXPECT_EQ(n, "2");
  EXPECT_TRUE(db_->Close().IsAborted());  // unreleased snapshots keep the DB open
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
}

TEST_F(DBBasicTest, SnapshotFromAnotherDBIsInvalidArgument) {
  Open();
  ScratchDir other_dir;
  std::unique_ptr<DB> other;
  ASSERT_TRUE(DB::Open(options_, other_dir.path(), &other).ok());
  const Snapshot* foreign = other->GetSnapshot();
  ReadOptions ro;
  ro.snapshot = foreign;
  std::string value;
  EXPECT_TRUE(db_->Get(ro, "k", &value).IsInvalidArgument());
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsInvalidArgument());
  std::vector<std::string> values;
  std::vector<Status> statuses = db_->MultiGet(ro, {Slice("k"), Slice("l")}, &values);
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_TRUE(statuses[0].IsInvalidArgument()) << statuses[0].ToString();
  EXPECT_TRUE(statuses[1].IsInvalidArgument()) << statuses[1].ToString();
  PinnableSlice operand;
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = 1;
  int n = 0;
  EXPECT_TRUE(db_->GetMergeOperands(ro, "k", &operand, &gmo, &n).IsInvalidArgument());
  other->ReleaseSnapshot(foreign);
  ASSERT_TRUE(other->Close().ok());
}

TEST_F(DBBasicTest, IteratorBothDirections) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  ASSERT_TRUE(Put("b", "2").ok());
  ASSERT_TRUE(Put("d", "4").ok());
  ASSERT_TRUE(Put("c", "3").ok());
  ASSERT_TRUE(Delete("c").ok());
  ASSERT_TRUE(Merge("e", "x").ok());
  ASSERT_TRUE(Merge("e", "y").ok());
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Delete("f").ok());

  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  std::string forward;
  for (it->SeekToFirst(); it->Valid(); it->Next())
    forward += it->key().ToString() + it->value().ToString() + " ";
  EXPECT_EQ(forward, "a1 b2 d4 ex,y ");
  std::string backward;
  for (it->SeekToLast(); it->Valid(); it->Prev()) backward += it->key().ToString() + " ";
  EXPECT_EQ(backward, "e d b a ");

  it->Seek("c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "d");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->Next();
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "e");
  EXPECT_EQ(it->value().ToString(), "x,y");
  it->Next();
  EXPECT_FALSE(it->Valid());

  it->SeekForPrev("c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->SeekForPrev("zzz");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "e");
  it->SeekForPrev("0");
  EXPECT_FALSE(it->Valid());
  it->Seek("f");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST_F(DBBasicTest, IteratorIsASnapshot) {
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  ASSERT_TRUE(Put("b", "2").ok());
  ASSERT_TRUE(Put("a", "changed").ok());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "1");
  it->Next();
  EXPECT_FALSE(it->Valid());
}

TEST_F(DBBasicTest, ReopenRecoversEverything) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE(Put("key" + std::to_string(i), "value" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(Delete("key7").ok());
  ASSERT_TRUE(Merge("m", "1").ok());
  std::string before = Contents();
  Reopen();
  EXPECT_EQ(Contents(), before);
  // Sequence numbers continue: new writes shadow recovered ones.
  ASSERT_TRUE(Put("key1", "after").ok());
  ASSERT_TRUE(Merge("m", "2").ok());
  EXPECT_EQ(Get("key1"), "after");
  Reopen();
  EXPECT_EQ(Get("key1"), "after");
  EXPECT_EQ(Get("m"), "1,2");
  EXPECT_EQ(Get("key7"), "NOT_FOUND");
  Reopen();  // a third generation of logs
  EXPECT_EQ(Get("key999"), "value999");
}

TEST_F(DBBasicTest, LargeValuesSpanWalBlocks) {
  Open();
  std::string v1(100000, 'a');
  std::string v2(3 << 20, 'b');
  ASSERT_TRUE(Put("v1", v1).ok());
  ASSERT_TRUE(Put("v2", v2, /*sync=*/true).ok());
  Reopen();
  EXPECT_EQ(Get("v1"), v1);
  EXPECT_EQ(Get("v2"), v2);
}

// A released snapshot is refused by every read, and releasing it again does nothing (no use
// of freed memory: ASan in CI).
TEST_F(DBBasicTest, ReleasedSnapshotIsRefusedAndReleasingTwiceIsHarmless) {
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  const Snapshot* kept = db_->GetSnapshot();
  const Snapshot* snap = db_->GetSnapshot();
  db_->ReleaseSnapshot(snap);
  db_->ReleaseSnapshot(snap);
  ReadOptions ro;
  ro.snapshot = snap;
  std::string value;
  Status s = db_->Get(ro, "k", &value);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(db_->NewIterator(ro)->status().IsInvalidArgument());
  ro.snapshot = kept;  // the other snapshot is untouched
  EXPECT_EQ(Get("k", kept), "v");
  std::string n;
  ASSERT_TRUE(db_->GetProperty("shale.num-snapshots", &n));
  EXPECT_EQ(n, "1");
  db_->ReleaseSnapshot(kept);
  Close();
}

// Close refuses while an iterator is alive (it reads the DB's memtables and tables), like
// unreleased snapshots; the DB stays usable, and closes once the iterator is gone.
TEST_F(DBBasicTest, CloseRefusesWhileIteratorsAreAlive) {
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("b", "2").ok());
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  std::unique_ptr<Iterator> second = db_->NewIterator(ReadOptions());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  Status s = db_->Close();
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_NE(s.ToString().find("iterator"), std::string::npos) << s.ToString();
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  EXPECT_EQ(Get("a"), "1");
  it.reset();
  EXPECT_TRUE(db_->Close().IsAborted());
  second.reset();
  EXPECT_TRUE(db_->NewIterator(ReadOptions())->status().ok());  // destroyed at once
  Close();                                                      // checks that Close succeeds
}

TEST_F(DBBasicTest, UseAfterCloseIsAborted) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  ASSERT_TRUE(db_->Close().ok());
  // Every call answers Aborted (db.h); none touches what Close released.
  const WriteOptions wo;
  const ReadOptions ro;
  EXPECT_TRUE(db_->Put(wo, "k", "v").IsAborted());
  EXPECT_TRUE(db_->Delete(wo, "k").IsAborted());
  EXPECT_TRUE(db_->Merge(wo, "k", "v").IsAborted());
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("k", "v").ok());
  EXPECT_TRUE(db_->Write(wo, &batch).IsAborted());
  std::string value;
  EXPECT_TRUE(db_->Get(ro, "k", &value).IsAborted());
  std::vector<std::string> values;
  for (const Status& s : db_->MultiGet(ro, {Slice("k"), Slice("l")}, &values)) {
    EXPECT_TRUE(s.IsAborted()) << s.ToString();
  }
  PinnableSlice operand;
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = 1;
  int n = 0;
  EXPECT_TRUE(db_->GetMergeOperands(ro, "k", &operand, &gmo, &n).IsAborted());
  EXPECT_TRUE(db_->NewIterator(ro)->status().IsAborted());
  EXPECT_EQ(db_->GetSnapshot(), nullptr);
  EXPECT_TRUE(db_->Flush(FlushOptions()).IsAborted());
  EXPECT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).IsAborted());
  EXPECT_TRUE(db_->WaitForCompact().IsAborted());
  EXPECT_TRUE(db_->SyncWAL().IsAborted());
  EXPECT_TRUE(db_->Resume().IsAborted());
  std::string property;
  EXPECT_FALSE(db_->GetProperty("shale.stats", &property));
  EXPECT_TRUE(db_->Close().IsAborted());
  db_.reset();
}

TEST_F(DBBasicTest, SyncWithDisableWalIsInvalid) {
  Open();
  WriteOptions wo;
  wo.sync = true;
  wo.disableWAL = true;
  EXPECT_TRUE(db_->Put(wo, "k", "v").IsInvalidArgument());
  ASSERT_TRUE(db_->SyncWAL().ok());
}

TEST_F(DBBasicTest, DisableWalWritesAreVisibleButNotRecovered) {
  Open();
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  ASSERT_TRUE(Put("logged", "1").ok());
  ASSERT_TRUE(db_->Put(no_wal, "unlogged", "2").ok());
  EXPECT_EQ(Get("unlogged"), "2");
  Reopen();
  EXPECT_EQ(Get("logged"), "1");
  EXPECT_EQ(Get("unlogged"), "NOT_FOUND");
}

TEST_F(DBBasicTest, MultiGetReadsEveryKey) {
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("c", "3").ok());
  std::vector<Slice> keys = {"c", "b", "a", "c"};
  std::vector<std::string> values;
  std::vector<Status> statuses = db_->MultiGet(ReadOptions(), keys, &values);
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(values[0], "3");
  EXPECT_TRUE(statuses[1].IsNotFound());
  EXPECT_EQ(values[2], "1");
  EXPECT_EQ(values[3], "3");
}

TEST_F(DBBasicTest, PropertiesAndStatistics) {
  options_.statistics = CreateDBStatistics();
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("b", "2", /*sync=*/true).ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("zz"), "NOT_FOUND");
  std::string v;
  ASSERT_TRUE(db_->GetProperty("shale.num-entries-active-mem-table", &v));
  EXPECT_EQ(v, "2");
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &v));
  EXPECT_EQ(v, "0");
  EXPECT_FALSE(db_->GetProperty("shale.num-files-at-level99", &v));
  EXPECT_FALSE(db_->GetProperty("shale.no-such-property", &v));
  ASSERT_TRUE(db_->GetProperty("shale.stats", &v));
  EXPECT_NE(v.find("Latest sequence: 2"), std::string::npos) << v;
  Statistics* st = options_.statistics.get();
  EXPECT_EQ(st->getTickerCount(NUMBER_KEYS_WRITTEN), 2u);
  EXPECT_EQ(st->getTickerCount(WAL_FILE_SYNCED), 1u);
  EXPECT_EQ(st->getTickerCount(MEMTABLE_HIT), 1u);
  EXPECT_EQ(st->getTickerCount(MEMTABLE_MISS), 1u);
  HistogramData h;
  st->histogramData(DB_GET, &h);
  EXPECT_EQ(h.count, 2u);
  EXPECT_NE(st->ToString().find("shale.wal.synced COUNT : 1"), std::string::npos);
}

TEST_F(DBBasicTest, DestroyDBRemovesFiles) {
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  EXPECT_FALSE(DestroyDB(dbname_, options_).ok());  // still open (locked)
  Close();
  ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  options_.create_if_missing = false;
  EXPECT_TRUE(TryOpen().IsInvalidArgument());
  EXPECT_TRUE(DestroyDB(dbname_, options_).ok());  // nothing there: fine
}

}  // namespace
}  // namespace shale::test

namespace shale::test {
namespace {

// DB::Write leaves the caller's batch as it was (the WAL takes a lone batch's bytes in place,
// with the group's sequence in its header only while they are written).
TEST(DBWriteBatchTest, WriteDoesNotModifyTheBatch) {
  ScratchDir dir;
  Options options;
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path() + "/db", &db).ok());
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.Delete("b").ok());
  const std::string before = batch.Data();
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
    EXPECT_EQ(batch.Data(), before);
  }
  ASSERT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace shale::test
