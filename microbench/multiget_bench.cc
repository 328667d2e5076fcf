// MultiGet over a DB whose data sits in table files: batch sizes 1..64, asynchronous block
// reads on and off, blocks cached (a warm, large cache) or read from disk with direct IO and a
// tiny cache. Keys are random over the loaded range; every key exists.
//
//   multiget_bench --benchmark_filter='Direct/batch:32/async:1'
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/cache.h"
#include "shale/db.h"
#include "src/util/random.h"

namespace shale {
namespace {

constexpr uint64_t kKeys = 200000;

// Loads kKeys 100-byte values once per process and flushes them into tables.
const std::string& LoadedDir() {
  static const std::string dir = [] {
    std::string d = bench::FreshDir("multiget");
    Options o;
    o.create_if_missing = true;
    std::unique_ptr<DB> db;
    if (!DB::Open(o, d, &db).ok()) return std::string();
    WriteOptions wo;
    wo.disableWAL = true;
    std::string value(100, 'v');
    for (uint64_t i = 0; i < kKeys; i++) {
      if (!db->Put(wo, bench::KeyOf(i), value).ok()) return std::string();
    }
    if (!db->Flush(FlushOptions()).ok() || !db->WaitForCompact().ok()) return std::string();
    return d;
  }();
  return dir;
}

void RunMultiGet(benchmark::State& state, bool direct) {
  const size_t batch = static_cast<size_t>(state.range(0));
  const bool async = state.range(1) != 0;
  const std::string& dir = LoadedDir();
  if (dir.empty()) {
    state.SkipWithError("load failed");
    return;
  }
  Options o;
  o.use_direct_reads = direct;
  o.block_cache = NewLRUCache(direct ? (64 << 10) : (256 << 20));
  std::unique_ptr<DB> db;
  if (!DB::Open(o, dir, &db).ok()) {
    state.SkipWithError("open failed");
    return;
  }
  Random rnd(17);
  std::vector<std::string> storage(batch);
  std::vector<Slice> keys(batch);
  std::vector<PinnableSlice> values(batch);
  std::vector<Status> statuses(batch);
  ReadOptions ro;
  ro.async_io = async;
  if (!direct) {
    // Warm the cache with every block.
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
  uint64_t found = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < batch; i++) {
      storage[i] = bench::KeyOf(rnd.Uniform(kKeys));
      keys[i] = storage[i];
    }
    db->MultiGet(ro, batch, keys.data(), values.data(), statuses.data());
    for (size_t i = 0; i < batch; i++) found += statuses[i].ok();
  }
  if (found != state.iterations() * batch) state.SkipWithError("a key was not found");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  values.clear();
}

void BM_MultiGetCached(benchmark::State& state) { RunMultiGet(state, false); }
void BM_MultiGetDirect(benchmark::State& state) { RunMultiGet(state, true); }

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "async"});
  for (int64_t batch : {1, 4, 16, 32, 64}) {
    for (int64_t async : {0, 1}) b->Args({batch, async});
  }
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_MultiGetCached)->Apply(Shapes);
// Reads wait on the device: rates by wall-clock time.
BENCHMARK(BM_MultiGetDirect)->Apply(Shapes)->UseRealTime();

}  // namespace
}  // namespace shale
