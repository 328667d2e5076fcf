// FragmentedRangeTombstoneList against a brute-force answer over the raw tombstones: covering
// sequence numbers at every key and read sequence, fragment shape, snapshot stripes.
#include "src/base/range_tombstone.h"

#include <gtest/gtest.h>

#include <set>

#include "shale/comparator.h"
#include "src/base/dbformat.h"
#include "src/util/random.h"

namespace shale {
namespace {

std::vector<RangeTombstone> Tombstones(
    std::initializer_list<std::tuple<const char*, const char*, SequenceNumber>> list) {
  std::vector<RangeTombstone> out;
  for (const auto& [s, e, q] : list) out.push_back({s, e, q});
  return out;
}

// The newest tombstone seq <= read_seq covering key, from the raw list.
SequenceNumber Oracle(const std::vector<RangeTombstone>& raw, const std::string& key,
                      SequenceNumber read_seq) {
  SequenceNumber best = 0;
  for (const RangeTombstone& t : raw) {
    if (t.start <= key && key < t.end && t.seq <= read_seq) best = std::max(best, t.seq);
  }
  return best;
}

// Fragments are disjoint, ordered, non-empty, with strictly decreasing stacks.
void CheckShape(const FragmentedRangeTombstoneList& list) {
  const std::vector<FragmentedRangeTombstoneList::Fragment>& f = list.fragments();
  size_t entries = 0;
  for (size_t i = 0; i < f.size(); i++) {
    EXPECT_LT(f[i].start, f[i].end);
    if (i > 0) {
      EXPECT_LE(f[i - 1].end, f[i].start);
    }
    const auto seqs = list.seqs(f[i]);
    ASSERT_FALSE(seqs.empty());
    for (size_t j = 1; j < seqs.size(); j++) EXPECT_GT(seqs[j - 1], seqs[j]);
    entries += seqs.size();
  }
  EXPECT_EQ(entries, list.num_entries());
}

TEST(RangeTombstoneTest, OverlapsAreCutIntoStacks) {
  // [a, e)@5 and [c, g)@9 and [c, d)@3: fragments a-c{5}, c-d{9,5,3}, d-e{9,5}, e-g{9}.
  FragmentedRangeTombstoneList list(BytewiseComparator(),
                                    Tombstones({{"a", "e", 5}, {"c", "g", 9}, {"c", "d", 3}}));
  CheckShape(list);
  ASSERT_EQ(list.fragments().size(), 4u);
  const std::vector<std::pair<std::string, std::vector<SequenceNumber>>> want = {
      {"a", {5}}, {"c", {9, 5, 3}}, {"d", {9, 5}}, {"e", {9}}};
  for (size_t i = 0; i < want.size(); i++) {
    EXPECT_EQ(list.fragments()[i].start, want[i].first);
    const auto seqs = list.seqs(list.fragments()[i]);
    EXPECT_EQ(std::vector<SequenceNumber>(seqs.begin(), seqs.end()), want[i].second);
  }
  EXPECT_EQ(list.fragments().back().end, "g");
  EXPECT_EQ(list.num_entries(), 7u);
  EXPECT_EQ(list.smallest_seq(), 3u);
  EXPECT_EQ(list.largest_seq(), 9u);

  EXPECT_EQ(list.MaxCoveringSeq("c", kMaxSequenceNumber), 9u);
  EXPECT_EQ(list.MaxCoveringSeq("c", 8), 5u);
  EXPECT_EQ(list.MaxCoveringSeq("c", 4), 3u);
  EXPECT_EQ(list.MaxCoveringSeq("c", 2), 0u);
  EXPECT_EQ(list.MaxCoveringSeq("g", kMaxSequenceNumber), 0u);  // end is exclusive
  EXPECT_EQ(list.MaxCoveringSeq("0", kMaxSequenceNumber), 0u);
  EXPECT_EQ(list.FindFragment("ccc"), 1u);
  EXPECT_EQ(list.FindFragment("h"), list.fragments().size());
}

TEST(RangeTombstoneTest, EmptyRangesAndGapsLeaveNoFragments) {
  FragmentedRangeTombstoneList none(BytewiseComparator(),
                                    Tombstones({{"b", "b", 4}, {"d", "c", 5}}));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.MaxCoveringSeq("b", kMaxSequenceNumber), 0u);

