// Column families: the handles and the handle-taking calls, creating and dropping families,
// opening by descriptors, ListColumnFamilies, WriteBatch records that carry a family id, and
// the bad input each of these refuses. The engine behind them (separate keyspaces, one WAL,
// recovery per family) is in db_column_family_engine_test.cc.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "shale/column_family.h"
#include "shale/file_system.h"
#include "shale/merge_operator.h"
#include "src/base/filename.h"
#include "src/db/write_batch_internal.h"
#include "src/util/coding.h"
#include "tests/db_test_util.h"
#include "wal/log_writer.h"

namespace shale::test {
namespace {

class DBColumnFamilyTest : public DBTestBase {
 protected:
  // Opens with descriptors for names (each with the test's options).
  Status OpenFamilies(const std::vector<std::string>& names,
                      std::vector<std::unique_ptr<ColumnFamilyHandle>>* handles) {
    std::vector<ColumnFamilyDescriptor> descriptors;
    for (const std::string& n : names) descriptors.emplace_back(n, options_);
    return DB::Open(options_, dbname_, descriptors, handles, &db_);
  }
};

// A handle no DB made, naming a family id.
class StubHandle final : public ColumnFamilyHandle {
 public:
  explicit StubHandle(uint32_t id = 0, std::string name = kDefaultColumnFamilyName)
      : id_(id), name_(std::move(name)) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  const Comparator* GetComparator() const override { return BytewiseComparator(); }

 private:
  uint32_t id_;
  std::string name_;
};

TEST_F(DBColumnFamilyTest, DefaultFamilyHandleReadsAndWritesAsTheCallsWithoutOne) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
  ASSERT_NE(cf, nullptr);
  EXPECT_EQ(cf->GetName(), kDefaultColumnFamilyName);
  EXPECT_EQ(cf->GetID(), 0u);
  EXPECT_EQ(cf->GetComparator(), options_.comparator);

  WriteOptions wo;
  ReadOptions ro;
  ASSERT_TRUE(db_->Put(wo, cf, "a", "1").ok());
  ASSERT_TRUE(db_->Put(wo, cf, "b", "2").ok());
  ASSERT_TRUE(db_->Delete(wo, cf, "b").ok());
  ASSERT_TRUE(db_->Merge(wo, cf, "m", "x").ok());
  ASSERT_TRUE(db_->Merge(wo, cf, "m", "y").ok());
  WriteBatch batch;
  ASSERT_TRUE(batch.Put(cf, "c", "3").ok());
  ASSERT_TRUE(batch.Put(nullptr, "d", "4").ok());  // null: the default family, as in RocksDB
  ASSERT_TRUE(db_->Write(wo, &batch).ok());

  std::string v;
  ASSERT_TRUE(db_->Get(ro, cf, "a", &v).ok());
  EXPECT_EQ(v, "1");
  EXPECT_TRUE(db_->Get(ro, cf, "b", &v).IsNotFound());
  EXPECT_EQ(Get("c"), "3");  // the same keyspace as the calls without a handle
  EXPECT_EQ(Get("d"), "4");
  EXPECT_EQ(Get("m"), "x,y");

  std::vector<Slice> keys = {"a", "b", "c", "m"};
  std::vector<std::string> values;
  std::vector<Status> st = db_->MultiGet(ro, {cf, cf, cf, cf}, keys, &values);
  ASSERT_EQ(st.size(), 4u);
  EXPECT_TRUE(st[0].ok());
  EXPECT_EQ(values[0], "1");
  EXPECT_TRUE(st[1].IsNotFound());
  EXPECT_EQ(values[2], "3");
  EXPECT_EQ(values[3], "x,y");

  PinnableSlice pinned[2];
  Status statuses[2];
  Slice two[2] = {"c", "d"};
  db_->MultiGet(ro, cf, 2, two, pinned, statuses);
  EXPECT_TRUE(statuses[0].ok() && statuses[1].ok());
  EXPECT_EQ(pinned[1].ToString(), "4");

  PinnableSlice operands[4];
  GetMergeOperandsOptions opts;
  opts.expected_max_number_of_operands = 4;
  int count = 0;
  ASSERT_TRUE(db_->GetMergeOperands(ro, cf, "m", operands, &opts, &count).ok());
  EXPECT_EQ(count, 2);

  auto it = db_->NewIterator(ro, cf);
  std::string seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen += it->key().ToString();
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(seen, "acdm");
  it.reset();

