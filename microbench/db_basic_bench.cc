// DB-level microbenchmarks of the basic operations, through the public API (the set of cases
// follows RocksDB's microbench/db_basic_bench.cc):
//
//   BM_DBOpen              Open + Close of a DB holding 4 flushed table files
//   BM_DBPut               Put of random keys into the memtable
//   BM_DBGetMemtable       Get from the memtable, hit:1 (key exists) and hit:0 (miss)
//   BM_DBGetSST            Get from table files with every block cached, hit:1 and hit:0
//   BM_DBMultiGet          MultiGet of batch:1..64 existing keys from cached table files
//   BM_DBGetMergeOperands  GetMergeOperands of one key with operands:1..1024 in the memtable
//   BM_DBFlush             Flush of a memtable of 10,000 entries of 100 B
//   BM_DBManualCompaction  CompactRange over everything, with 4 overlapping L0 files as input
//
// Every case builds its own DB in a scratch directory that is removed at its end, prepares
// (loads, flushes, waits for compactions) outside the timed region, and stops with
// SkipWithError on any Status that is not OK. Wider sweeps of two of these cases live in
// multiget_bench and merge_operands_bench.
//
//   db_basic_bench --benchmark_filter='BM_DBGetSST/hit:0'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/cache.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "src/util/random.h"

