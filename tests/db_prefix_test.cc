// Prefix extractors (ColumnFamilyOptions::prefix_extractor): the transforms themselves; prefix
// seeks with and without ReadOptions::prefix_same_as_start, both ways, over memtables, L0 and
// deeper levels, checked against a model; the reads the prefix filters save; an extractor
// changed between opens; and filters that hold prefixes only (whole_key_filtering = false).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "shale/perf_context.h"
#include "shale/slice_transform.h"
#include "shale/statistics.h"
#include "src/util/random.h"
#include "table/block_builder.h"
#include "table/filter_block.h"
#include "table/table_properties.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

// Prefix "pNNN" (4 bytes), then "-kMMM".
std::string PrefixOf(int p) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "p%03d", p);
  return buf;
}
std::string KeyOf(int p, int k) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "p%03d-k%03d", p, k);
  return buf;
}

TEST(SliceTransformTest, FixedCappedAndNoop) {
  auto fixed = NewFixedPrefixTransform(3);
  EXPECT_STREQ(fixed->Name(), "shale.FixedPrefix.3");
  EXPECT_TRUE(fixed->InDomain("abc"));
  EXPECT_TRUE(fixed->InDomain("abcd"));
  EXPECT_FALSE(fixed->InDomain("ab"));
  EXPECT_EQ(fixed->Transform("abcd").ToString(), "abc");
  EXPECT_TRUE(fixed->InRange("abc"));
  EXPECT_FALSE(fixed->InRange("abcd"));

  auto capped = NewCappedPrefixTransform(3);
  EXPECT_STREQ(capped->Name(), "shale.CappedPrefix.3");
  EXPECT_TRUE(capped->InDomain(""));
  EXPECT_EQ(capped->Transform("ab").ToString(), "ab");
  EXPECT_EQ(capped->Transform("abcd").ToString(), "abc");
  EXPECT_TRUE(capped->InRange("ab"));
  EXPECT_FALSE(capped->InRange("abcd"));

  auto noop = NewNoopTransform();
  EXPECT_EQ(noop->Transform("abcd").ToString(), "abcd");
  EXPECT_TRUE(noop->InDomain(""));
}

TEST(SliceTransformTest, TablePropertiesRecordWhatTheFilterHolds) {
  TableProperties p;
  p.prefix_extractor = "shale.FixedPrefix.4";
  p.whole_key_filtering = 0;
  TableProperties back;
  ASSERT_TRUE(back.Decode(p.Encode()).ok());
  EXPECT_EQ(back.prefix_extractor, "shale.FixedPrefix.4");
  EXPECT_EQ(back.whole_key_filtering, 0u);
  EXPECT_NE(p.ToString().find("shale.prefix.extractor: shale.FixedPrefix.4"), std::string::npos);
  // A table without the fields (an older one) holds whole keys and no prefixes.
  BlockBuilder older(1);
  older.Add("shale.comparator", "shale.BytewiseComparator");
  TableProperties read;
  ASSERT_TRUE(read.Decode(older.Finish()).ok());
  EXPECT_EQ(read.comparator, "shale.BytewiseComparator");
  EXPECT_EQ(read.whole_key_filtering, 1u);
  EXPECT_TRUE(read.prefix_extractor.empty());
}

// A filter of prefixes only carries a kind of its own: a reader that does not know it answers
// "may match" for every key, and never takes it for a filter of whole keys.
TEST(SliceTransformTest, PrefixOnlyFiltersHaveTheirOwnKind) {
  FilterBlockBuilder whole(10), prefixes(10, kPrefixOnlyBloomKind);
  whole.AddKey("p001");
  prefixes.AddKey("p001");
  const std::string w = whole.Finish(), p = prefixes.Finish();
  FilterBlockReader wr(w), pr(p);
  ASSERT_TRUE(wr.valid());
  ASSERT_TRUE(pr.valid());
  EXPECT_EQ(wr.kind(), kCacheLocalBloomKind);
  EXPECT_EQ(pr.kind(), kPrefixOnlyBloomKind);
  EXPECT_TRUE(pr.KeyMayMatch("p001"));
  EXPECT_EQ(w.substr(0, w.size() - 1), p.substr(0, p.size() - 1));  // the same bits
}

class DBPrefixTest : public DBTestBase {
 protected:
  DBPrefixTest() {
    options_.prefix_extractor = NewFixedPrefixTransform(4);
    options_.statistics = CreateDBStatistics();
  }
  uint64_t Ticker(Tickers t) const { return options_.statistics->getTickerCount(t); }