  ASSERT_TRUE(db_->Flush(FlushOptions(), cf).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions(), std::vector<ColumnFamilyHandle*>{cf}).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), cf, nullptr, nullptr).ok());
  std::string prop;
  EXPECT_TRUE(db_->GetProperty(cf, "shale.num-files-at-level0", &prop));
  EXPECT_EQ(Get("a"), "1");
}

TEST_F(DBColumnFamilyTest, NewIteratorsReadAtOneSequence) {
  Open();
  ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
  auto count = [](Iterator* it) {
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    return n;
  };
  auto snapshots = [&] {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("shale.num-snapshots", &v));
    return v;
  };
  ASSERT_TRUE(Put("a", "1").ok());
  std::vector<std::unique_ptr<Iterator>> iters;
  ASSERT_TRUE(db_->NewIterators(ReadOptions(), {cf, cf}, &iters).ok());
  ASSERT_EQ(iters.size(), 2u);
  EXPECT_EQ(snapshots(), "0");      // the call's own snapshot is released
  ASSERT_TRUE(Put("b", "2").ok());  // after the iterators: neither sees it
  for (auto& it : iters) EXPECT_EQ(count(it.get()), 1);
  iters.clear();
  // The caller's snapshot is the sequence of all of them.
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(Put("c", "3").ok());
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  ASSERT_TRUE(db_->NewIterators(at_snap, {cf, cf, cf}, &iters).ok());
  ASSERT_EQ(iters.size(), 3u);
  for (auto& it : iters) EXPECT_EQ(count(it.get()), 2);
  iters.clear();
  db_->ReleaseSnapshot(snap);
  // The MultiGet over a list of families releases its snapshot too.
  std::vector<std::string> values;
  std::vector<Status> st =
      db_->MultiGet(ReadOptions(), {cf, cf}, {Slice("a"), Slice("c")}, &values);
  EXPECT_TRUE(st[0].ok() && st[1].ok());
  EXPECT_EQ(values[1], "3");
  EXPECT_EQ(snapshots(), "0");
  // A bad handle anywhere in the list: no iterators.
  StubHandle foreign;
  EXPECT_TRUE(db_->NewIterators(ReadOptions(), {cf, &foreign}, &iters).IsInvalidArgument());
  EXPECT_TRUE(iters.empty());
}

TEST_F(DBColumnFamilyTest, BadHandlesAreInvalidArgument) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Open();
  StubHandle foreign;
  // Another DB's handle: the default family of a second DB.
  ScratchDir other_dir;
  std::unique_ptr<DB> other;
  Options other_options;
  other_options.create_if_missing = true;
  ASSERT_TRUE(DB::Open(other_options, other_dir.path() + "/db", &other).ok());
  for (ColumnFamilyHandle* bad :
       {static_cast<ColumnFamilyHandle*>(nullptr), static_cast<ColumnFamilyHandle*>(&foreign),
        other->DefaultColumnFamily()}) {
    SCOPED_TRACE(bad == nullptr ? "null" : bad == &foreign ? "foreign" : "other DB");
    WriteOptions wo;
    ReadOptions ro;
    EXPECT_TRUE(db_->Put(wo, bad, "k", "v").IsInvalidArgument());
    EXPECT_TRUE(db_->Delete(wo, bad, "k").IsInvalidArgument());
    EXPECT_TRUE(db_->Merge(wo, bad, "k", "v").IsInvalidArgument());
    std::string v;
    EXPECT_TRUE(db_->Get(ro, bad, "k", &v).IsInvalidArgument());
    Slice key("k");
    PinnableSlice value;
    Status status;
    db_->MultiGet(ro, bad, 1, &key, &value, &status);
    EXPECT_TRUE(status.IsInvalidArgument());
    EXPECT_TRUE(db_->NewIterator(ro, bad)->status().IsInvalidArgument());
    EXPECT_TRUE(db_->Flush(FlushOptions(), bad).IsInvalidArgument());
    EXPECT_TRUE(
        db_->CompactRange(CompactRangeOptions(), bad, nullptr, nullptr).IsInvalidArgument());
    Status drop = db_->DropColumnFamily(bad);
    EXPECT_TRUE(drop.IsInvalidArgument());
    // Refused for the handle, not because the default family cannot be dropped.
    EXPECT_EQ(drop.ToString().find("cannot be dropped"), std::string::npos) << drop.ToString();
    PinnableSlice operands[2];
    GetMergeOperandsOptions opts;
    opts.expected_max_number_of_operands = 2;
    int n = -1;
    EXPECT_TRUE(db_->GetMergeOperands(ro, bad, "k", operands, &opts, &n).IsInvalidArgument());
    EXPECT_EQ(n, 0);
    std::string prop;
    EXPECT_FALSE(db_->GetProperty(bad, "shale.stats", &prop));
  }
  // Nothing was written through any of them.
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  std::vector<std::string> values;
  std::vector<Status> st =
      db_->MultiGet(ReadOptions(), {db_->DefaultColumnFamily()}, {Slice("a"), Slice("b")}, &values);
  ASSERT_EQ(st.size(), 2u);  // one handle for two keys
  EXPECT_TRUE(st[0].IsInvalidArgument() && st[1].IsInvalidArgument());
  ASSERT_TRUE(other->Close().ok());
}

