// The table format's hot paths: filter build and probe (ns/key, measured false-positive rate),
// block seek, and a point lookup on a table whose blocks are all in the block cache.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/comparator.h"
#include "shale/file_system.h"
#include "src/base/dbformat.h"
#include "src/base/get_context.h"
#include "src/util/crc32c.h"
#include "src/util/random.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/filter_block.h"
#include "table/table_builder.h"
#include "table/table_reader.h"

namespace shale {
namespace {

std::string UserKey(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016llu", static_cast<unsigned long long>(i));
  return buf;
}

// Filter build cost per key, for state.range(0) keys at 10 bits/key.
void BM_FilterBuild(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<std::string> keys;
  for (int64_t i = 0; i < n; i++) keys.push_back(UserKey(static_cast<uint64_t>(i)));
  for (auto _ : state) {
    FilterBlockBuilder b(10);
    for (const auto& k : keys) b.AddKey(k);
    std::string block = b.Finish();
    benchmark::DoNotOptimize(block.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["ns_per_key"] =
      benchmark::Counter(static_cast<double>(state.iterations() * n),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FilterBuild)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMillisecond);

// Probe cost per key; range(1) = 1 probes present keys, 0 absent keys (and counts false
// positives). The filter covers range(0) keys (1M keys ≈ 1.2 MiB: beyond L2 here).
void BM_FilterProbe(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool present = state.range(1) != 0;
  FilterBlockBuilder b(10);
  for (int64_t i = 0; i < n; i++) b.AddKey(UserKey(static_cast<uint64_t>(i)));
  const std::string block = b.Finish();
  FilterBlockReader reader(block);
  std::vector<std::string> probes;
  Random rnd(1);
  for (int i = 0; i < 100000; i++) {
    const uint64_t k = rnd.Uniform(static_cast<uint64_t>(n));
    probes.push_back(present ? UserKey(k) : UserKey(k + static_cast<uint64_t>(n)));
  }
  uint64_t matches = 0;
  size_t i = 0;
  for (auto _ : state) {
    matches += reader.KeyMayMatch(probes[i]) ? 1 : 0;
    if (++i == probes.size()) i = 0;
  }
  state.counters[present ? "hit_rate" : "fp_rate"] =
      benchmark::Counter(static_cast<double>(matches) / static_cast<double>(state.iterations()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FilterProbe)->Args({10000, 0})->Args({1000000, 0})->Args({1000000, 1});

// The checksum of one block as read (a 4 KiB block with its 5-byte trailer, or a WAL block of
// 32 KiB), at the alignment a block read into a slab slot has.
void BM_Crc32c(benchmark::State& state) {
  Random rnd(5);
  const std::string data = rnd.RandomString(static_cast<size_t>(state.range(0)));
  uint32_t crc = 0;
  for (auto _ : state) {
    crc ^= crc32c::Value(data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32c)->Arg(4101)->Arg(32768);

// The timed loop of the block seek benchmarks: seeks to keys drawn at random from `keys`.
void SeekRandomKeys(benchmark::State& state, const InternalKeyComparator& icmp, const Block& block,
                    const std::vector<std::string>& keys) {
  BlockIter it;
  block.InitIterator(&icmp, &it);
  Random rnd(3);
  uint64_t found = 0;
  for (auto _ : state) {
    it.Seek(keys[rnd.Uniform(keys.size())]);
    found += it.Valid() ? 1 : 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
}

// Seek to random keys in one 4 KiB data block of internal keys.
void BM_BlockSeek(benchmark::State& state) {
  const int restart_interval = static_cast<int>(state.range(0));
  InternalKeyComparator icmp(BytewiseComparator());
  BlockBuilder builder(restart_interval);
  std::vector<std::string> keys;
  for (uint64_t i = 0; builder.CurrentSizeEstimate() < 4096; i++) {
    std::string k;
    AppendInternalKey(&k, UserKey(i * 7), 100, kTypeValue);
    builder.Add(k, std::string(100, 'v'));
    keys.push_back(k);
  }
  Block block(BlockContents::CopyOf(builder.Finish()));
  SeekRandomKeys(state, icmp, block, keys);
  state.counters["entries"] = static_cast<double>(keys.size());
}
BENCHMARK(BM_BlockSeek)->Arg(1)->Arg(16);

// Seek to random keys in an index-shaped block (restart interval 1, one short value per key)
// of state.range(0) entries, searched through its RestartPrefixIndex: a 64 MiB table of 4 KiB
// blocks has about 16,000 index entries.
void BM_IndexBlockSeek(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  InternalKeyComparator icmp(BytewiseComparator());
  BlockBuilder builder(1);
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < n; i++) {
    std::string k;
    AppendInternalKey(&k, UserKey(i * 37), 100, kTypeValue);
    builder.Add(k, "handle");
    keys.push_back(k);
  }
  Block block(BlockContents::CopyOf(builder.Finish()));
  block.BuildRestartPrefixIndex();
  SeekRandomKeys(state, icmp, block, keys);
}
BENCHMARK(BM_IndexBlockSeek)->Arg(16 << 10)->Arg(256 << 10);

// Get on a 100,000-entry table (16-byte keys, 100-byte values) with every block cached.
void BM_TableGet(benchmark::State& state) {
  const bool hit = state.range(0) != 0;
  constexpr uint64_t kEntries = 100000;
  const std::string dir = std::filesystem::temp_directory_path().string() + "/shale-table-bench-" +
                          std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/bench.sst";
  std::shared_ptr<FileSystem> fs = FileSystem::Default();
  InternalKeyComparator icmp(BytewiseComparator());
  {
    std::unique_ptr<WritableFile> file;
    if (!fs->NewWritableFile(path, FileOptions(), &file).ok()) {
      state.SkipWithError("cannot create the table");
      return;
    }
    TableBuilderOptions o;
    o.comparator = &icmp;
    TableBuilder b(o, file.get());
    for (uint64_t i = 0; i < kEntries; i++) {
      std::string k;
      AppendInternalKey(&k, UserKey(i * 2), 1, kTypeValue);
      if (!b.Add(k, std::string(100, 'v')).ok()) state.SkipWithError("add failed");
    }
    if (!b.Finish().ok() || !file->Close().ok()) state.SkipWithError("finish failed");
  }
  uint64_t size = 0;
  std::unique_ptr<RandomAccessFile> file;
  if (!fs->GetFileSize(path, &size).ok() ||
      !fs->NewRandomAccessFile(path, FileOptions(), &file).ok()) {
    state.SkipWithError("cannot open the table");
    return;
  }
  TableReaderOptions ro;
  ro.comparator = &icmp;
  ro.block_cache = NewLRUCache(64 << 20);
  ro.file_name = path;
  std::unique_ptr<TableReader> reader;
  if (!TableReader::Open(ro, std::move(file), size, &reader).ok()) {
    state.SkipWithError("cannot open the table");
    return;
  }
  std::vector<std::string> lookups;
  Random rnd(5);
  for (int i = 0; i < 100000; i++) {
    std::string k;
    // Even numbers are present; odd ones are absent but inside the key range.
    AppendInternalKey(&k, UserKey(rnd.Uniform(kEntries) * 2 + (hit ? 0 : 1)), kMaxSequenceNumber,
                      kValueTypeForSeek);
    lookups.push_back(k);
  }
  // Warm the cache.
  ReadOptions options;
  for (const auto& k : lookups) {
    PinnableSlice v;
    GetContext ctx(nullptr, nullptr, ExtractUserKey(k), &v);
    (void)reader->Get(options, k, &ctx);
  }
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    const std::string& k = lookups[i];
    PinnableSlice v;
    GetContext ctx(nullptr, nullptr, ExtractUserKey(k), &v);
    if (reader->Get(options, k, &ctx).ok() && ctx.state() == GetContext::State::kFound) found++;
    if (++i == lookups.size()) i = 0;
  }
  state.counters["found_rate"] =
      benchmark::Counter(static_cast<double>(found) / static_cast<double>(state.iterations()));
  state.SetItemsProcessed(state.iterations());
  reader.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TableGet)->Arg(1)->Arg(0);

}  // namespace
}  // namespace shale
