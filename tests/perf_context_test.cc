// PerfContext: per-thread counts and timings for known workloads, the levels, and the report.
#include "shale/perf_context.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/slice_transform.h"
#include "shale/statistics.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

class PerfContextTest : public DBTestBase {
 protected:
  PerfContextTest() { options_.block_cache = NewLRUCache(64 << 20); }
  ~PerfContextTest() override { SetPerfLevel(PerfLevel::kDisable); }

  // Starts counting (and, with timing, timing) from zero on this thread.
  static PerfContext* Start(PerfLevel level) {
    SetPerfLevel(level);
    get_perf_context()->Reset();
    return get_perf_context();
  }

  // keys 0, 2, 4 ... 2(n-1) in one bottom-level table, so odd keys fall inside its range.
  void LoadEvenKeysIntoOneTable(int n) {
    for (int i = 0; i < n; i++) ASSERT_TRUE(Put(NumberedKey(2 * i), std::string(100, 'v')).ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  }
};

TEST_F(PerfContextTest, DisabledByDefaultRecordsNothing) {
  EXPECT_EQ(GetPerfLevel(), PerfLevel::kDisable);
  get_perf_context()->Reset();
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(get_perf_context()->ToString(/*exclude_zero_counters=*/true), "");
}

TEST_F(PerfContextTest, CountLevelCountsWithoutTiming) {
  Open();
  ASSERT_TRUE(Put("a", "12345").ok());
  PerfContext* ctx = Start(PerfLevel::kEnableCount);
  EXPECT_EQ(Get("a"), "12345");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(ctx->get_from_memtable_count, 2u);
  EXPECT_EQ(ctx->get_read_bytes, 5u);
  // With the memtable Bloom filter on, "a" passes it; "b" almost surely does not.
  EXPECT_EQ(ctx->bloom_memtable_hit_count + ctx->bloom_memtable_miss_count, 2u);
  EXPECT_GE(ctx->bloom_memtable_hit_count, 1u);
  EXPECT_EQ(ctx->get_from_memtable_time, 0u);
  ASSERT_TRUE(Put("c", "x").ok());
  EXPECT_EQ(ctx->write_wal_time, 0u);
  EXPECT_EQ(ctx->write_memtable_time, 0u);
}

TEST_F(PerfContextTest, TableReadsFilterAndCache) {
  Open();
  LoadEvenKeysIntoOneTable(2000);
  Reopen();  // an empty cache and unopened tables
  PerfContext* ctx = Start(PerfLevel::kEnableTime);

  EXPECT_EQ(Get(NumberedKey(1000)), std::string(100, 'v'));
  EXPECT_LE(ctx->index_block_read_count, 1u);  // 1 if this Get opened the table
  EXPECT_EQ(ctx->bloom_sst_hit_count, 1u);
  EXPECT_EQ(ctx->block_cache_hit_count, 0u);
  EXPECT_EQ(ctx->block_read_count, 1u + ctx->index_block_read_count + ctx->filter_block_read_count);
  EXPECT_GT(ctx->block_read_byte, 100u);
  EXPECT_GT(ctx->block_read_time, 0u);
  EXPECT_GT(ctx->get_from_output_files_time, 0u);
  EXPECT_EQ(ctx->get_read_bytes, 100u);

  // The same key again: its block comes from the cache.
  ctx->Reset();
  EXPECT_EQ(Get(NumberedKey(1000)), std::string(100, 'v'));
  EXPECT_EQ(ctx->block_read_count, 0u);
  EXPECT_EQ(ctx->block_cache_hit_count, 1u);
  EXPECT_EQ(ctx->bloom_sst_hit_count, 1u);

  // Absent keys inside the table's range: every one asks the filter, nearly all are ruled out,
  // and only the false positives reach a data block.
  ctx->Reset();
  for (int i = 0; i < 1000; i++) EXPECT_EQ(Get(NumberedKey(2 * i + 1)), "NOT_FOUND");
  EXPECT_EQ(ctx->bloom_sst_hit_count + ctx->bloom_sst_miss_count, 1000u);
  EXPECT_GE(ctx->bloom_sst_miss_count, 950u);
  EXPECT_LE(ctx->block_cache_hit_count + ctx->block_read_count, ctx->bloom_sst_hit_count);
  EXPECT_EQ(ctx->get_read_bytes, 0u);
}

TEST_F(PerfContextTest, MultiGetAndAsyncReads) {
  Open();
  LoadEvenKeysIntoOneTable(2000);
  Reopen();
  ReadOptions ro;
  ro.async_io = true;
  std::vector<std::string> storage;
  for (int i = 0; i < 16; i++) storage.push_back(NumberedKey(200 * i));
  std::vector<Slice> keys(storage.begin(), storage.end());
  std::vector<PinnableSlice> values(keys.size());
  std::vector<Status> statuses(keys.size());
  // Open the table first so the counts below are the batch's own (a key absent from the last
  // block, so a filter false positive reads no block the batch needs).
  EXPECT_EQ(Get(NumberedKey(3997)), "NOT_FOUND");
  PerfContext* ctx = Start(PerfLevel::kEnableCount);
  db_->MultiGet(ro, keys.size(), keys.data(), values.data(), statuses.data());
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ctx->multiget_read_bytes, 16u * 100);
  EXPECT_EQ(ctx->get_from_memtable_count, 16u);
  EXPECT_EQ(ctx->bloom_sst_hit_count, 16u);
  // 16 keys 400 key numbers apart: each in its own data block, read once.
  EXPECT_EQ(ctx->block_read_count, 16u);
  std::string path;
  ASSERT_TRUE(db_->GetProperty("shale.io.async-path", &path));
  if (path == "io_uring") {
    EXPECT_EQ(ctx->multiget_async_read_count, 16u);
  }
}