  // Even prefixes p000..p058 hold keys k000..k019 (odd prefixes hold none): prefixes 0..19 in
  // L1 files (compacted), 20..39 in L0 (flushed), 40..59 in the memtable, with every fifth
  // key of each layer deleted in a newer layer.
  void FillLayers() {
    options_.disable_auto_compactions = true;
    options_.target_file_size_base = 4 << 10;  // several L1 files
    options_.level_compaction_dynamic_level_bytes = false;
    options_.block_size = 512;
    Open();
    auto fill = [&](int from, int to) {
      for (int p = from; p < to; p += 2) {
        for (int k = 0; k < 20; k++) {
          const std::string key = KeyOf(p, k);
          ASSERT_TRUE(Put(key, "v" + key).ok());
          model_[key] = "v" + key;
        }
      }
    };
    auto delete_some = [&](int from, int to) {
      for (int p = from; p < to; p += 2) {
        for (int k = 0; k < 20; k += 5) {
          ASSERT_TRUE(Delete(KeyOf(p, k)).ok());
          model_.erase(KeyOf(p, k));
        }
      }
    };
    fill(0, 20);
    CompactRangeOptions rewrite;
    rewrite.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    ASSERT_TRUE(db_->CompactRange(rewrite, nullptr, nullptr).ok());
    fill(20, 40);
    delete_some(0, 20);
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    fill(40, 60);
    delete_some(20, 60);
  }

  // The keys an iterator shows from Seek(target) forward (up to max keys), then from
  // SeekForPrev(target) backward, as "a b | c d".
  std::string Scan(const ReadOptions& ro, const std::string& target, int max = 1000) {
    auto it = db_->NewIterator(ro);
    std::string out;
    int n = 0;
    for (it->Seek(target); it->Valid() && n < max; it->Next(), n++) {
      EXPECT_EQ(it->value().ToString(), "v" + it->key().ToString());
      out += it->key().ToString() + " ";
    }
    out += "|";
    n = 0;
    for (it->SeekForPrev(target); it->Valid() && n < max; it->Prev(), n++) {
      out += " " + it->key().ToString();
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return out;
  }
  // The same from the model; with an extractor and a target in its domain, only keys of the
  // target's prefix.
  std::string Expect(const std::string& target, const SliceTransform* extractor,
                     int max = 1000) const {
    auto keep = [&](const std::string& k) {
      if (extractor == nullptr || !extractor->InDomain(target)) return true;
      return extractor->InDomain(k) && extractor->Transform(k) == extractor->Transform(target);
    };
    std::string out;
    int n = 0;
    for (auto it = model_.lower_bound(target); it != model_.end() && n < max; ++it, n++) {
      if (!keep(it->first)) break;
      out += it->first + " ";
    }
    out += "|";
    n = 0;
    for (auto it = model_.upper_bound(target); it != model_.begin() && n < max; n++) {
      --it;
      if (!keep(it->first)) break;
      out += " " + it->first;
    }
    return out;
  }
  std::string Expect(const std::string& target, bool same_prefix, int max = 1000) const {
    return Expect(target, same_prefix ? options_.prefix_extractor.get() : nullptr, max);
  }

  std::map<std::string, std::string> model_;
};

// Every seek target shape: a key of a present prefix (live, deleted, between keys, past the
// last), a key of an absent prefix, a bare prefix, a key too short to have a prefix.
std::vector<std::string> Targets() {
  std::vector<std::string> targets = {"", "p", "p00", "p05", "q", "p060-k000", "p999"};
  for (int p = 0; p <= 61; p += 3) {
    targets.push_back(PrefixOf(p));
    for (int k : {0, 3, 5, 19, 25}) targets.push_back(KeyOf(p, k));
    targets.push_back(PrefixOf(p) + "-k003x");
  }
  return targets;
}

TEST_F(DBPrefixTest, PrefixSameAsStartShowsOnlyThePrefixBothWays) {
  FillLayers();
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  for (const std::string& target : Targets()) {
    SCOPED_TRACE(target);
    EXPECT_EQ(Scan(ro, target), Expect(target, true));
    ReadOptions total = ro;
    total.total_order_seek = true;  // same answer, without the filters
    EXPECT_EQ(Scan(total, target), Expect(target, true));
  }
  // Prev after a prefix seek stays in the prefix too.
  auto it = db_->NewIterator(ro);
  it->Seek(KeyOf(42, 1));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), KeyOf(42, 1));
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  EXPECT_GT(Ticker(BLOOM_FILTER_PREFIX_USEFUL), 0u);
}

