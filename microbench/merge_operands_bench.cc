// GetMergeOperands of one key holding `count` merge operands of `size` bytes each, read from the
// memtable or from a table file (blocks cached). The operands are returned pinned, so the
// figure is the cost of finding and pinning them, not of copying.
//
//   merge_operands_bench --benchmark_filter='Memtable/count:4096'
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/cache.h"
#include "shale/db.h"
#include "shale/merge_operator.h"

namespace shale {
namespace {

enum class Source { kMemtable, kTable };

void RunGetMergeOperands(benchmark::State& state, Source source) {
  const int count = static_cast<int>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  const std::string dir = bench::FreshDir("merge_operands");
  Options options;
  options.create_if_missing = true;
  options.merge_operator = MergeOperators::CreateStringAppendOperator();
  options.write_buffer_size = size_t{1} << 30;  // everything stays in one memtable until Flush
  options.disable_auto_compactions = true;      // compaction would merge the operands away
  options.block_cache = NewLRUCache(size_t{1} << 30);
  std::unique_ptr<DB> db;
  if (!DB::Open(options, dir, &db).ok()) {
    state.SkipWithError("open failed");
    return;
  }
  const std::string key = bench::KeyOf(1);
  std::string operand(size, 'x');
  WriteOptions wo;
  wo.disableWAL = true;
  for (int i = 0; i < count; i++) {
    operand[0] = static_cast<char>('a' + i % 26);
    if (!db->Merge(wo, key, operand).ok()) {
      state.SkipWithError("merge failed");
      return;
    }
  }
  if (source == Source::kTable && !db->Flush(FlushOptions()).ok()) {
    state.SkipWithError("flush failed");
    return;
  }
  std::vector<PinnableSlice> operands(count);
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = count;
  int n = 0;
  // One untimed call warms the block cache.
  if (!db->GetMergeOperands(ReadOptions(), key, operands.data(), &gmo, &n).ok() || n != count) {
    state.SkipWithError("GetMergeOperands returned the wrong operands");
    return;
  }
  for (auto _ : state) {
    Status s = db->GetMergeOperands(ReadOptions(), key, operands.data(), &gmo, &n);
    if (!s.ok() || n != count) state.SkipWithError("GetMergeOperands failed");
    benchmark::DoNotOptimize(operands.data());
  }
  state.counters["operands_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * count, benchmark::Counter::kIsRate);
  state.counters["pinned"] = operands[0].IsPinned() ? 1 : 0;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * count * size));
  operands.clear();
  db.reset();
  std::filesystem::remove_all(dir);
}

void BM_GetMergeOperandsMemtable(benchmark::State& state) {
  RunGetMergeOperands(state, Source::kMemtable);
}
void BM_GetMergeOperandsTable(benchmark::State& state) {
  RunGetMergeOperands(state, Source::kTable);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"count", "size"});
  for (int64_t count : {1, 16, 256, 4096, 16384}) {
    for (int64_t size : {8, 64, 512, 4096}) b->Args({count, size});
  }
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_GetMergeOperandsMemtable)->Apply(Shapes);
BENCHMARK(BM_GetMergeOperandsTable)->Apply(Shapes);

}  // namespace
}  // namespace shale