  FragmentedRangeTombstoneList gap(BytewiseComparator(),
                                   Tombstones({{"a", "b", 4}, {"x", "z", 2}}));
  CheckShape(gap);
  ASSERT_EQ(gap.fragments().size(), 2u);
  EXPECT_EQ(gap.MaxCoveringSeq("m", kMaxSequenceNumber), 0u);
  EXPECT_EQ(gap.MaxCoveringSeq("a", kMaxSequenceNumber), 4u);
  EXPECT_EQ(gap.MaxCoveringSeq("y", kMaxSequenceNumber), 2u);
}

TEST(RangeTombstoneTest, SnapshotsKeepTheNewestOfEachStripe) {
  // Snapshots at 4 and 8: stripes (..4], (4..8], (8..]. Seqs 2,3 | 5,7 | 9,12 over one range.
  const std::vector<SequenceNumber> snapshots = {4, 8};
  FragmentedRangeTombstoneList list(BytewiseComparator(),
                                    Tombstones({{"a", "z", 2},
                                                {"a", "z", 3},
                                                {"a", "z", 5},
                                                {"a", "z", 7},
                                                {"a", "z", 9},
                                                {"a", "z", 12}}),
                                    &snapshots);
  ASSERT_EQ(list.fragments().size(), 1u);
  const auto seqs = list.seqs(list.fragments()[0]);
  EXPECT_EQ(std::vector<SequenceNumber>(seqs.begin(), seqs.end()),
            (std::vector<SequenceNumber>{12, 7, 3}));
  // What each snapshot and the newest reader see is unchanged.
  for (SequenceNumber read : {SequenceNumber{4}, SequenceNumber{8}, kMaxSequenceNumber}) {
    EXPECT_GT(list.MaxCoveringSeq("m", read), 0u);
  }
}

TEST(RangeTombstoneTest, RandomListsAgreeWithTheRawTombstones) {
  Random rnd(301);
  for (int round = 0; round < 300; round++) {
    std::vector<RangeTombstone> raw;
    const int n = 1 + static_cast<int>(rnd.Uniform(12));
    std::set<SequenceNumber> used;
    for (int i = 0; i < n; i++) {
      std::string a(1, static_cast<char>('a' + rnd.Uniform(20)));
      std::string b(1, static_cast<char>('a' + rnd.Uniform(20)));
      if (rnd.OneIn(4)) a += static_cast<char>('a' + rnd.Uniform(3));
      SequenceNumber seq = 1 + rnd.Uniform(40);
      if (!used.insert(seq).second) continue;  // a batch gives each record its own sequence
      raw.push_back({a, b, seq});
    }
    FragmentedRangeTombstoneList list(BytewiseComparator(), raw);
    ASSERT_NO_FATAL_FAILURE(CheckShape(list));
    // Rebuilding from the stored (fragment, seq) pairs gives the same list.
    std::vector<RangeTombstone> stored;
    for (const auto& f : list.fragments()) {
      for (SequenceNumber s : list.seqs(f)) stored.push_back({f.start, f.end, s});
    }
    FragmentedRangeTombstoneList again(BytewiseComparator(), stored);
    ASSERT_EQ(again.num_entries(), list.num_entries());
    for (char c = 'a'; c <= 'u'; c++) {
      for (const std::string& key : {std::string(1, c), std::string(1, c) + "a",
                                     std::string(1, c) + "b", std::string(1, c) + "z"}) {
        for (SequenceNumber read : {SequenceNumber{0}, SequenceNumber{1}, SequenceNumber{10},
                                    SequenceNumber{20}, SequenceNumber{39}, kMaxSequenceNumber}) {
          ASSERT_EQ(list.MaxCoveringSeq(key, read), Oracle(raw, key, read))
              << "round " << round << " key " << key << " read " << read;
          ASSERT_EQ(again.MaxCoveringSeq(key, read), Oracle(raw, key, read));
        }
      }
    }
    // CoversRange: every key of the range has a tombstone in (newer_than, at_most]. The sample
    // holds every fragment bound, so each stretch between bounds has a key in it.
    std::vector<std::string> sample;
    for (char c = 'a'; c <= 'u'; c++) {
      for (const char* tail : {"", "a", "b", "c", "z"}) sample.push_back(std::string(1, c) + tail);
    }
    for (int q = 0; q < 40; q++) {
      const std::string& b = sample[rnd.Uniform(sample.size())];
      const std::string& e = sample[rnd.Uniform(sample.size())];
      const bool inclusive = rnd.OneIn(2);
      const SequenceNumber newer_than = rnd.Uniform(30), at_most = newer_than + rnd.Uniform(15);
      bool want = true;
      for (const std::string& k : sample) {
        if (k < b || k > e || (!inclusive && k == e)) continue;
        bool covered = false;
        for (const RangeTombstone& t : raw) {
          covered |= t.start <= k && k < t.end && t.seq > newer_than && t.seq <= at_most;
        }
        want &= covered;
      }
      ASSERT_EQ(list.CoversRange(b, e, inclusive, newer_than, at_most), want)
          << "round " << round << " [" << b << ", " << e << (inclusive ? "]" : ")") << " ("
          << newer_than << ", " << at_most << "]";
    }
    // With snapshots, each snapshot and the newest reader still find the newest tombstone they
    // see: it is the one kept for their stripe.
    std::vector<SequenceNumber> snapshots = {5, 15, 25};
    FragmentedRangeTombstoneList striped(BytewiseComparator(), raw, &snapshots);
    ASSERT_NO_FATAL_FAILURE(CheckShape(striped));
    for (char c = 'a'; c <= 'u'; c++) {
      const std::string key(1, c);
      for (SequenceNumber read :
           {SequenceNumber{5}, SequenceNumber{15}, SequenceNumber{25}, kMaxSequenceNumber}) {
        ASSERT_EQ(striped.MaxCoveringSeq(key, read), Oracle(raw, key, read));
      }
    }
  }
}

}  // namespace
}  // namespace shale
