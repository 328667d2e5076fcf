// DeleteRange through the DB: argument rules; every read path (Get, MultiGet with synchronous
// and asynchronous reads, GetMergeOperands, KeyMayExist, iterators both ways, bounded and prefix
// seeks) with the tombstone in the memtable, in L0 and deeper; snapshots; merges over a covered
// base; tombstone-only flushes and compaction outputs; reopen; column families; and a random
// run with many small files against a model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/perf_context.h"
#include "shale/slice_transform.h"
#include "shale/statistics.h"
#include "src/util/random.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

std::string Key(int i) { return NumberedKey(static_cast<uint64_t>(i)); }

using Model = std::map<std::string, std::string>;

class DBRangeDelTest : public DBTestBase {
 protected:
  DBRangeDelTest() { options_.merge_operator = MergeOperators::CreateStringAppendOperator(); }

  // The most files any one level holds.
  int MostFilesInALevel() {
    int most = 0;
    for (int level = 0; level < options_.num_levels; level++) {
      std::string n;
      EXPECT_TRUE(db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &n));
      most = std::max(most, std::stoi(n));
    }
    return most;
  }

  // Every read path agrees with model at snapshot (null: now).
  void Check(const Model& model, const Snapshot* snapshot, const std::string& when) {
    SCOPED_TRACE(when);
    ReadOptions ro;
    ro.snapshot = snapshot;
    std::vector<std::string> keys;
    for (int i = 0; i < 120; i++) keys.push_back(Key(i));
    for (const std::string& k : keys) {
      auto it = model.find(k);
      const std::string want = it == model.end() ? "NOT_FOUND" : it->second;
      ASSERT_EQ(Get(k, snapshot), want) << k;
      PinnableSlice operands[4];
      GetMergeOperandsOptions mo;
      mo.expected_max_number_of_operands = 4;
      int n = 0;
      Status s = db_->GetMergeOperands(ro, k, operands, &mo, &n);
      if (it == model.end()) {
        ASSERT_TRUE(s.IsNotFound()) << k << " " << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << k << " " << s.ToString();
        std::string joined;
        for (int j = 0; j < n; j++) joined += (j > 0 ? "," : "") + operands[j].ToString();
        ASSERT_EQ(joined, want) << k;
      }
      if (it != model.end()) {
        std::string v;
        bool found = false;
        ASSERT_TRUE(db_->KeyMayExist(ro, db_->DefaultColumnFamily(), k, &v, &found)) << k;
      }
    }
    for (bool async : {false, true}) {
      ro.async_io = async;
      std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<std::string> values;
      std::vector<Status> statuses = db_->MultiGet(ro, slices, &values);
      for (size_t i = 0; i < keys.size(); i++) {
        auto it = model.find(keys[i]);
        if (it == model.end()) {
          ASSERT_TRUE(statuses[i].IsNotFound()) << keys[i] << " " << statuses[i].ToString();
        } else {
          ASSERT_TRUE(statuses[i].ok()) << keys[i] << " " << statuses[i].ToString();
          ASSERT_EQ(values[i], it->second) << keys[i];
        }
      }
    }
    ro.async_io = true;
    std::string want, got;
    for (const auto& [k, v] : model) want += k + "=" + v + " ";
    auto iter = db_->NewIterator(ro);
    for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
      got += iter->key().ToString() + "=" + iter->value().ToString() + " ";
    }
    ASSERT_TRUE(iter->status().ok()) << iter->status().ToString();
    ASSERT_EQ(got, want);
    std::string back;
    for (auto r = model.rbegin(); r != model.rend(); ++r) back += r->first + "=" + r->second + " ";
    got.clear();
    for (iter->SeekToLast(); iter->Valid(); iter->Prev()) {
      got += iter->key().ToString() + "=" + iter->value().ToString() + " ";
    }
    ASSERT_EQ(got, back);
    // Seeks into and around deleted stretches, both ways.
    for (int i = 0; i < 120; i += 7) {
      iter->Seek(Key(i));
      auto lb = model.lower_bound(Key(i));
      ASSERT_EQ(iter->Valid(), lb != model.end()) << i;
      if (lb != model.end()) {
        ASSERT_EQ(iter->key().ToString(), lb->first);
      }
      iter->SeekForPrev(Key(i));
      auto ub = model.upper_bound(Key(i));
      ASSERT_EQ(iter->Valid(), ub != model.begin()) << i;
      if (ub != model.begin()) {
        ASSERT_EQ(iter->key().ToString(), std::prev(ub)->first);
      }
    }
  }

  // Writes model's changes for ops: Put(i) for every key, then the given ranges deleted.
  void DeleteRange(Model* model, int from, int to) {
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), Key(from), Key(to)).ok());
    model->erase(model->lower_bound(Key(from)), model->lower_bound(Key(to)));
  }
};

