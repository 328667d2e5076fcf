// Skiplist insert and lookup, single-threaded and with concurrent inserters.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "memtable/skiplist.h"
#include "src/util/coding.h"
#include "src/util/random.h"

namespace shale {
namespace {

// Keys are 8-byte big-endian integers stored in the arena.
struct U64Cmp {
  int operator()(const char* a, const char* b) const { return std::memcmp(a, b, 8); }
};

template <typename List>
const char* MakeKey(List* list, uint64_t v) {
  char* p = list->AllocateKey(8);
  uint64_t be = __builtin_bswap64(v);
  std::memcpy(p, &be, 8);
  return p;
}

void BM_SkipListInsert(benchmark::State& state) {
  Random rnd(301);
  auto arena = std::make_unique<ConcurrentArena>();
  auto list = std::make_unique<SkipList<U64Cmp>>(U64Cmp(), arena.get());
  uint64_t n = 0;
  for (auto _ : state) {
    list->Insert(MakeKey(list.get(), (rnd.Next64() << 20) | (n++ & 0xfffff)));
    if (n % (1 << 20) == 0) {
      state.PauseTiming();
      list.reset();
      arena = std::make_unique<ConcurrentArena>();
      list = std::make_unique<SkipList<U64Cmp>>(U64Cmp(), arena.get());
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SkipListInsert);

void BM_SkipListLookup(benchmark::State& state) {
  const uint64_t entries = static_cast<uint64_t>(state.range(0));
  ConcurrentArena arena;
  SkipList<U64Cmp> list(U64Cmp(), &arena);
  for (uint64_t i = 0; i < entries; i++) list.Insert(MakeKey(&list, i * 2));
  Random rnd(7);
  char probe[8];
  uint64_t found = 0;
  for (auto _ : state) {
    uint64_t be = __builtin_bswap64(rnd.Uniform(entries * 2));
    std::memcpy(probe, &be, 8);
    found += list.Contains(probe);
  }
  state.counters["hit_rate"] =
      benchmark::Counter(static_cast<double>(found) / static_cast<double>(state.iterations()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SkipListLookup)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// All benchmark threads insert into one list (set up and torn down by thread 0; the benchmark
// loop's start and end are barriers for all threads).
std::unique_ptr<ConcurrentArena> g_arena;
std::unique_ptr<SkipList<U64Cmp>> g_list;

void BM_SkipListConcurrentInsert(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g_arena = std::make_unique<ConcurrentArena>();
    g_list = std::make_unique<SkipList<U64Cmp>>(U64Cmp(), g_arena.get());
  }
  Random rnd(1000 + state.thread_index());
  uint64_t n = 0;
  for (auto _ : state) {
    uint64_t unique = (uint64_t(state.thread_index()) << 20) | (n++ & 0xfffff);
    g_list->Insert(MakeKey(g_list.get(), (rnd.Next64() << 24) | unique));
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    g_list.reset();
    g_arena.reset();
  }
}
BENCHMARK(BM_SkipListConcurrentInsert)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace shale