TEST_F(DBPrefixTest, PrefixSeekWithoutSameAsStartShowsEveryKey) {
  FillLayers();
  const uint64_t useful = Ticker(BLOOM_FILTER_PREFIX_USEFUL);
  for (const std::string& target : Targets()) {
    SCOPED_TRACE(target);
    // Whole scans, and short ones that stop just past the prefix, with the filters used.
    EXPECT_EQ(Scan(ReadOptions(), target), Expect(target, false));
    EXPECT_EQ(Scan(ReadOptions(), target, 20), Expect(target, false, 20));
  }
  EXPECT_GT(Ticker(BLOOM_FILTER_PREFIX_USEFUL), useful);
  // Bounds and prefixes together.
  const std::string lo = KeyOf(10, 0), hi = KeyOf(44, 10);
  const Slice lower(lo), upper(hi);
  ReadOptions bounded;
  bounded.iterate_lower_bound = &lower;
  bounded.iterate_upper_bound = &upper;
  auto it = db_->NewIterator(bounded);
  std::string got, want;
  for (it->Seek(KeyOf(5, 0)); it->Valid(); it->Next()) got += it->key().ToString() + " ";
  for (auto m = model_.lower_bound(lo); m != model_.end() && m->first < hi; ++m) {
    want += m->first + " ";
  }
  EXPECT_EQ(got, want);
}

// Blocks read but the index and filter blocks of tables opened on the way.
uint64_t DataBlockReads() {
  const PerfContext& c = *get_perf_context();
  return c.block_read_count - c.index_block_read_count - c.filter_block_read_count;
}

TEST_F(DBPrefixTest, AbsentPrefixReadsNoDataBlock) {
  FillLayers();
  Reopen();  // the memtable's keys now sit in an L0 table too; cold block cache
  for (int p = 1; p < 60; p += 2) {
    ASSERT_TRUE(Put(KeyOf(p + 1, 50), "v" + KeyOf(p + 1, 50)).ok());  // a memtable again
    model_[KeyOf(p + 1, 50)] = "v" + KeyOf(p + 1, 50);
  }
  SetPerfLevel(PerfLevel::kEnableCount);
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  // A table's filter passes an absent prefix about 1 % of the time (10 bits per key): at most
  // one block read for each time it does.
  get_perf_context()->Reset();
  const uint64_t checked = Ticker(BLOOM_FILTER_PREFIX_CHECKED);
  const uint64_t useful = Ticker(BLOOM_FILTER_PREFIX_USEFUL);
  for (int p = 1; p < 60; p += 2) {
    auto it = db_->NewIterator(ro);
    it->Seek(KeyOf(p, 0));
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().ok());
  }
  const uint64_t passed = (Ticker(BLOOM_FILTER_PREFIX_CHECKED) - checked) -
                          (Ticker(BLOOM_FILTER_PREFIX_USEFUL) - useful);
  const uint64_t asked = Ticker(BLOOM_FILTER_PREFIX_CHECKED) - checked;
  EXPECT_GE(asked, 30u);
  EXPECT_LE(DataBlockReads(), passed);
  EXPECT_LE(passed * 10, asked);  // well above the ~1 % false positive rate, still a filter
  EXPECT_GE(get_perf_context()->bloom_memtable_miss_count, 25u);
  // The same seeks in total order read blocks of every table on the way.
  ReadOptions total = ro;
  total.total_order_seek = true;
  get_perf_context()->Reset();
  for (int p = 1; p < 60; p += 2) {
    auto it = db_->NewIterator(total);
    it->Seek(KeyOf(p, 0));
    EXPECT_FALSE(it->Valid());
  }
  EXPECT_GE(DataBlockReads(), 30u);
  // And the answers with the filters are those of the model.
  for (int p = 1; p < 60; p += 2) EXPECT_EQ(Scan(ro, KeyOf(p, 0)), Expect(KeyOf(p, 0), true));
  SetPerfLevel(PerfLevel::kDisable);
}