TEST_F(DBRangeDelTest, ArgumentRules) {
  Open();
  ASSERT_TRUE(Put(Key(1), "a").ok());
  ASSERT_TRUE(Put(Key(5), "b").ok());
  // End before begin: refused, nothing deleted; also inside a batch, which is refused whole.
  Status s = db_->DeleteRange(WriteOptions(), Key(9), Key(0));
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  WriteBatch batch;
  ASSERT_TRUE(batch.Put(Key(7), "c").ok());
  ASSERT_TRUE(batch.DeleteRange(Key(9), Key(0)).ok());
  s = db_->Write(WriteOptions(), &batch);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(Get(Key(7)), "NOT_FOUND");
  // An empty range deletes nothing.
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), Key(1), Key(1)).ok());
  EXPECT_EQ(Contents(), Key(1) + "=a " + Key(5) + "=b");
  // Keys over the size limit.
  const std::string huge(DB::kMaxKeySize + 1, 'x');
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), Key(0), huge).IsInvalidArgument());
  EXPECT_TRUE(batch.DeleteRange(huge, huge).IsInvalidArgument());
  // A dropped family's handle, and another DB's family ids inside a batch.
  std::unique_ptr<ColumnFamilyHandle> cf;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "one", &cf).ok());
  ASSERT_TRUE(db_->DropColumnFamily(cf.get()).ok());
  EXPECT_FALSE(db_->DeleteRange(WriteOptions(), cf.get(), Key(0), Key(9)).ok());
  // The end is exclusive.
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), Key(1), Key(5)).ok());
  EXPECT_EQ(Contents(), Key(5) + "=b");
}

// The tombstone in each place a read can meet it, with the keys it covers below it.
TEST_F(DBRangeDelTest, EveryReadPathInEveryPlace) {
  for (int where = 0; where < 4; where++) {
    SCOPED_TRACE(where);
    options_.disable_auto_compactions = true;
    Open();
    Model model;
    for (int i = 0; i < 100; i++) {
      const std::string v = "v" + std::to_string(i);
      ASSERT_TRUE(Put(Key(i), v).ok());
      model[Key(i)] = v;
    }
    // Merge operands over values, to be merged with no base once covered.
    for (int i = 40; i < 60; i += 3) {
      ASSERT_TRUE(Merge(Key(i), "m").ok());
      model[Key(i)] += ",m";
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    const Snapshot* before = db_->GetSnapshot();
    const Model before_model = model;
    ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 20, 30));
    ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 25, 45));
    ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 90, 200));
    // Newer writes over the range stand, merges on a covered key start afresh.
    ASSERT_TRUE(Put(Key(22), "new").ok());
    model[Key(22)] = "new";
    ASSERT_TRUE(Merge(Key(43), "x").ok());
    model[Key(43)] = "x";
    if (where >= 1) {
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // L0
    }
    if (where >= 2) {
      CompactRangeOptions co;
      co.bottommost_level_compaction = BottommostLevelCompaction::kForce;
      ASSERT_TRUE(db_->CompactRange(co, nullptr, nullptr).ok());
    }
    if (where < 3) {
      ASSERT_NO_FATAL_FAILURE(Check(before_model, before, "snapshot"));
    }
    db_->ReleaseSnapshot(before);
    if (where == 3) Reopen();
    ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "latest"));
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

