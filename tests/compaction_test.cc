// What compaction keeps of one user key's entries (CompactKeyEntries): snapshot stripes,
// hidden versions, tombstones at the bottom, full merges onto a base, a deletion or nothing,
// and partial merges when older entries may lie below.
#include "src/db/compaction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shale/merge_operator.h"
#include "src/base/dbformat.h"
#include "src/db/grandparent_tracker.h"

namespace shale {
namespace {

KeyEntry Entry(SequenceNumber seq, ValueType type, const std::string& value = "") {
  KeyEntry e;
  e.sequence = seq;
  e.type = type;
  AppendInternalKey(&e.internal_key, "k", seq, type);
  e.value = value;
  return e;
}

// "seq:T:value" per surviving entry, newest first (T: V value, D deletion, M merge).
std::string Compact(std::vector<KeyEntry> entries, const std::vector<SequenceNumber>& snapshots,
                    bool nothing_below, const MergeOperator* op) {
  std::vector<KeyEntry> out;
  CompactKeyEntries(
      "k", &entries, snapshots, [&] { return nothing_below; }, op, nullptr, &out);
  std::string s;
  for (const KeyEntry& e : out) {
    const char t = e.type == kTypeValue ? 'V' : e.type == kTypeDeletion ? 'D' : 'M';
    if (!s.empty()) s += ' ';
    s += std::to_string(e.sequence) + ":" + t + ":" + e.value;
    std::string expected_key;
    AppendInternalKey(&expected_key, "k", e.sequence, e.type);
    EXPECT_EQ(e.internal_key, expected_key);
  }
  return s;
}

// Joins like StringAppend but has no PartialMerge.
class FullOnlyOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    if (in.existing_value != nullptr) out->new_value.assign(in.existing_value->ToString());
    for (const Slice& s : in.operand_list) {
      if (s == Slice("bad")) return false;
      if (!out->new_value.empty()) out->new_value += '+';
      out->new_value.append(s.data(), s.size());
    }
    return true;
  }
  const char* Name() const override { return "FullOnly"; }
};

TEST(CompactKeyEntriesTest, NewestValueHidesOlderOnesWithoutSnapshots) {
  EXPECT_EQ(Compact({Entry(9, kTypeValue, "c"), Entry(5, kTypeValue, "b"), Entry(2, kTypeDeletion)},
                    {}, false, nullptr),
            "9:V:c");
}

TEST(CompactKeyEntriesTest, SnapshotsKeepOneVersionPerStripe) {
  // Snapshots 3 and 6 see versions 2 and 5; 9 is the latest.
  EXPECT_EQ(
      Compact({Entry(9, kTypeValue, "c"), Entry(8, kTypeValue, "x"), Entry(5, kTypeValue, "b"),
               Entry(4, kTypeValue, "y"), Entry(2, kTypeValue, "a"), Entry(1, kTypeValue, "z")},
              {3, 6}, false, nullptr),
      "9:V:c 5:V:b 2:V:a");
}

TEST(CompactKeyEntriesTest, TombstoneDroppedOnlyAtTheBottomOfTheOldestStripe) {
  EXPECT_EQ(Compact({Entry(9, kTypeDeletion), Entry(5, kTypeValue, "b")}, {}, true, nullptr), "");
  EXPECT_EQ(Compact({Entry(9, kTypeDeletion), Entry(5, kTypeValue, "b")}, {}, false, nullptr),
            "9:D:");
  // A snapshot at 6 still sees b: the tombstone is in the newest stripe, b in the oldest.
  EXPECT_EQ(Compact({Entry(9, kTypeDeletion), Entry(5, kTypeValue, "b")}, {6}, true, nullptr),
            "9:D: 5:V:b");
}

TEST(CompactKeyEntriesTest, OperandsFullyMergeOntoBaseDeletionOrNothing) {
  auto op = MergeOperators::CreateStringAppendOperator(',');
  EXPECT_EQ(
      Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b"), Entry(5, kTypeValue, "a")}, {},
              false, op.get()),
      "9:V:a,b,c");
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b"), Entry(5, kTypeDeletion),
                     Entry(4, kTypeValue, "old")},
                    {}, false, op.get()),
            "9:V:b,c");
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b")}, {}, true, op.get()),
            "9:V:b,c");
}

TEST(CompactKeyEntriesTest, OperandsPartiallyMergeWhenOlderEntriesMayLieBelow) {
  auto op = MergeOperators::CreateStringAppendOperator(',');
  EXPECT_EQ(
      Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b"), Entry(7, kTypeMerge, "a")}, {},
              false, op.get()),
      "9:M:a,b,c");
  // One operand alone stays as it is.
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "c")}, {}, false, op.get()), "9:M:c");
  // Per stripe: a snapshot at 8 separates {9} from {8, 7}.
  EXPECT_EQ(
      Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b"), Entry(7, kTypeMerge, "a")},
              {8}, false, op.get()),
      "9:M:c 8:M:a,b");
  // The uint64 operator adds operands; an operand of the wrong size refuses the partial merge.
  auto add = MergeOperators::CreateUInt64AddOperator();
  std::string one(8, '\0'), two(8, '\0');
  one[0] = 1;
  two[0] = 2;
  std::vector<KeyEntry> in = {Entry(9, kTypeMerge, one), Entry(8, kTypeMerge, two)};
  std::vector<KeyEntry> out;
  CompactKeyEntries(
      "k", &in, {}, [] { return false; }, add.get(), nullptr, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, kTypeMerge);
  EXPECT_EQ(out[0].value[0], 3);
  EXPECT_EQ(
      Compact({Entry(9, kTypeMerge, one), Entry(8, kTypeMerge, "short")}, {}, false, add.get()),
      "9:M:" + one + " 8:M:short");
}