// A seek over four sorted runs (three level-0 tables over the bottom level) stages the data
// block it lands in in each and reads the four together (async_io); cached, it reads none;
// without async_io it reads them one after another.
TEST_F(PerfContextTest, SeekReadsTheBlocksOfAllSortedRunsTogether) {
  options_.disable_auto_compactions = true;
  Open();
  LoadEvenKeysIntoOneTable(2000);
  for (int t = 0; t < 3; t++) {
    for (int i = t; i < 2000; i += 3) {
      ASSERT_TRUE(Put(NumberedKey(2 * i), std::string(100, static_cast<char>('a' + t))).ok());
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  std::string n;
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &n));
  ASSERT_EQ(n, "3");
  Reopen();
  // Open the four tables first: a key within each one's range but absent (the filters rule it
  // out, or a false positive reads a last block, away from the seeks below).
  EXPECT_EQ(Get(NumberedKey(3993)), "NOT_FOUND");
  std::string path;
  ASSERT_TRUE(db_->GetProperty("shale.io.async-path", &path));
  const auto seek = [&](bool async_io, int key) {
    ReadOptions ro;
    ro.async_io = async_io;
    auto it = db_->NewIterator(ro);
    it->Seek(NumberedKey(key));
    ASSERT_TRUE(it->Valid()) << it->status().ToString();
    EXPECT_EQ(it->key().ToString(), NumberedKey(key));
    // Key 2i was last written by level-0 table i % 3.
    EXPECT_EQ(it->value().ToString(), std::string(100, static_cast<char>('a' + (key / 2) % 3)));
  };
  PerfContext* ctx = Start(PerfLevel::kEnableCount);
  ASSERT_NO_FATAL_FAILURE(seek(true, 1000));
  // Data blocks only: a run's seek may go on into its next block.
  EXPECT_EQ(ctx->index_block_read_count + ctx->filter_block_read_count, 0u);
  EXPECT_GE(ctx->block_read_count, 4u);
  if (!path.starts_with("sync (")) {  // a reader runs the batch
    EXPECT_EQ(ctx->iter_async_read_count, 4u);
    EXPECT_EQ(ctx->iter_async_batch_count, 1u);
  }

  // Again: every block is cached, nothing is read.
  ctx->Reset();
  ASSERT_NO_FATAL_FAILURE(seek(true, 1000));
  EXPECT_EQ(ctx->block_read_count, 0u);
  EXPECT_GE(ctx->block_cache_hit_count, 4u);
  EXPECT_EQ(ctx->iter_async_batch_count, 0u);

  // Elsewhere without async_io: read one by one.
  ctx->Reset();
  ASSERT_NO_FATAL_FAILURE(seek(false, 3000));
  EXPECT_EQ(ctx->index_block_read_count + ctx->filter_block_read_count, 0u);
  EXPECT_GE(ctx->block_read_count, 4u);
  EXPECT_EQ(ctx->iter_async_read_count, 0u);
  EXPECT_EQ(ctx->iter_async_batch_count, 0u);
}

