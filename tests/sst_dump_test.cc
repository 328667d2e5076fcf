// tools/sst_dump on real files: scan, check, properties and verify on a good table, and a clear
// message with exit status 1 on a damaged one.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "shale/comparator.h"
#include "shale/file_system.h"
#include "src/base/dbformat.h"
#include "table/table_builder.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

#ifdef SHALE_SST_DUMP

RunResult RunSstDump(const std::string& args) {
  return RunCommand(std::string(SHALE_SST_DUMP) + " " + args);
}

class SstDumpTest : public ::testing::Test {
 protected:
  SstDumpTest() : path_(dir_.path() + "/000007.sst") {
    InternalKeyComparator icmp(BytewiseComparator());
    std::unique_ptr<WritableFile> file;
    EXPECT_TRUE(FileSystem::Default()->NewWritableFile(path_, FileOptions(), &file).ok());
    TableBuilderOptions o;
    o.comparator = &icmp;
    o.block_size = 256;
    TableBuilder b(o, file.get());
    for (int i = 0; i < 100; i++) {
      std::string k;
      AppendInternalKey(&k, "key" + std::to_string(1000 + i), 10 + i,
                        i % 10 == 0 ? kTypeDeletion : kTypeValue);
      EXPECT_TRUE(b.Add(k, i % 10 == 0 ? "" : "value" + std::to_string(i)).ok());
    }
    EXPECT_TRUE(b.AddRangeTombstone("key1020", "key1030", 200).ok());
    EXPECT_TRUE(b.Finish().ok());
    EXPECT_TRUE(file->Close().ok());
  }

  ScratchDir dir_;
  std::string path_;
};

TEST_F(SstDumpTest, CommandsOnAGoodFile) {
  RunResult r = RunSstDump("--file=" + path_ + " --command=scan");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("'key1001' seq:11, type:1 => value1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'key1010' seq:20, type:0 => "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Range deletions:\n'key1020' seq:200, type:15 => 'key1030'"),
            std::string::npos)
      << r.output;

  r = RunSstDump("--file=" + path_ + " --command=check");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("check: OK, 100 entries"), std::string::npos) << r.output;

  r = RunSstDump("--file=" + path_ + " --command=properties");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("shale.num.entries: 100"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shale.num.deletions: 10"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shale.filter.kind: cachelocalbloom"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("data block 0: offset 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("filter block"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shale.num.range.deletions: 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("range deletions: 1 stored, 1 fragments"), std::string::npos) << r.output;

  r = RunSstDump("--file=" + path_ + " --command=verify");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("The file is ok"), std::string::npos) << r.output;
}

TEST_F(SstDumpTest, DamagedFileAndBadFlags) {
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x7f');
  }
  RunResult r = RunSstDump("--file=" + path_ + " --command=verify");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Corruption"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checksum mismatch"), std::string::npos) << r.output;
  r = RunSstDump("--file=" + path_ + " --command=scan");
  EXPECT_EQ(r.exit_code, 1) << r.output;

  r = RunSstDump("--file=" + dir_.path() + "/missing.sst");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = RunSstDump("--file=" + path_ + " --command=frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = RunSstDump("--file=" + path_ + " --no_such_flag=1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

#endif  // SHALE_SST_DUMP

}  // namespace
}  // namespace shale::test
