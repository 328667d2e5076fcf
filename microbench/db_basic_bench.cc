// DB-level Put and Get (memtable hit and miss), through the public API.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "microbench/bench_util.h"
#include "shale/db.h"
#include "src/util/random.h"

namespace shale {
namespace {

using bench::KeyOf;

std::unique_ptr<DB> OpenFresh(const std::string& dir) {
  Options options;
  options.create_if_missing = true;
  std::unique_ptr<DB> db;
  if (!DB::Open(options, dir, &db).ok()) return nullptr;
  return db;
}

void BM_DBPut(benchmark::State& state) {
  std::string dir = bench::FreshDir("put");
  auto db = OpenFresh(dir);
  if (!db) {
    state.SkipWithError("open failed");
    return;
  }
  Random rnd(42);
  std::string value(100, 'v');
  for (auto _ : state) {
    Status s = db->Put(WriteOptions(), KeyOf(rnd.Uniform(1 << 20)), value);
    if (!s.ok()) state.SkipWithError("put failed");
  }
  state.SetItemsProcessed(state.iterations());
  db.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_DBPut);

void BM_DBGetMemtable(benchmark::State& state) {
  const bool hit = state.range(0) != 0;
  const uint64_t entries = 100000;
  std::string dir = bench::FreshDir("get");
  auto db = OpenFresh(dir);
  if (!db) {
    state.SkipWithError("open failed");
    return;
  }
  std::string value(100, 'v');
  for (uint64_t i = 0; i < entries; i++) {
    if (!db->Put(WriteOptions(), KeyOf(i * 2), value).ok()) state.SkipWithError("put failed");
  }
  Random rnd(7);
  PinnableSlice result;
  uint64_t found = 0;
  for (auto _ : state) {
    uint64_t k = rnd.Uniform(entries) * 2 + (hit ? 0 : 1);
    found += db->Get(ReadOptions(), KeyOf(k), &result).ok();
  }
  state.counters["found"] = benchmark::Counter(static_cast<double>(found));
  state.SetItemsProcessed(state.iterations());
  result.Reset();
  db.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_DBGetMemtable)->Arg(1)->Arg(0)->ArgName("hit");

}  // namespace
}  // namespace shale