TEST_F(DBColumnFamilyTest, HandleCallsAfterCloseAreAborted) {
  Open();
  ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_TRUE(db_->Put(WriteOptions(), cf, "k", "v").IsAborted());
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), cf, "k", &v).IsAborted());
  EXPECT_TRUE(db_->DropColumnFamily(cf).IsAborted());
  EXPECT_TRUE(db_->NewIterator(ReadOptions(), cf)->status().IsAborted());
  std::vector<std::unique_ptr<Iterator>> iters;
  EXPECT_TRUE(db_->NewIterators(ReadOptions(), {cf}, &iters).IsAborted());
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("k", "v").ok());
  EXPECT_TRUE(db_->Write(WriteOptions(), &batch).IsAborted());
  db_.reset();  // closed already
}

// A well-formed WAL record of a family the DB does not hold fails the open in every recovery
// mode (InvalidArgument, naming the log): it is not damage a mode may cut the history at, and
// the acknowledged writes after it must not be dropped.
TEST_F(DBColumnFamilyTest, WalRecordOfAnUnknownFamilyFailsRecoveryInEveryMode) {
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  Close();
  StubHandle seven(7, "seven");
  // A later log: a write of the default family, one of family 7, another of the default one.
  {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(
        FileSystem::Default()->NewWritableFile(LogFileName(dbname_, 900), FileOptions(), &f).ok());
    log::Writer w(std::move(f));
    SequenceNumber seq = 100;
    for (int i = 0; i < 3; i++) {
      WriteBatch b;
      ASSERT_TRUE((i == 1 ? b.Put(&seven, "x", "7") : b.Put("b" + std::to_string(i), "v")).ok());
      WriteBatchInternal::SetSequence(&b, seq++);
      ASSERT_TRUE(w.AddRecord(WriteBatchInternal::Contents(&b)).ok());
    }
    ASSERT_TRUE(w.Sync().ok());
    ASSERT_TRUE(w.Close().ok());
  }
  for (WALRecoveryMode mode :
       {WALRecoveryMode::kTolerateCorruptedTailRecords, WALRecoveryMode::kAbsoluteConsistency,
        WALRecoveryMode::kPointInTimeRecovery}) {
    options_.wal_recovery_mode = mode;
    Status s = TryOpen();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("column family 7"), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("000900.log"), std::string::npos) << s.ToString();
    EXPECT_EQ(db_, nullptr);
  }
}

TEST_F(DBColumnFamilyTest, CreateAndDropRules) {
  Open();
  EXPECT_TRUE(db_->DropColumnFamily(db_->DefaultColumnFamily()).IsInvalidArgument());
  std::unique_ptr<ColumnFamilyHandle> h;
  EXPECT_TRUE(db_->CreateColumnFamily(options_, kDefaultColumnFamilyName, &h).IsInvalidArgument());
  EXPECT_TRUE(db_->CreateColumnFamily(options_, "", &h).IsInvalidArgument());
  ColumnFamilyOptions bad = options_;
  bad.num_levels = 1;
  Status s = db_->CreateColumnFamily(bad, "lock", &h);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("num_levels"), std::string::npos) << s.ToString();
  EXPECT_EQ(h, nullptr);
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "lock", &h).ok());
  EXPECT_EQ(h->GetName(), "lock");
  EXPECT_EQ(h->GetID(), 1u);
  std::unique_ptr<ColumnFamilyHandle> again;
  EXPECT_TRUE(db_->CreateColumnFamily(options_, "lock", &again).IsInvalidArgument());
  std::vector<std::unique_ptr<ColumnFamilyHandle>> hs;
  ASSERT_TRUE(db_->CreateColumnFamilies({ColumnFamilyDescriptor("write", options_),
                                         ColumnFamilyDescriptor("raft", options_)},
                                        &hs)
                  .ok());
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_EQ(hs[1]->GetID(), 3u);
  EXPECT_TRUE(db_->DropColumnFamilies({db_->DefaultColumnFamily()}).IsInvalidArgument());
  ASSERT_TRUE(db_->DropColumnFamilies({hs[0].get(), hs[1].get()}).ok());
  // A dropped family: dropped again, or used, is a named InvalidArgument.
  s = db_->DropColumnFamily(hs[0].get());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("write (2) was dropped"), std::string::npos) << s.ToString();
  // Its name is free again, under a new id.
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "write", &again).ok());
  EXPECT_EQ(again->GetID(), 4u);
  std::vector<std::string> names;
  ASSERT_TRUE(DB::ListColumnFamilies(options_, dbname_, &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"default", "lock", "write"}));
}