// Iterators move the sorted runs older than a range tombstone past the keys it covers at once,
// after max_sequential_skip_in_iterations such keys in a row, in both directions; runs that
// may hold newer entries (a newer table, the memtable) are walked, and their keys show.
TEST_F(DBRangeDelTest, IteratorsSeekOlderRunsPastCoveredKeys) {
  for (int bottom = 0; bottom < 2; bottom++) {  // the covered keys in an L0 table, or in L1
    SCOPED_TRACE(bottom);
    options_.disable_auto_compactions = true;
    options_.max_sequential_skip_in_iterations = 8;
    Open();
    Model model;
    for (int i = 0; i < 1000; i++) {
      ASSERT_TRUE(Put(Key(i), "v1").ok());
      model[Key(i)] = "v1";
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    if (bottom == 1) {
      ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
    }
    const Snapshot* before = db_->GetSnapshot();
    const Model before_model = model;
    // The newer table: a key older than its tombstone (its oldest entry below the tombstone's
    // sequence), the tombstone, and a key newer than it inside the range.
    ASSERT_TRUE(Put(Key(2000), "v1").ok());
    model[Key(2000)] = "v1";
    ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 100, 900));
    ASSERT_TRUE(Put(Key(500), "v2").ok());
    model[Key(500)] = "v2";
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    // In the memtable: a newer, narrower tombstone (the newer table is older than it, but holds
    // nothing in its range) and a key.
    ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 200, 300));
    ASSERT_TRUE(Put(Key(700), "v3").ok());
    model[Key(700)] = "v3";

    struct Scan {
      std::string keys;
      uint64_t reseeks = 0;
      uint64_t deleted = 0;  // keys stepped over as deleted
    };
    auto scan = [&](ReadOptions ro, bool backward, const std::string* from) {
      SetPerfLevel(PerfLevel::kEnableCount);
      get_perf_context()->Reset();
      Scan out;
      auto it = db_->NewIterator(ro);
      if (backward) {
        from == nullptr ? it->SeekToLast() : it->SeekForPrev(*from);
      } else {
        from == nullptr ? it->SeekToFirst() : it->Seek(*from);
      }
      for (; it->Valid(); backward ? it->Prev() : it->Next()) {
        out.keys += it->key().ToString() + "=" + it->value().ToString() + " ";
      }
      EXPECT_TRUE(it->status().ok()) << it->status().ToString();
      out.reseeks = get_perf_context()->internal_range_del_reseek_count;
      out.deleted = get_perf_context()->internal_delete_skipped_count;
      SetPerfLevel(PerfLevel::kDisable);
      return out;
    };
    auto want = [](const Model& m, const std::string& lower, const std::string& upper,
                   bool backward) {
      std::string keys;
      std::vector<std::string> in;
      for (auto it = m.lower_bound(lower); it != m.end() && it->first < upper; ++it) {
        in.push_back(it->first + "=" + it->second + " ");
      }
      if (backward) std::reverse(in.begin(), in.end());
      for (const std::string& k : in) keys += k;
      return keys;
    };
    const std::string lo = Key(0), hi = Key(100000);
    // What a scan from a seek to Key(k) shows within [lower, upper).
    auto want_from = [&](int k, const std::string& lower, const std::string& upper, bool backward) {
      return backward ? want(model, lower, Key(k + 1), true) : want(model, Key(k), upper, false);
    };
    for (bool backward : {false, true}) {
      SCOPED_TRACE(backward);
      // One move past the 800 covered keys after 9 of them, in either direction.
      Scan all = scan(ReadOptions(), backward, nullptr);
      EXPECT_EQ(all.keys, want(model, lo, hi, backward));
      EXPECT_EQ(all.reseeks, 1u);
      EXPECT_LE(all.deleted, 10u);
      // Seeks into the covered stretch put the older runs past it at once: no covered key is
      // stepped over. Under both tombstones only the narrow one's range is passed.
      const std::string under_both = Key(250);
      Scan from_both = scan(ReadOptions(), backward, &under_both);
      EXPECT_EQ(from_both.keys, want_from(250, lo, hi, backward));
      // Then up to 9 keys of the wide one's before its move.
      EXPECT_LE(from_both.deleted, 9u);
      EXPECT_EQ(from_both.reseeks, 2u);
      const std::string mid = Key(300);
      Scan from_mid = scan(ReadOptions(), backward, &mid);
      EXPECT_EQ(from_mid.keys, want_from(300, lo, hi, backward));
      EXPECT_EQ(from_mid.reseeks, 1u);
      EXPECT_EQ(from_mid.deleted, 0u);
      // Bounds inside the stretch: the move stops at them.
      const std::string lower = Key(150), upper = Key(600);
      const Slice lower_slice(lower), upper_slice(upper);
      ReadOptions bounded;
      bounded.iterate_lower_bound = &lower_slice;
      bounded.iterate_upper_bound = &upper_slice;
      Scan in_bounds = scan(bounded, backward, nullptr);
      EXPECT_EQ(in_bounds.keys, want(model, lower, upper, backward));
      EXPECT_GE(in_bounds.reseeks, 1u);
      EXPECT_LE(in_bounds.deleted, 20u);
      Scan mid_in_bounds = scan(bounded, backward, &mid);
      EXPECT_EQ(mid_in_bounds.keys, want_from(300, lower, upper, backward));
      EXPECT_EQ(mid_in_bounds.reseeks, 1u);
      EXPECT_EQ(mid_in_bounds.deleted, 0u);
      // At a snapshot older than the tombstone nothing is covered and nothing moves.
      ReadOptions at_before;
      at_before.snapshot = before;
      Scan old = scan(at_before, backward, nullptr);
      EXPECT_EQ(old.keys, want(before_model, lo, hi, backward));
      EXPECT_EQ(old.reseeks, 0u);
    }
    // Without the limit's slack every covered key may move the older runs: the same keys.
    options_.max_sequential_skip_in_iterations = 0;
    db_->ReleaseSnapshot(before);
    Reopen();
    for (bool backward : {false, true}) {
      Scan all = scan(ReadOptions(), backward, nullptr);
      EXPECT_EQ(all.keys, want(model, lo, hi, backward)) << backward;
      EXPECT_GE(all.reseeks, 1u);
    }
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
}