TEST(CompactKeyEntriesTest, OperatorsWithoutPartialMergeOrFailingMergesKeepOperands) {
  FullOnlyOperator op;
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b")}, {}, false, &op),
            "9:M:c 8:M:b");
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b")}, {}, true, &op),
            "9:V:b+c");
  // A failing full merge leaves operands and base for reads to report.
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "bad"), Entry(5, kTypeValue, "a")}, {}, false, &op),
            "9:M:bad 5:V:a");
  // Without an operator nothing is merged.
  EXPECT_EQ(Compact({Entry(9, kTypeMerge, "c"), Entry(8, kTypeMerge, "b")}, {}, true, nullptr),
            "9:M:c 8:M:b");
}

}  // namespace
}  // namespace shale

namespace shale {
namespace {

std::shared_ptr<FileMetaData> Grandparent(const std::string& lo, const std::string& hi,
                                          uint64_t size) {
  auto f = std::make_shared<FileMetaData>();
  AppendInternalKey(&f->smallest, lo, 1, kTypeValue);
  AppendInternalKey(&f->largest, hi, 1, kTypeValue);
  f->file_size = size;
  return f;
}

// Outputs are cut at grandparent boundaries: once half the target is written (more when many
// boundaries were crossed), when a key skips a large grandparent file, and before an output
// and what it overlaps below would make too large a compaction.
TEST(GrandparentTrackerTest, CutsAtGrandparentBoundaries) {
  const Comparator* ucmp = BytewiseComparator();
  const uint64_t target = 1000;
  const FileList gp = {Grandparent("b", "c", 300), Grandparent("e", "f", 300),
                       Grandparent("h", "i", 5000), Grandparent("k", "l", 300)};
  {
    GrandparentTracker t(ucmp, &gp, target);
    EXPECT_FALSE(t.CutBefore("a", false, 0));    // the first key never cuts
    EXPECT_FALSE(t.CutBefore("b", true, 400));   // enters b-c: under 50% of the target
    EXPECT_FALSE(t.CutBefore("bb", true, 600));  // inside b-c: no boundary
    // Leaves b-c (1 crossing, 2 so far): 600 >= 60% of 1000.
    EXPECT_TRUE(t.CutBefore("d", true, 600));
    EXPECT_FALSE(t.CutBefore("e", true, 100));  // a new output starts its own count
  }
  {
    // A key that skips the 5,000-byte grandparent h-i whole (3 crossings from inside e-f).
    GrandparentTracker t(ucmp, &gp, target);
    EXPECT_FALSE(t.CutBefore("e", false, 0));
    EXPECT_TRUE(t.CutBefore("j", true, 10));
  }
  {
    // Without a skipped file, small outputs are not cut at boundaries.
    GrandparentTracker t(ucmp, &gp, target);
    EXPECT_FALSE(t.CutBefore("a", false, 0));
    EXPECT_FALSE(t.CutBefore("b", true, 10));
    EXPECT_FALSE(t.CutBefore("d", true, 20));
  }
  {
    // An output overlapping more than 25 × the target below is cut at the next boundary.
    const FileList big = {Grandparent("b", "c", 20000), Grandparent("e", "f", 20000)};
    GrandparentTracker t(ucmp, &big, target);
    EXPECT_FALSE(t.CutBefore("b", false, 0));  // starts inside b-c: 20,000 overlapped
    EXPECT_TRUE(t.CutBefore("e", true, 10));   // + e-f: 40,000 > 25,000
  }
  {
    // An output that ended at its size limit passes no count on: the next output, after one
    // boundary, is cut at 55% of the target (with the earlier two boundaries counted, 65%).
    GrandparentTracker t(ucmp, &gp, target);
    EXPECT_FALSE(t.CutBefore("a", false, 0));
    EXPECT_FALSE(t.CutBefore("b", true, 10));
    EXPECT_FALSE(t.CutBefore("d", false, 0));  // the output before ended by size
    EXPECT_TRUE(t.CutBefore("e", true, 560));
  }
  {
    // No grandparents (the output level is the last): never a cut.
    const FileList none;
    GrandparentTracker t(ucmp, &none, target);
    EXPECT_FALSE(t.CutBefore("a", false, 0));
    EXPECT_FALSE(t.CutBefore("z", true, 999));
  }
}

}  // namespace
}  // namespace shale
