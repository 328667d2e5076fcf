// What applications use with ranges: GetApproximateSizes, GetApproximateMemTableStats and
// KeyMayExist.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/column_family.h"
#include "shale/file_system.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06d", i);
  return buf;
}

class DBRangeHelpersTest : public DBTestBase {
 protected:
  uint64_t Size(int from, int to, bool files = true, bool memtables = false) {
    const std::string a = Key(from), b = Key(to);
    Range r(a, b);
    SizeApproximationOptions o;
    o.include_files = files;
    o.include_memtables = memtables;
    uint64_t size = 0;
    Status s = db_->GetApproximateSizes(o, db_->DefaultColumnFamily(), &r, 1, &size);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return size;
  }
  uint64_t TableBytes() {
    uint64_t total = 0;
    std::vector<std::string> children;
    EXPECT_TRUE(options_.file_system->GetChildren(dbname_, &children).ok());
    for (const std::string& c : children) {
      uint64_t size = 0;
      if (c.ends_with(".sst") && options_.file_system->GetFileSize(dbname_ + "/" + c, &size).ok()) {
        total += size;
      }
    }
    return total;
  }
};

TEST_F(DBRangeHelpersTest, ApproximateSizesOfTablesFollowTheKeys) {
  options_.disable_auto_compactions = true;
  options_.target_file_size_base = 256 << 10;
  options_.file_system = FileSystem::Default();
  Open();
  const std::string value(100, 'v');
  for (int i = 0; i < 20000; i++) ASSERT_TRUE(Put(Key(i), value).ok());
  CompactRangeOptions rewrite;
  rewrite.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(rewrite, nullptr, nullptr).ok());
  const uint64_t tables = TableBytes();
  ASSERT_GT(tables, 2u << 20);
  const uint64_t all = Size(0, 20000);
  EXPECT_GT(all, tables * 9 / 10);
  EXPECT_LE(all, tables);
  // Ranges that cut files: proportional to their keys, within 10% of the whole.
  for (const auto& [from, to] :
       {std::pair{0, 10000}, {5000, 6000}, {1234, 18765}, {19990, 20000}}) {
    const uint64_t got = Size(from, to);
    const uint64_t want = all * static_cast<uint64_t>(to - from) / 20000;
    EXPECT_LE(got, want + all / 10) << from << ".." << to;
    EXPECT_GE(got + all / 10, want) << from << ".." << to;
  }
  EXPECT_EQ(Size(7, 7), 0u);             // empty range
  EXPECT_EQ(Size(30000, 40000), 0u);     // after every key
  EXPECT_LT(Size(100, 101), 16u << 10);  // one key: within a block or two
  // Memtables: counted only when asked.
  for (int i = 0; i < 1000; i++) ASSERT_TRUE(Put("m" + Key(i), value).ok());
  const std::string a = "m", b = "n";
  Range r(a, b);
  uint64_t size = 1;
  ASSERT_TRUE(db_->GetApproximateSizes(&r, 1, &size).ok());
  EXPECT_EQ(size, 0u);
  SizeApproximationOptions with_memtables;
  with_memtables.include_memtables = true;
  ASSERT_TRUE(
      db_->GetApproximateSizes(with_memtables, db_->DefaultColumnFamily(), &r, 1, &size).ok());
  EXPECT_GE(size, 1000u * (100 + 7 + 8));
  EXPECT_LT(size, 1000u * (100 + 7 + 8) * 2);
}

TEST_F(DBRangeHelpersTest, BadArguments) {
  Open();
  const std::string a = "a", b = "b";
  Range backwards(b, a);
  uint64_t size = 0;
  EXPECT_TRUE(db_->GetApproximateSizes(&backwards, 1, &size).IsInvalidArgument());
  Range r(a, b);
  SizeApproximationOptions nothing;
  nothing.include_files = false;
  EXPECT_TRUE(db_->GetApproximateSizes(nothing, db_->DefaultColumnFamily(), &r, 1, &size)
                  .IsInvalidArgument());
  std::unique_ptr<ColumnFamilyHandle> cf;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "gone", &cf).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf.get(), "a1", "v").ok());
  ASSERT_TRUE(db_->DropColumnFamily(cf.get()).ok());
  EXPECT_TRUE(db_->GetApproximateSizes(SizeApproximationOptions(), cf.get(), &r, 1, &size)
                  .IsInvalidArgument());
  uint64_t count = 7;
  db_->GetApproximateMemTableStats(cf.get(), r, &count, &size);
  EXPECT_EQ(count, 0u);
  db_->GetApproximateMemTableStats(backwards, &count, &size);
  EXPECT_EQ(count, 0u);
  std::string v;
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), cf.get(), "a1", &v));  // Get reports the error
}

TEST_F(DBRangeHelpersTest, MemTableStatsCountEveryEntryInTheRange) {
  Open();
  for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(Key(i), "value").ok());
  for (int i = 0; i < 10; i++) ASSERT_TRUE(Put(Key(i), "again").ok());  // second versions
  ASSERT_TRUE(Delete(Key(50)).ok());
  const std::string a = Key(0), b = Key(60);
  uint64_t count = 0, size = 0;
  db_->GetApproximateMemTableStats(Range(a, b), &count, &size);
  EXPECT_EQ(count, 60u + 10 + 1);
  EXPECT_EQ(size, 70u * (7 + 8 + 5) + (7 + 8));
  // Immutable memtables count too; flushed entries do not.
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put(Key(1), "x").ok());
  db_->GetApproximateMemTableStats(Range(a, b), &count, &size);
  EXPECT_EQ(count, 1u);
}

TEST_F(DBRangeHelpersTest, KeyMayExist) {
  options_.disable_auto_compactions = true;
  Open();
  for (int i = 0; i < 2000; i += 2) ASSERT_TRUE(Put(Key(i), "v" + std::to_string(i)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("mem", "here").ok());
  ASSERT_TRUE(Delete(Key(10)).ok());
  std::string v;
  bool found = false;
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), "mem", &v, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(v, "here");
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), Key(10), &v, &found));  // deleted in memory
  EXPECT_FALSE(found);
  // In a table: may exist, value not read.
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), Key(12), &v, &found));
  EXPECT_FALSE(found);
  // Absent keys in the table's range: its Bloom filter (10 bits per key) rules out nearly all,
  // once its reader is open (KeyMayExist opens none).
  std::string probe;
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(0), &probe).ok());
  int maybe = 0;
  for (int i = 1; i < 2000; i += 2) maybe += db_->KeyMayExist(ReadOptions(), Key(i), &v);
  EXPECT_LT(maybe, 50);
  // A snapshot from before the deletion still sees the key.
  ASSERT_TRUE(Put("late", "1").ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(Delete("late").ok());
  ReadOptions at;
  at.snapshot = snap;
  EXPECT_TRUE(db_->KeyMayExist(at, "late", &v, &found));
  EXPECT_TRUE(found);
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "late", &v, &found));
  db_->ReleaseSnapshot(snap);
  // Without filters every key in a table's range may exist.
  options_.bloom_bits_per_key = 0;
  Reopen();
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(0), &probe).ok());  // the reader is open
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), Key(1), &v));
  // Outside every table's range: certainly absent.
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "zzz", &v));
}

}  // namespace
}  // namespace shale::test