namespace shale {
namespace {

using bench::KeyOf;

constexpr size_t kValueSize = 100;
// Entries the read cases load; they take the even keys 0, 2, ..., so odd keys miss.
constexpr uint64_t kReadEntries = 100000;
// Keys the read cases draw from, made before timing so the timed loops do not format keys.
constexpr size_t kPoolSize = size_t{1} << 14;
static_assert((kPoolSize & (kPoolSize - 1)) == 0, "the read loops wrap with a mask");
// Entries of one flushed file (BM_DBFlush's memtable, each L0 file of Open and compaction).
constexpr uint64_t kFileEntries = 10000;
constexpr uint64_t kL0Files = 4;

// Reports a non-OK s through SkipWithError, prefixed by what; returns whether it did.
bool Failed(benchmark::State& state, const char* what, const Status& s) {
  if (s.ok()) return false;
  state.SkipWithError((std::string(what) + ": " + s.ToString()).c_str());
  return true;
}

Options BaseOptions() {
  Options options;
  options.create_if_missing = true;
  return options;
}

// The DB in dir, or null after SkipWithError.
std::unique_ptr<DB> OpenDB(benchmark::State& state, const Options& options,
                           const std::string& dir) {
  std::unique_ptr<DB> db;
  if (Failed(state, "open", DB::Open(options, dir, &db))) return nullptr;
  return db;
}

// Puts keys first, first + stride, ... (count of them) with kValueSize-byte values. The WAL is
// skipped: the benchmarks never reopen a DB before flushing what they wrote.
Status Load(DB* db, uint64_t first, uint64_t count, uint64_t stride) {
  WriteOptions wo;
  wo.disableWAL = true;
  const std::string value(kValueSize, 'v');
  for (uint64_t i = 0; i < count; i++) {
    Status s = db->Put(wo, KeyOf(first + i * stride), value);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// Flushes kL0Files files of kFileEntries keys each. File f holds keys f, f + kL0Files,
// f + 2 * kL0Files, ..., so every file overlaps every other. With auto compactions disabled
// they all stay in L0.
Status WriteL0Files(DB* db) {
  for (uint64_t f = 0; f < kL0Files; f++) {
    Status s = Load(db, f, kFileEntries, kL0Files);
    if (s.ok()) s = db->Flush(FlushOptions());
    if (!s.ok()) return s;
  }
  return Status::OK();
}

uint64_t FilesAtLevel0(DB* db) {
  std::string value;
  if (!db->GetProperty("shale.num-files-at-level0", &value)) return UINT64_MAX;
  return std::stoull(value);
}

// kPoolSize random keys: loaded ones (even) for hit, never written ones (odd) otherwise.
std::vector<std::string> RandomKeys(bool hit) {
  Random rnd(hit ? 7 : 8);
  std::vector<std::string> keys(kPoolSize);
  for (std::string& key : keys) key = KeyOf(rnd.Uniform(kReadEntries) * 2 + (hit ? 0 : 1));
  return keys;
}

// Times Get of random keys; with hit every key must be found, without it none.
void RunGets(benchmark::State& state, DB* db, bool hit) {
  const std::vector<std::string> keys = RandomKeys(hit);
  PinnableSlice value;
  uint64_t found = 0;
  size_t next = 0;
  for (auto _ : state) {
    Status s = db->Get(ReadOptions(), keys[next++ & (kPoolSize - 1)], &value);
    if (s.ok()) {
      found++;
    } else if (!s.IsNotFound()) {
      Failed(state, "get", s);
      break;
    }
  }
  value.Reset();  // drops the pin before the DB goes away
  const uint64_t expected = hit ? static_cast<uint64_t>(state.iterations()) : 0;
  if (!state.error_occurred() && found != expected) {
    state.SkipWithError(hit ? "a loaded key was not found" : "a key never written was found");
  }
  state.counters["found"] = benchmark::Counter(static_cast<double>(found));
  state.SetItemsProcessed(state.iterations());
}

// A DB holding kReadEntries even keys in table files, with an empty memtable, no background
// work pending, and every block already in the block cache; null after SkipWithError.
std::unique_ptr<DB> OpenTableDB(benchmark::State& state, const std::string& dir) {
  Options options = BaseOptions();
  // The tables are about 12 MB; a 256 MiB cache keeps every block once read, so the timed
  // reads measure the cached path and never touch the file.
  options.block_cache = NewLRUCache(size_t{256} << 20);
  std::unique_ptr<DB> db = OpenDB(state, options, dir);
  if (!db) return nullptr;
  Status s = Load(db.get(), 0, kReadEntries, 2);
  if (s.ok()) s = db->Flush(FlushOptions());
  if (s.ok()) s = db->WaitForCompact();
  if (s.ok()) {
    // One scan reads every data block into the cache.
    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    s = it->status();
  }
  if (Failed(state, "load", s)) return nullptr;
  return db;
}

void BM_DBOpen(benchmark::State& state) {
  bench::ScopedDir dir("open");
  Options options = BaseOptions();
  // Keeps the L0 files as written: no compaction runs at Open or delays Close.
  options.disable_auto_compactions = true;
  {
    std::unique_ptr<DB> db = OpenDB(state, options, dir.path());
    if (!db) return;
    if (Failed(state, "load", WriteL0Files(db.get()))) return;
    if (Failed(state, "close", db->Close())) return;
  }
  for (auto _ : state) {
    std::unique_ptr<DB> db;
    if (Failed(state, "open", DB::Open(options, dir.path(), &db))) break;
    if (Failed(state, "close", db->Close())) break;
  }
}
// Open and Close partly wait (WAL and MANIFEST syncs, background threads): wall-clock time.
BENCHMARK(BM_DBOpen)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_DBPut(benchmark::State& state) {
  bench::ScopedDir dir("put");
  std::unique_ptr<DB> db = OpenDB(state, BaseOptions(), dir.path());
  if (!db) return;
  Random rnd(42);
  const std::string value(kValueSize, 'v');
  for (auto _ : state) {
    if (Failed(state, "put", db->Put(WriteOptions(), KeyOf(rnd.Uniform(1 << 20)), value))) break;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DBPut);

void BM_DBGetMemtable(benchmark::State& state) {
  bench::ScopedDir dir("get_memtable");
  std::unique_ptr<DB> db = OpenDB(state, BaseOptions(), dir.path());
  if (!db) return;
  // 100,000 entries of ~116 B stay well under the 64 MiB write buffer: nothing is flushed.
  if (Failed(state, "load", Load(db.get(), 0, kReadEntries, 2))) return;
  RunGets(state, db.get(), state.range(0) != 0);
}
BENCHMARK(BM_DBGetMemtable)->Arg(1)->Arg(0)->ArgName("hit");

void BM_DBGetSST(benchmark::State& state) {
  bench::ScopedDir dir("get_sst");
  std::unique_ptr<DB> db = OpenTableDB(state, dir.path());
  if (!db) return;
  RunGets(state, db.get(), state.range(0) != 0);
}
BENCHMARK(BM_DBGetSST)->Arg(1)->Arg(0)->ArgName("hit");

void BM_DBMultiGet(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  if (kPoolSize % batch != 0) {
    state.SkipWithError("batch must divide the key pool");
    return;
  }
  bench::ScopedDir dir("multiget");
  std::unique_ptr<DB> db = OpenTableDB(state, dir.path());
  if (!db) return;
  const std::vector<std::string> pool = RandomKeys(/*hit=*/true);
  const std::vector<Slice> keys(pool.begin(), pool.end());
  // Declared after db, so destroyed (unpinned) before it. MultiGet resets them on every call.
  std::vector<PinnableSlice> values(batch);
  std::vector<Status> statuses(batch);
  size_t next = 0;
  for (auto _ : state) {
    db->MultiGet(ReadOptions(), batch, &keys[next], values.data(), statuses.data());
    next = (next + batch) & (kPoolSize - 1);
    auto bad =
        std::find_if(statuses.begin(), statuses.end(), [](const Status& s) { return !s.ok(); });
    if (bad != statuses.end()) {
      Failed(state, "multiget", *bad);  // every key exists, so NotFound fails too
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_DBMultiGet)->Arg(1)->Arg(8)->Arg(32)->Arg(64)->ArgName("batch");

void BM_DBGetMergeOperands(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  bench::ScopedDir dir("get_merge_operands");
  Options options = BaseOptions();
  options.merge_operator = MergeOperators::CreateStringAppendOperator();
  std::unique_ptr<DB> db = OpenDB(state, options, dir.path());
  if (!db) return;
  const std::string key = KeyOf(0);
  WriteOptions wo;
  wo.disableWAL = true;
  for (int i = 0; i < count; i++) {
    if (Failed(state, "merge", db->Merge(wo, key, KeyOf(i)))) return;
  }
  std::vector<PinnableSlice> operands(count);
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = count;  // room for all of them: never Incomplete
  int n = 0;
  for (auto _ : state) {
    if (Failed(state, "get_merge_operands",
               db->GetMergeOperands(ReadOptions(), key, operands.data(), &gmo, &n))) {
      break;
    }
    if (n != count) {
      state.SkipWithError("GetMergeOperands returned the wrong number of operands");
      break;
    }
    // Releasing the pins is part of the cost of a read that pins.
    for (PinnableSlice& operand : operands) operand.Reset();
  }
  state.SetItemsProcessed(state.iterations() * count);
}
BENCHMARK(BM_DBGetMergeOperands)->Arg(1)->Arg(64)->Arg(1024)->ArgName("operands");

void BM_DBFlush(benchmark::State& state) {
  bench::ScopedDir dir("flush");
  // A round writes ~1.2 MB: far under the 64 MiB write buffer, so only the timed Flush flushes.
  std::unique_ptr<DB> db = OpenDB(state, BaseOptions(), dir.path());
  if (!db) return;
  for (auto _ : state) {
    state.PauseTiming();
    // Earlier flushes may have started an L0 compaction: let it finish outside the timing.
    Status s = db->WaitForCompact();
    if (s.ok()) s = Load(db.get(), 0, kFileEntries, 1);
    state.ResumeTiming();
    if (Failed(state, "load", s)) break;
    if (Failed(state, "flush", db->Flush(FlushOptions()))) break;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kFileEntries));
}
// The flush runs on a background thread while the caller waits: wall-clock time.
BENCHMARK(BM_DBFlush)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DBManualCompaction(benchmark::State& state) {
  bench::ScopedDir dir("manual_compaction");
  Options options = BaseOptions();
  options.disable_auto_compactions = true;  // the L0 files wait for the timed CompactRange
  std::unique_ptr<DB> db = OpenDB(state, options, dir.path());
  if (!db) return;
  for (auto _ : state) {
    state.PauseTiming();
    // From the second round on, the output of the previous round (same keys) is input too.
    Status s = WriteL0Files(db.get());
    const bool shaped = s.ok() && FilesAtLevel0(db.get()) == kL0Files;
    state.ResumeTiming();
    if (Failed(state, "load", s)) break;
    if (!shaped) {
      state.SkipWithError("the L0 files were not all in L0 before CompactRange");
      break;
    }
    if (Failed(state, "compact_range", db->CompactRange(CompactRangeOptions(), nullptr, nullptr))) {
      break;
    }
  }
  state.counters["l0_files"] = benchmark::Counter(static_cast<double>(kL0Files));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kL0Files * kFileEntries));
}
// Like BM_DBFlush, timed by the wall clock.
BENCHMARK(BM_DBManualCompaction)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace shale