// A prefix seek reads the blocks of the sorted runs whose filters may hold the prefix together;
// the runs ruled out are read only if the scan leaves the prefix, and then together too.
TEST_F(PerfContextTest, PrefixSeekReadsTheBlocksOfTheMatchingRunsTogether) {
  options_.disable_auto_compactions = true;
  options_.prefix_extractor = NewFixedPrefixTransform(4);
  options_.statistics = CreateDBStatistics();
  Open();
  // "pNNN" then a two-digit suffix. Bottom level: every prefix, even suffixes 0..38.
  const auto key = [](int prefix, int suffix) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "p%03d%02d", prefix, suffix);
    return std::string(buf);
  };
  const auto value = [](char c) { return std::string(100, c); };
  for (int p = 0; p < 100; p++) {
    for (int x = 0; x < 40; x += 2) ASSERT_TRUE(Put(key(p, x), value('b')).ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  // L0: two tables of every prefix (suffixes 1 mod 4, 3 mod 4), and two of the prefixes
  // below 50 and from 90 only (suffixes 40, 41).
  for (int t = 0; t < 4; t++) {
    for (int p = 0; p < 100; p++) {
      if (t < 2) {
        for (int x = 1 + 2 * t; x < 40; x += 4) ASSERT_TRUE(Put(key(p, x), value('c' + t)).ok());
      } else if (p < 50 || p >= 90) {
        ASSERT_TRUE(Put(key(p, 38 + t), value('c' + t)).ok());
      }
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  std::string n;
  ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level0", &n));
  ASSERT_EQ(n, "4");
  Reopen();
  // Open every table (a key in each one's range), caching no data block a filter's false
  // positive might read.
  {
    ReadOptions warm;
    warm.fill_cache = false;
    std::string v;
    EXPECT_TRUE(db_->Get(warm, "p050xx", &v).IsNotFound());
  }
  const auto ruled_out = [&] {
    return options_.statistics->getTickerCount(BLOOM_FILTER_PREFIX_USEFUL);
  };
  uint64_t ruled_out_before = ruled_out();
  std::string path;
  ASSERT_TRUE(db_->GetProperty("shale.io.async-path", &path));
  const bool batched = !path.starts_with("sync (");

  PerfContext* ctx = Start(PerfLevel::kEnableCount);
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  {
    auto it = db_->NewIterator(ro);
    it->Seek(key(70, 0));
    std::vector<std::string> keys;
    for (; it->Valid(); it->Next()) {
      keys.push_back(it->key().ToString());
      const int x = std::stoi(keys.back().substr(4));
      EXPECT_EQ(it->value().ToString(), value(x % 2 == 0 ? 'b' : (x % 4 == 1 ? 'c' : 'd')));
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    EXPECT_EQ(keys.size(), 40u);
    EXPECT_EQ(keys.front(), key(70, 0));
    EXPECT_EQ(keys.back(), key(70, 39));
  }
  EXPECT_EQ(ctx->index_block_read_count + ctx->filter_block_read_count, 0u);
  EXPECT_GE(ctx->block_read_count, 3u);
  EXPECT_EQ(ruled_out() - ruled_out_before, 2u);  // each filter asked once
  ruled_out_before = ruled_out();
  if (batched) {  // the three runs that may hold p070; the two ruled out are not read
    EXPECT_EQ(ctx->iter_async_read_count, 3u);
    EXPECT_EQ(ctx->iter_async_batch_count, 1u);
  }

  // Without prefix_same_as_start the scan goes on past the prefix: the two runs ruled out are
  // then sought to the target and read together (their first keys at or after it are p090's).
  ctx->Reset();
  {
    auto it = db_->NewIterator(ReadOptions());
    it->Seek(key(89, 0));
    std::vector<std::string> keys;
    for (; it->Valid() && keys.size() < 42; it->Next()) keys.push_back(it->key().ToString());
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(keys.size(), 42u);
    EXPECT_EQ(keys[39], key(89, 39));
    EXPECT_EQ(keys[40], key(90, 0));
    EXPECT_EQ(keys[41], key(90, 1));
  }
  EXPECT_EQ(ruled_out() - ruled_out_before, 2u);
  if (batched) {
    EXPECT_EQ(ctx->iter_async_batch_count, 2u);  // the seek, then leaving p089
    EXPECT_GE(ctx->iter_async_read_count, 5u);
  }
}

TEST_F(PerfContextTest, MergeOperandsCounted) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  ASSERT_TRUE(Put("k", "base").ok());
  for (int i = 0; i < 5; i++) ASSERT_TRUE(Merge("k", std::to_string(i)).ok());
  PerfContext* ctx = Start(PerfLevel::kEnableCount);
  EXPECT_EQ(Get("k"), "base,0,1,2,3,4");
  EXPECT_EQ(ctx->internal_merge_count, 5u);

  ctx->Reset();
  std::vector<PinnableSlice> operands(8);
  GetMergeOperandsOptions opts;
  opts.expected_max_number_of_operands = 8;
  int n = 0;
  ASSERT_TRUE(db_->GetMergeOperands(ReadOptions(), "k", operands.data(), &opts, &n).ok());
  EXPECT_EQ(n, 6);
  EXPECT_EQ(ctx->internal_merge_count, 5u);
  EXPECT_EQ(ctx->get_merge_operands_read_bytes, 4u + 5u);
}

TEST_F(PerfContextTest, IteratorSkipsAndBytes) {
  Open();
  for (int i = 0; i < 10; i++) ASSERT_TRUE(Put(NumberedKey(i), "v1").ok());
  for (int i = 0; i < 10; i += 2) ASSERT_TRUE(Put(NumberedKey(i), "v2").ok());  // 5 overwrites
  for (int i = 1; i < 10; i += 3) ASSERT_TRUE(Delete(NumberedKey(i)).ok());     // 1, 4, 7
  PerfContext* ctx = Start(PerfLevel::kEnableCount);
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  uint64_t bytes = 0;
  int live = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    bytes += it->key().size() + it->value().size();
    live++;
  }
  ASSERT_TRUE(it->status().ok());
  EXPECT_EQ(live, 7);
  EXPECT_EQ(ctx->iter_read_bytes, bytes);
  EXPECT_EQ(ctx->internal_delete_skipped_count, 3u);
  // Older versions stepped over: the 5 overwritten values, and the 3 values under deletions
  // (4 is both overwritten and deleted: its two older versions count).
  EXPECT_EQ(ctx->internal_key_skipped_count, 5u + 3u);
}

TEST_F(PerfContextTest, WritePathTimed) {
  Open();
  PerfContext* ctx = Start(PerfLevel::kEnableTimeExceptForMutex);
  WriteOptions sync;
  sync.sync = true;
  for (int i = 0; i < 20; i++) ASSERT_TRUE(db_->Put(sync, NumberedKey(i), "v").ok());
  EXPECT_GT(ctx->write_wal_time, 0u);
  EXPECT_GT(ctx->write_memtable_time, 0u);
  EXPECT_GT(ctx->write_thread_wait_nanos, 0u);
  EXPECT_EQ(ctx->get_from_memtable_count, 0u);
}

TEST_F(PerfContextTest, ConcurrentThreadsKeepTheirOwnContexts) {
  Open();
  for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(NumberedKey(i), "v").ok());
  PerfContext* mine = Start(PerfLevel::kEnableCount);
  std::vector<std::thread> threads;
  std::vector<uint64_t> counts(4);
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      SetPerfLevel(PerfLevel::kEnableCount);
      get_perf_context()->Reset();
      PinnableSlice v;
      for (int i = 0; i < 100 * (t + 1); i++) {
        db_->Get(ReadOptions(), NumberedKey(i % 100), &v).PermitUncheckedError();
      }
      counts[t] = get_perf_context()->get_from_memtable_count;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; t++) EXPECT_EQ(counts[t], 100u * (t + 1));
  EXPECT_EQ(mine->get_from_memtable_count, 0u);
}

TEST(PerfContextReportTest, ToStringAddResetAndLevels) {
  PerfContext a;
  a.block_read_count = 3;
  a.write_wal_time = 7;
  EXPECT_EQ(a.ToString(true), "block_read_count = 3, write_wal_time = 7");
  const std::string all = a.ToString();
  EXPECT_EQ(all.rfind("get_from_memtable_count = 0, ", 0), 0u) << all;
  EXPECT_NE(all.find(", block_read_count = 3, "), std::string::npos);
  PerfContext b;
  b.block_read_count = 2;
  b.Add(a);
  EXPECT_EQ(b.ToString(true), "block_read_count = 5, write_wal_time = 7");
  b.Reset();
  EXPECT_EQ(b.ToString(true), "");

  SetPerfLevel(PerfLevel::kOutOfBounds);
  EXPECT_EQ(GetPerfLevel(), PerfLevel::kEnableTime);
  SetPerfLevel(PerfLevel::kUninitialized);
  EXPECT_EQ(GetPerfLevel(), PerfLevel::kDisable);
}

}  // namespace
}  // namespace shale::test
