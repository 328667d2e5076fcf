// tools/shale_ldb on a real DB: get/put/delete/scan round trips, dump_wal, manifest_dump,
// verify and stats, hex mode, and clear errors (exit 1) for a missing or damaged DB and bad
// usage (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "shale/column_family.h"
#include "shale/merge_operator.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

#ifdef SHALE_LDB

class ShaleLdbTest : public DBTestBase {
 protected:
  RunResult Ldb(const std::string& args) {
    return RunCommand(std::string(SHALE_LDB) + " --db=" + dbname_ + " " + args);
  }
};

TEST_F(ShaleLdbTest, ReadsAndWritesTheDb) {
  Open();
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(Put("k" + std::to_string(10 + i), "v" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("k99", "in-the-wal").ok());
  Close();

  RunResult r = Ldb("get k12");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "v2\n");
  r = Ldb("get k99");
  EXPECT_EQ(r.output, "in-the-wal\n");
  r = Ldb("get nope");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("not found"), std::string::npos);

  EXPECT_EQ(Ldb("put newkey newvalue").exit_code, 0);
  EXPECT_EQ(Ldb("get newkey").output, "newvalue\n");
  EXPECT_EQ(Ldb("delete k10").exit_code, 0);
  EXPECT_EQ(Ldb("get k10").exit_code, 1);

  r = Ldb("scan --from=k11 --to=k14");
  EXPECT_EQ(r.output, "k11 ==> v1\nk12 ==> v2\nk13 ==> v3\n");
  r = Ldb("scan --limit=2");
  EXPECT_EQ(r.output, "k11 ==> v1\nk12 ==> v2\n");
  // Hex in and out: "k12" is 6b3132.
  r = Ldb("--hex get 0x6b3132");
  EXPECT_EQ(r.output, "7632\n");

  r = Ldb("stats");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Compaction Stats"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Latest sequence"), std::string::npos) << r.output;

  r = Ldb("verify");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(".sst"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MANIFEST"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("DAMAGED"), std::string::npos) << r.output;

  r = Ldb("manifest_dump");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("edits"), std::string::npos) << r.output;
}

TEST_F(ShaleLdbTest, ColumnFamilies) {
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  Close();
  RunResult r = Ldb("list_column_families");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "default\n");
  r = Ldb("--column_family=default get k");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "v\n");
  EXPECT_EQ(Ldb("--column_family=default put k2 v2").exit_code, 0);
  EXPECT_EQ(Ldb("--column_family=default scan").output, "k ==> v\nk2 ==> v2\n");
  // A family the DB does not hold fails the open, naming it; nothing is written.
  r = Ldb("--column_family=lock put k3 v3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("lock"), std::string::npos) << r.output;
  EXPECT_EQ(Ldb("get k3").exit_code, 1);
  r = RunCommand(std::string(SHALE_LDB) + " --db=" + dbname_ + "/nope list_column_families");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(Ldb("list_column_families extra").exit_code, 2);

  // With a second family, every command opens both and acts on the one named.
  Open();
  std::unique_ptr<ColumnFamilyHandle> lock;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "lock", &lock).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), lock.get(), "k", "locked").ok());
  lock.reset();
  Close();
  EXPECT_EQ(Ldb("list_column_families").output, "default\nlock\n");
  EXPECT_EQ(Ldb("--column_family=lock get k").output, "locked\n");
  EXPECT_EQ(Ldb("get k").output, "v\n");
  EXPECT_EQ(Ldb("--column_family=lock put k4 v4").exit_code, 0);
  EXPECT_EQ(Ldb("--column_family=lock scan").output, "k ==> locked\nk4 ==> v4\n");
  r = Ldb("--column_family=write get k");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no column family named: write"), std::string::npos) << r.output;
}

TEST_F(ShaleLdbTest, DumpWalShowsEveryRecord) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Delete("b").ok());
  ASSERT_TRUE(Merge("c", "x").ok());
  Close();
  RunResult r = Ldb("dump_wal");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PUT(a) : 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("DELETE(b)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MERGE(c) : x"), std::string::npos) << r.output;
  // Without the operator the open refuses the log's merge operands and writes nothing.
  r = Ldb("stats");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("merge_operator"), std::string::npos) << r.output;
  r = Ldb("--merge_operator=StringAppendOperator get c");
  EXPECT_EQ(r.output, "x\n");
}

TEST_F(ShaleLdbTest, ClearErrorsForMissingOrDamagedDbsAndBadUsage) {
  RunResult r = Ldb("get k");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  r = Ldb("verify");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no CURRENT"), std::string::npos) << r.output;
  r = Ldb("dump_wal");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no CURRENT"), std::string::npos) << r.output;
  EXPECT_EQ(Ldb("frobnicate").exit_code, 2);  // usage is checked before the DB
  EXPECT_EQ(Ldb("get a b").exit_code, 2);

  Open();
  for (int i = 0; i < 200; i++)
    ASSERT_TRUE(Put("k" + std::to_string(i), std::string(50, 'v')).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  Close();
  // Damage a table in the middle of its data.
  for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
    if (e.path().extension() == ".sst") {
      std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(100);
      f.put('\x7f');
    }
  }
  r = Ldb("verify");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("DAMAGED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checksum mismatch"), std::string::npos) << r.output;

  EXPECT_EQ(Ldb("").exit_code, 2);
  EXPECT_EQ(Ldb("frobnicate").exit_code, 2);
  EXPECT_EQ(Ldb("--bogus get k").exit_code, 2);
  EXPECT_EQ(Ldb("get").exit_code, 2);
  EXPECT_EQ(Ldb("scan --limit=-3").exit_code, 2);
  EXPECT_EQ(RunCommand(std::string(SHALE_LDB) + " get k").exit_code, 2);  // no --db
}

#endif  // SHALE_LDB

}  // namespace
}  // namespace shale::test