TEST_F(DBColumnFamilyTest, OpenByDescriptorsReturnsOneHandlePerDescriptor) {
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  ASSERT_TRUE(OpenFamilies({kDefaultColumnFamilyName}, &handles).ok());
  ASSERT_EQ(handles.size(), 1u);
  EXPECT_EQ(handles[0]->GetName(), kDefaultColumnFamilyName);
  EXPECT_EQ(handles[0]->GetID(), 0u);
  ASSERT_TRUE(db_->Put(WriteOptions(), handles[0].get(), "k", "v").ok());
  EXPECT_EQ(Get("k"), "v");
  // A returned handle is the caller's; DestroyColumnFamilyHandle checks it is this DB's.
  EXPECT_TRUE(db_->DestroyColumnFamilyHandle(std::move(handles[0])).ok());
  handles.clear();
  EXPECT_TRUE(db_->DestroyColumnFamilyHandle(std::make_unique<StubHandle>()).IsInvalidArgument());
  // DefaultColumnFamily() stays the DB's even when the caller wraps it.
  EXPECT_TRUE(db_->DestroyColumnFamilyHandle(
                     std::unique_ptr<ColumnFamilyHandle>(db_->DefaultColumnFamily()))
                  .IsInvalidArgument());
  EXPECT_EQ(db_->DefaultColumnFamily()->GetName(), kDefaultColumnFamilyName);
  Close();

  // The column family part of the default descriptor is the one used.
  ColumnFamilyOptions bad = options_;
  bad.block_size = 0;
  Status s = DB::Open(options_, dbname_, {ColumnFamilyDescriptor(kDefaultColumnFamilyName, bad)},
                      &handles, &db_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("block_size"), std::string::npos) << s.ToString();
  EXPECT_TRUE(handles.empty());
  EXPECT_EQ(db_, nullptr);
}

TEST_F(DBColumnFamilyTest, BadDescriptorListsAreInvalidArgument) {
  Open();
  Close();
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  struct Case {
    std::vector<std::string> names;
    const char* expect;
  };
  for (const Case& c : {Case{{}, "default"}, Case{{"lock"}, "default"},
                        Case{{kDefaultColumnFamilyName, kDefaultColumnFamilyName}, "twice"},
                        Case{{kDefaultColumnFamilyName, "write", "lock"}, "lock, write"}}) {
    Status s = OpenFamilies(c.names, &handles);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find(c.expect), std::string::npos) << s.ToString();
    EXPECT_TRUE(handles.empty());
    EXPECT_EQ(db_, nullptr);
  }
}

TEST_F(DBColumnFamilyTest, ListColumnFamilies) {
  std::vector<std::string> names;
  EXPECT_TRUE(DB::ListColumnFamilies(options_, dbname_, &names).IsNotFound());
  EXPECT_TRUE(names.empty());
  Open();
  ASSERT_TRUE(DB::ListColumnFamilies(options_, dbname_, &names).ok());  // open DB too
  EXPECT_EQ(names, std::vector<std::string>{kDefaultColumnFamilyName});
  std::unique_ptr<ColumnFamilyHandle> h;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "lock", &h).ok());
  ASSERT_TRUE(DB::ListColumnFamilies(options_, dbname_, &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{kDefaultColumnFamilyName, "lock"}));
}

