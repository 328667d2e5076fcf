// One iterator contract for every InternalIterator (block, table, memtable, and later the
// merging and DB iterators): given the exact sorted entries an iterator should expose, checks
// full scans both ways, Seek/SeekForPrev at present, absent, before-first and after-last
// targets, and random walks mixing Next and Prev, all against the expected entries.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "shale/comparator.h"
#include "src/base/internal_iterator.h"
#include "src/util/random.h"

namespace shale::test {

using Entries = std::vector<std::pair<std::string, std::string>>;

// Targets to seek to: every key, plus perturbed keys that fall between and around them.
inline std::vector<std::string> SeekTargets(const Entries& entries, Random* rnd) {
  std::vector<std::string> targets = {std::string(), std::string(1, '\xff') + "\xff\xff\xff"};
  for (const auto& [k, v] : entries) {
    targets.push_back(k);
    std::string shorter = k.substr(0, k.size() > 0 ? rnd->Uniform(k.size()) : 0);
    targets.push_back(shorter);
    targets.push_back(k + '\0');
    std::string bumped = k;
    if (!bumped.empty()) bumped.back() = static_cast<char>(bumped.back() + 1);
    targets.push_back(bumped);
  }
  return targets;
}

// it must expose exactly entries (sorted by cmp). Failures name the operation.
// targets: what to Seek/SeekForPrev to (null: SeekTargets(entries), which suits iterators
// over plain byte-string keys; internal-key iterators pass valid internal keys).
inline void CheckIteratorContract(InternalIterator* it, const Entries& entries,
                                  const Comparator* cmp, uint64_t seed,
                                  const std::vector<std::string>* targets = nullptr) {
  Random rnd(seed);
  auto lower_bound = [&](const std::string& t) {
    return static_cast<size_t>(
        std::partition_point(entries.begin(), entries.end(),
                             [&](const auto& e) { return cmp->Compare(e.first, t) < 0; }) -
        entries.begin());
  };
  auto expect_at = [&](size_t i, const std::string& what) {
    if (i >= entries.size()) {
      ASSERT_FALSE(it->Valid()) << what << ": expected the end, at " << it->key().ToString(true);
      ASSERT_TRUE(it->status().ok()) << what << ": " << it->status().ToString();
      return;
    }
    ASSERT_TRUE(it->Valid()) << what << ": expected entry " << i << " ("
                             << Slice(entries[i].first).ToString(true) << "), status "
                             << it->status().ToString();
    ASSERT_EQ(it->key().ToString(), entries[i].first) << what;
    ASSERT_EQ(it->value().ToString(), entries[i].second) << what;
  };

  // Forward and backward scans.
  it->SeekToFirst();
  for (size_t i = 0; i < entries.size(); i++) {
    ASSERT_NO_FATAL_FAILURE(expect_at(i, "forward scan"));
    it->Next();
  }
  ASSERT_NO_FATAL_FAILURE(expect_at(entries.size(), "forward scan end"));
  it->SeekToLast();
  for (size_t i = entries.size(); i-- > 0;) {
    ASSERT_NO_FATAL_FAILURE(expect_at(i, "backward scan"));
    it->Prev();
  }
  ASSERT_FALSE(it->Valid()) << "backward scan end";
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();

  // Seeks.
  const std::vector<std::string> own_targets =
      targets == nullptr ? SeekTargets(entries, &rnd) : std::vector<std::string>();
  for (const std::string& t : targets == nullptr ? own_targets : *targets) {
    const size_t lb = lower_bound(t);
    it->Seek(t);
    ASSERT_NO_FATAL_FAILURE(expect_at(lb, "Seek(" + Slice(t).ToString(true) + ")"));
    // The last entry <= t.
    size_t fp = lb;
    if (lb >= entries.size() || cmp->Compare(entries[lb].first, t) != 0) {
      fp = lb == 0 ? entries.size() : lb - 1;
    }
    it->SeekForPrev(t);
    ASSERT_NO_FATAL_FAILURE(expect_at(fp, "SeekForPrev(" + Slice(t).ToString(true) + ")"));
  }

  // Random walks.
  if (entries.empty()) return;
  for (int walk = 0; walk < 20; walk++) {
    size_t pos = rnd.Uniform(entries.size());
    it->Seek(entries[pos].first);
    for (int step = 0; step < 50; step++) {
      ASSERT_NO_FATAL_FAILURE(expect_at(pos, "random walk"));
      if (rnd.OneIn(2)) {
        it->Next();
        pos++;
        if (pos >= entries.size()) break;
      } else {
        if (pos == 0) {
          it->Prev();
          ASSERT_FALSE(it->Valid());
          break;
        }
        it->Prev();
        pos--;
      }
    }
  }
}

}  // namespace shale::test