// A memtable holding nothing but a tombstone is flushed to a table of its own, and a
// compaction whose keys are all covered still writes the tombstones.
TEST_F(DBRangeDelTest, TombstoneOnlyTablesAndReopen) {
  options_.disable_auto_compactions = true;
  Open();
  Model model;
  for (int i = 0; i < 50; i++) {
    ASSERT_TRUE(Put(Key(i), "v").ok());
    model[Key(i)] = "v";
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 10, 20));
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  std::string files;
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &files));
  EXPECT_EQ(files, "1");
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "tombstone in L0"));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "after reopen"));
  // Only from the WAL: written, then the DB closed before any flush.
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 30, 35));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "replayed from the WAL"));
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "compacted"));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "compacted and reopened"));
}

TEST_F(DBRangeDelTest, ColumnFamiliesKeepTheirOwn) {
  Open();
  std::unique_ptr<ColumnFamilyHandle> cf;
  ASSERT_TRUE(db_->CreateColumnFamily(options_, "one", &cf).ok());
  for (int i = 0; i < 10; i++) {
    ASSERT_TRUE(Put(Key(i), "d").ok());
    ASSERT_TRUE(db_->Put(WriteOptions(), cf.get(), Key(i), "o").ok());
  }
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf.get(), Key(2), Key(8)).ok());
  WriteBatch batch;
  ASSERT_TRUE(batch.DeleteRange(Key(0), Key(3)).ok());
  ASSERT_TRUE(batch.DeleteRange(cf.get(), Key(9), Key(10)).ok());
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  const auto contents = [&](ColumnFamilyHandle* h) {
    std::string r;
    auto it = db_->NewIterator(ReadOptions(), h);
    for (it->SeekToFirst(); it->Valid(); it->Next()) r += it->key().ToString() + " ";
    return r;
  };
  const std::string want_default = Key(3) + " " + Key(4) + " " + Key(5) + " " + Key(6) + " " +
                                   Key(7) + " " + Key(8) + " " + Key(9) + " ";
  const std::string want_one = Key(0) + " " + Key(1) + " " + Key(8) + " ";
  EXPECT_EQ(contents(db_->DefaultColumnFamily()), want_default);
  EXPECT_EQ(contents(cf.get()), want_one);
  ASSERT_TRUE(db_->Flush(FlushOptions(), cf.get()).ok());
  cf.reset();
  Close();
  std::vector<ColumnFamilyDescriptor> descriptors = {{kDefaultColumnFamilyName, options_},
                                                     {"one", options_}};
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  ASSERT_TRUE(DB::Open(options_, dbname_, descriptors, &handles, &db_).ok());
  EXPECT_EQ(contents(handles[0].get()), want_default);
  EXPECT_EQ(contents(handles[1].get()), want_one);
}

