// tools/shale_stress end to end: a run verifies, a run killed with SIGKILL verifies, and the
// oracle does catch a lost write (a doctored expected state) and a missing expected state.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "shale/column_family.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

#ifdef SHALE_STRESS

class ShaleStressTest : public ::testing::Test {
 protected:
  RunResult Stress(const std::string& args) { return RunCommand(Command(args)); }
  std::string Command(const std::string& args) const {
    return std::string(SHALE_STRESS) + " --db=" + dir_.path() + "/db --expected_state=" + state_ +
           " --writers=8 --readers=2 --max_key=400 " + args;
  }
  ScratchDir dir_;
  const std::string state_ = dir_.path() + "/expected";
};

TEST_F(ShaleStressTest, RunsAndVerifies) {
  RunResult r = Stress("--destroy --duration=0 --ops_per_writer=300 --seed=7");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("seed: 7 (replay with --seed=7)"), std::string::npos) << r.output;
  // 8 writers x 300 operations, every one acknowledged.
  EXPECT_NE(r.output.find("ran: 2400 writes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 failed checks"), std::string::npos) << r.output;
  r = Stress("--verify_only");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("verified 400 keys: [1-9][0-9]* live, 0 "
                                                     "in-flight writes found new, 0 old, 0 bad")))
      << r.output;
}

TEST_F(ShaleStressTest, KilledRunsVerify) {
  ASSERT_EQ(Stress("--destroy --duration=0 --ops_per_writer=1").exit_code, 0);
  for (int cycle = 0; cycle < 3; cycle++) {
    // Killed mid-run (the run alone would last a minute).
    RunResult r =
        RunCommand("(" + Command("--duration=60") +
                   " >/dev/null 2>&1 & pid=$!; sleep 0.4; kill -9 $pid; wait $pid) 2>/dev/null; "
                   "true");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = Stress("--verify_only");
    ASSERT_EQ(r.exit_code, 0) << "cycle " << cycle << "\n" << r.output;
    EXPECT_NE(r.output.find(", 0 bad"), std::string::npos) << r.output;
  }
}

TEST_F(ShaleStressTest, CatchesALostWriteAndABadExpectedState) {
  ASSERT_EQ(Stress("--destroy --duration=0 --ops_per_writer=200").exit_code, 0);
  // Claim a newer committed version for the first key that has one: the DB "lost" it.
  std::fstream f(state_, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.is_open());
  constexpr std::streamoff kHeader = 24;
  bool doctored = false;
  for (std::streamoff k = 0; k < 400 && !doctored; k++) {
    uint64_t word = 0;
    f.seekg(kHeader + 8 * k);
    f.read(reinterpret_cast<char*>(&word), 8);
    const uint32_t committed = static_cast<uint32_t>(word);
    if (committed != 0 && (committed & 1) == 0) {
      word = committed + (5 << 1);  // five versions later, still live
      f.seekp(kHeader + 8 * k);
      f.write(reinterpret_cast<const char*>(&word), 8);
      doctored = true;
    }
  }
  f.close();
  ASSERT_TRUE(doctored);
  RunResult r = Stress("--verify_only");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(", 1 bad"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected v"), std::string::npos) << r.output;

  // An expected state made for another key space is refused, not misread.
  r = RunCommand(std::string(SHALE_STRESS) + " --db=" + dir_.path() +
                 "/db --expected_state=" + state_ + " --max_key=999 --verify_only");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("for --max_key=999"), std::string::npos) << r.output;
  r = Stress("--no_such_flag=1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Stands in for the stress tool's operator (same name, so its tables open); this test only
// needs to know whether a key exists.
class SameNameOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput&, MergeOperationOutput* out) const override {
    out->new_value = "merged";
    return true;
  }
  const char* Name() const override { return "ShaleStressVersionAdd"; }
};

// With several column families every write goes to all of them in one batch; a family that
// differs from the default one (here: one live key deleted in cf1 alone) fails verification.
TEST_F(ShaleStressTest, FamiliesMustAgree) {
  ASSERT_EQ(Stress("--destroy --duration=0 --ops_per_writer=200 --column_families=3").exit_code, 0);
  RunResult r = Stress("--verify_only --column_families=3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("in 3 column families"), std::string::npos) << r.output;
  {
    Options options;
    options.merge_operator = std::make_shared<SameNameOperator>();
    std::vector<ColumnFamilyDescriptor> descriptors = {
        ColumnFamilyDescriptor(kDefaultColumnFamilyName, options),
        ColumnFamilyDescriptor("cf1", options), ColumnFamilyDescriptor("cf2", options)};
    std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
    std::unique_ptr<DB> db;
    options.avoid_flush_during_recovery = true;
    Status s = DB::Open(options, dir_.path() + "/db", descriptors, &handles, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::string first;
    auto it = db->NewIterator(ReadOptions(), handles[1].get());
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid()) << it->status().ToString();
    first = it->key().ToString();
    it.reset();
    ASSERT_TRUE(db->Delete(WriteOptions(), handles[1].get(), first).ok());
    handles.clear();
    ASSERT_TRUE(db->Close().ok());
  }
  r = Stress("--verify_only --column_families=3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("family cf1 holds nothing"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", 1 bad"), std::string::npos) << r.output;
  // The number of families is the DB's: opening with fewer fails.
  r = Stress("--verify_only --column_families=2");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("column families not opened: cf2"), std::string::npos) << r.output;
}

#endif  // SHALE_STRESS

}  // namespace
}  // namespace shale::test