// A batch record naming a family the DB does not hold fails the whole batch before anything
// is written, and names the family.
TEST_F(DBColumnFamilyTest, BatchRecordsOfUnknownFamiliesAreRefused) {
  Open();
  StubHandle seven(7, "seven");
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.Delete(&seven, "b").ok());
  Status s = db_->Write(WriteOptions(), &batch);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("column family 7"), std::string::npos) << s.ToString();
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  Reopen();
  EXPECT_EQ(Get("a"), "NOT_FOUND");
}

// The encoding: default-family records carry no id; others carry theirs, and a handler sees
// every record with its family.
TEST(WriteBatchColumnFamilyTest, RecordsCarryTheirFamily) {
  StubHandle zero(0), three(3), big(300);
  WriteBatch plain;
  ASSERT_TRUE(plain.Put("k", "v").ok());
  WriteBatch via_default;
  ASSERT_TRUE(via_default.Put(&zero, "k", "v").ok());
  EXPECT_EQ(plain.Data(), via_default.Data());  // id 0 is written without an id
  EXPECT_FALSE(WriteBatchInternal::HasColumnFamilyRecords(&via_default));

  WriteBatch b;
  ASSERT_TRUE(b.Put(&three, "a", "1").ok());
  ASSERT_TRUE(b.Delete(&big, "b").ok());
  ASSERT_TRUE(b.Merge(&three, "c", "2").ok());
  ASSERT_TRUE(b.Put("d", "3").ok());
  EXPECT_TRUE(WriteBatchInternal::HasColumnFamilyRecords(&b));
  EXPECT_EQ(b.Count(), 4u);
  class Recorder final : public WriteBatch::Handler {
   public:
    Status Put(const Slice& k, const Slice& v) override { return Add(0, "P", k, v); }
    Status Delete(const Slice& k) override { return Add(0, "D", k, ""); }
    Status Merge(const Slice& k, const Slice& v) override { return Add(0, "M", k, v); }
    Status PutCF(uint32_t f, const Slice& k, const Slice& v) override {
      return f == 0 ? Put(k, v) : Add(f, "P", k, v);
    }
    Status DeleteCF(uint32_t f, const Slice& k) override {
      return f == 0 ? Delete(k) : Add(f, "D", k, "");
    }
    Status MergeCF(uint32_t f, const Slice& k, const Slice& v) override {
      return f == 0 ? Merge(k, v) : Add(f, "M", k, v);
    }
    std::string seen;

   private:
    Status Add(uint32_t f, const char* op, const Slice& k, const Slice& v) {
      seen += std::to_string(f) + op + k.ToString() + v.ToString() + " ";
      return Status::OK();
    }
  } rec;
  ASSERT_TRUE(b.Iterate(&rec).ok());
  EXPECT_EQ(rec.seen, "3Pa1 300Db 3Mc2 0Pd3 ");

  // Copies, moves and appends keep the flag; Clear drops it.
  WriteBatch copy = b;
  EXPECT_TRUE(WriteBatchInternal::HasColumnFamilyRecords(&copy));
  WriteBatch appended;
  WriteBatchInternal::Append(&appended, &b);
  EXPECT_TRUE(WriteBatchInternal::HasColumnFamilyRecords(&appended));
  WriteBatch moved = std::move(copy);
  EXPECT_TRUE(WriteBatchInternal::HasColumnFamilyRecords(&moved));
  moved.Clear();
  EXPECT_FALSE(WriteBatchInternal::HasColumnFamilyRecords(&moved));

  // A handler that takes only the default family refuses the others, naming them.
  class DefaultOnly final : public WriteBatch::Handler {
   public:
    Status Put(const Slice&, const Slice&) override { return Status::OK(); }
    Status Delete(const Slice&) override { return Status::OK(); }
    Status Merge(const Slice&, const Slice&) override { return Status::OK(); }
  } default_only;
  Status s = b.Iterate(&default_only);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("column family 3"), std::string::npos) << s.ToString();

  // Damaged family ids are Corruption: a truncated varint, and a record cut after its id.
  for (const std::string& tail : {std::string("\x05\x80", 2), std::string("\x04\x03", 2)}) {
    WriteBatch damaged;
    std::string contents = damaged.Data();
    EncodeFixed32(contents.data() + 8, 1);
    contents += tail;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&damaged, contents).ok());
    EXPECT_TRUE(WriteBatchInternal::Validate(&damaged).IsCorruption());
  }
}

}  // namespace
}  // namespace shale::test