// One output per user key (1-byte blocks and target size), so a range tombstone is cut at every
// key: the file holding a1 ends in the sentinel of key25, which the next file starts with. A
// prefix seek to "key2" lands in the first file, whose filter holds no key of that prefix; the
// level must still find key25 in the next one.
TEST_F(DBRangeDelTest, PrefixSeekPastAFileEndedByATombstone) {
  options_.disable_auto_compactions = true;
  options_.block_size = 1;
  options_.target_file_size_base = 1;
  options_.prefix_extractor = NewFixedPrefixTransform(4);
  Open();
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), "key1", "key3").ok());
  ASSERT_TRUE(Put("a1", "x").ok());
  ASSERT_TRUE(Put("key25", "y").ok());
  ASSERT_TRUE(Put("key26", "z").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  CompactRangeOptions co;
  co.bottommost_level_compaction = BottommostLevelCompaction::kForce;  // rewritten, not moved
  ASSERT_TRUE(db_->CompactRange(co, nullptr, nullptr).ok());
  EXPECT_EQ(MostFilesInALevel(), 3);
  for (bool same_prefix : {false, true}) {
    ReadOptions ro;
    ro.prefix_same_as_start = same_prefix;
    auto it = db_->NewIterator(ro);
    it->Seek("key2");
    ASSERT_TRUE(it->Valid()) << same_prefix;
    EXPECT_EQ(it->key().ToString(), "key25");
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "key26");
  }
  EXPECT_EQ(Contents(), "a1=x key25=y key26=z");
}

// Compactions drop what a tombstone covers, and the tombstone itself once nothing below it is in
// its range and every reader sees it; a snapshot keeps both until released.
TEST_F(DBRangeDelTest, CompactionDropsCoveredKeysAndSpentTombstones) {
  options_.disable_auto_compactions = true;
  Open();
  Model model;
  const std::string big(200, 'x');
  for (int i = 0; i < 400; i++) {
    ASSERT_TRUE(Put(Key(i), big).ok());
    model[Key(i)] = big;
  }
  ASSERT_TRUE(Merge(Key(5), "m").ok());
  model[Key(5)] += ",m";
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  CompactRangeOptions co;
  co.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(co, nullptr, nullptr).ok());
  const auto live_bytes = [&] {
    uint64_t size = 0;
    const Range all("", "\xff");
    EXPECT_TRUE(db_->GetApproximateSizes(&all, 1, &size).ok());
    return size;
  };
  const uint64_t full = live_bytes();
  ASSERT_GT(full, 400u * 200);

  const Snapshot* snap = db_->GetSnapshot();
  const Model at_snap = model;
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 0, 390));
  ASSERT_TRUE(Merge(Key(5), "after").ok());  // a merge over the covered key: no base left
  model[Key(5)] = "after";
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(co, nullptr, nullptr).ok());
  // The snapshot still reads everything: nothing was dropped.
  ASSERT_NO_FATAL_FAILURE(Check(at_snap, snap, "snapshot kept"));
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "latest, snapshot kept"));
  EXPECT_GE(live_bytes(), full);
  db_->ReleaseSnapshot(snap);
  ASSERT_TRUE(db_->CompactRange(co, nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "latest, compacted"));
  // The covered values went.
  EXPECT_LT(live_bytes(), full / 10);
  Reopen();
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "reopened"));
}

// memtable_max_range_deletions switches a memtable by its tombstone count, also on recovery.
TEST_F(DBRangeDelTest, MemTableMaxRangeDeletions) {
  options_.memtable_max_range_deletions = 3;
  Open();
  Model model;
  for (int i = 0; i < 60; i++) {
    ASSERT_TRUE(Put(Key(i), "v").ok());
    model[Key(i)] = "v";
  }
  const auto l0_files = [&] {
    std::string n;
    EXPECT_TRUE(db_->GetProperty("shale.num-files-at-level0", &n));
    return std::stoi(n);
  };
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 0, 5));
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 10, 15));
  ASSERT_TRUE(Put(Key(100), "w").ok());
  model[Key(100)] = "w";
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(l0_files(), 0);  // two tombstones: under the limit
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 20, 25));
  ASSERT_TRUE(Put(Key(101), "w").ok());  // the write after the third switches the memtable
  model[Key(101)] = "w";
  ASSERT_TRUE(db_->WaitForCompact().ok());
  EXPECT_EQ(l0_files(), 1);
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "after the switch"));

  // Recovery flushes a replayed memtable that reaches the limit.
  for (int i = 0; i < 3; i++) ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 30 + 5 * i, 32 + 5 * i));
  options_.memtable_max_range_deletions = 2;
  Reopen();
  EXPECT_EQ(l0_files(), 3);  // the first, then two from the replay (2 tombstones + 1)
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "reopened"));
}