TEST_F(DBPrefixTest, ChangedExtractorBetweenOpensStaysCorrect) {
  FillLayers();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  // A shorter fixed prefix, a capped one, none: every answer still matches the model (with
  // prefix_same_as_start, by the extractor now set), and the old tables' prefix filters are
  // not asked.
  struct Case {
    std::shared_ptr<const SliceTransform> extractor;
    bool same_as_written;
  };
  for (const Case& c :
       {Case{NewFixedPrefixTransform(3), false}, Case{NewCappedPrefixTransform(4), false},
        Case{nullptr, false}, Case{NewFixedPrefixTransform(4), true}}) {
    options_.prefix_extractor = c.extractor;
    options_.statistics = CreateDBStatistics();
    Reopen();
    SCOPED_TRACE(c.extractor ? c.extractor->Name() : "none");
    ReadOptions ro;
    ro.prefix_same_as_start = true;
    for (const std::string& target : Targets()) {
      EXPECT_EQ(Scan(ro, target), Expect(target, c.extractor.get())) << target;
      EXPECT_EQ(Scan(ReadOptions(), target), Expect(target, false)) << target;
    }
    EXPECT_EQ(Ticker(BLOOM_FILTER_PREFIX_CHECKED) > 0, c.same_as_written);
  }
  // Tables written under a new extractor get its filter.
  options_.prefix_extractor = NewFixedPrefixTransform(3);
  options_.statistics = CreateDBStatistics();
  Reopen();
  ASSERT_TRUE(Put(KeyOf(70, 1), "v" + KeyOf(70, 1)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  auto it = db_->NewIterator(ReadOptions());
  it->Seek("p80");
  EXPECT_FALSE(it->Valid());
  EXPECT_GT(Ticker(BLOOM_FILTER_PREFIX_USEFUL), 0u);
}

TEST_F(DBPrefixTest, PrefixOnlyFiltersAnswerPointLookupsByPrefix) {
  options_.whole_key_filtering = false;
  FillLayers();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  Reopen();
  // Every key reads back, by Get and by MultiGet.
  std::vector<std::string> keys;
  for (int p = 0; p < 62; p++) {
    for (int k = 0; k < 22; k += 3) keys.push_back(KeyOf(p, k));
  }
  std::vector<Slice> slices(keys.begin(), keys.end());
  std::vector<std::string> values;
  std::vector<Status> st = db_->MultiGet(ReadOptions(), slices, &values);
  for (size_t i = 0; i < keys.size(); i++) {
    auto m = model_.find(keys[i]);
    EXPECT_EQ(Get(keys[i]), m == model_.end() ? "NOT_FOUND" : m->second);
    EXPECT_EQ(st[i].ok() ? values[i] : "NOT_FOUND", m == model_.end() ? "NOT_FOUND" : m->second);
  }
  // An absent key of a present prefix: the filter cannot tell. Of an absent prefix: it can.
  // (Get of p002's key passes the filter of the L1 file holding p002; the L0 tables, which
  // hold other prefixes, rule it out.)
  const uint64_t positive = Ticker(BLOOM_FILTER_FULL_POSITIVE);
  EXPECT_EQ(Get(KeyOf(2, 50)), "NOT_FOUND");
  EXPECT_GT(Ticker(BLOOM_FILTER_FULL_POSITIVE), positive);
  const uint64_t useful = Ticker(BLOOM_FILTER_USEFUL);
  EXPECT_EQ(Get(KeyOf(3, 0)), "NOT_FOUND");
  EXPECT_GT(Ticker(BLOOM_FILTER_USEFUL), useful);
  // A key without a prefix reads (no filter can rule it out).
  ASSERT_TRUE(Put("ab", "vab").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Get("ab"), "vab");
  EXPECT_EQ(Get("a"), "NOT_FOUND");
}

TEST_F(DBPrefixTest, PrefixOnlyFiltersAreSmaller) {
  auto table_bytes = [&](bool whole) {
    options_.whole_key_filtering = whole;
    Close();
    EXPECT_TRUE(DestroyDB(dbname_, options_).ok());
    model_.clear();
    FillLayers();
    EXPECT_TRUE(db_->Flush(FlushOptions()).ok());
    uint64_t bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator(dbname_)) {
      if (e.path().extension() == ".sst") bytes += e.file_size();
    }
    return bytes;
  };
  const uint64_t whole = table_bytes(true);
  const uint64_t prefix_only = table_bytes(false);
  // 600 keys of 30 prefixes: about 600 × 10 bits fewer.
  EXPECT_LT(prefix_only + 500, whole);
  EXPECT_GT(prefix_only, 0u);
}

// The model check, randomized: random seeks and steps both ways, each kind of ReadOptions.
TEST_F(DBPrefixTest, RandomSeeksMatchTheModel) {
  FillLayers();
  Random rnd(301);
  for (int round = 0; round < 400; round++) {
    ReadOptions ro;
    ro.prefix_same_as_start = rnd.OneIn(2);
    ro.total_order_seek = rnd.OneIn(4);
    const std::string target =
        KeyOf(static_cast<int>(rnd.Uniform(64)), static_cast<int>(rnd.Uniform(24)));
    SCOPED_TRACE(target);
    const int steps = 1 + static_cast<int>(rnd.Uniform(50));
    EXPECT_EQ(Scan(ro, target, steps), Expect(target, ro.prefix_same_as_start, steps));
  }
}

}  // namespace
}  // namespace shale::test