// A compaction input that a newer tombstone covers for every reader is dropped without being
// read; a snapshot between the file and the tombstone keeps it read and kept.
TEST_F(DBRangeDelTest, WhollyCoveredInputsAreDroppedUnread) {
  options_.disable_auto_compactions = true;
  options_.target_file_size_base = 8 << 10;
  options_.statistics = CreateDBStatistics();
  Open();
  Statistics* st = options_.statistics.get();
  Model model;
  const std::string big(200, 'y');
  for (int i = 0; i < 120; i++) {
    ASSERT_TRUE(Put(Key(i), big).ok());
    model[Key(i)] = big;
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  CompactRangeOptions co;
  co.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(co, nullptr, nullptr).ok());
  ASSERT_GE(MostFilesInALevel(), 3);  // 120 x 200 bytes in 8 KiB files

  // A snapshot older than the tombstone still reads the files: they are read and kept.
  const Snapshot* snap = db_->GetSnapshot();
  const Model at_snap = model;
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 0, 50));
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  const std::string k0 = Key(0), k50 = Key(50);
  Slice b0(k0), e50(k50);
  ASSERT_TRUE(db_->CompactRange(co, &b0, &e50).ok());
  EXPECT_EQ(st->getTickerCount(COMPACTION_RANGE_DEL_FILES_SKIPPED), 0u);
  ASSERT_NO_FATAL_FAILURE(Check(at_snap, snap, "snapshot kept"));
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "latest, snapshot kept"));
  db_->ReleaseSnapshot(snap);

  // With no snapshot in the way, the files the tombstone covers whole are dropped unread.
  ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, 60, 120));
  ASSERT_TRUE(Put(Key(80), "new").ok());  // newer than the tombstone: kept
  model[Key(80)] = "new";
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  const std::string k60 = Key(60), k120 = Key(120);
  Slice b60(k60), e120(k120);
  ASSERT_TRUE(db_->CompactRange(co, &b60, &e120).ok());
  // Outputs of 8 KiB hold ~35 keys: at least one lies wholly inside [60, 120).
  EXPECT_GE(st->getTickerCount(COMPACTION_RANGE_DEL_FILES_SKIPPED), 1u);
  EXPECT_GE(st->getTickerCount(COMPACTION_RANGE_DEL_BYTES_SKIPPED), 4u << 10);
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "latest, compacted"));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "reopened"));
}

// Many small files, subcompactions and tombstones cut across outputs: random puts, merges and
// range deletions, flushed and compacted, against a model after every phase.
TEST_F(DBRangeDelTest, RandomRangesOverManySmallFiles) {
  options_.write_buffer_size = 16 << 10;
  options_.target_file_size_base = 8 << 10;
  options_.max_bytes_for_level_base = 32 << 10;
  options_.level0_file_num_compaction_trigger = 2;
  options_.max_subcompactions = 3;
  options_.prefix_extractor = NewFixedPrefixTransform(3);
  Open();
  Random rnd(401);
  Model model;
  for (int round = 0; round < 6; round++) {
    for (int op = 0; op < 600; op++) {
      const int i = static_cast<int>(rnd.Uniform(120));
      const std::string value = "r" + std::to_string(round) + "." + std::to_string(op) +
                                std::string(100 + rnd.Uniform(200), 'p');
      const uint64_t kind = rnd.Uniform(20);
      if (kind == 0) {
        const int j = i + 1 + static_cast<int>(rnd.Uniform(15));
        ASSERT_NO_FATAL_FAILURE(DeleteRange(&model, i, j));
      } else if (kind < 4) {
        ASSERT_TRUE(Merge(Key(i), value).ok());
        auto it = model.find(Key(i));
        model[Key(i)] = it == model.end() ? value : it->second + "," + value;
      } else {
        ASSERT_TRUE(Put(Key(i), value).ok());
        model[Key(i)] = value;
      }
    }
    ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "round " + std::to_string(round)));
    ASSERT_TRUE(db_->WaitForCompact().ok());
    ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "compacted, round " + std::to_string(round)));
    if (round % 2 == 1) {
      Reopen();
      ASSERT_NO_FATAL_FAILURE(Check(model, nullptr, "reopened, round " + std::to_string(round)));
    }
  }
}

}  // namespace
}  // namespace shale::test
