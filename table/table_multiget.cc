// TableReader's batched MultiGet (contract in table_reader.h): the filter probed for the
// whole batch, one index seek per group of keys sharing a data block, cached blocks serving
// their group at once, and each missing block read once — by a coroutine on the caller's
// AsyncIo, or synchronously without one.
#include <vector>

#include "src/monitoring/perf_context_imp.h"
#include "src/util/invariants.h"
#include "table/table_reader.h"
#include "table/table_reader_internal.h"

namespace shale {

using table_internal::BadIndexEntry;
using table_internal::CountBlockRead;
using table_internal::IndexBlockCorruption;
using table_internal::RecordTick;

// A data block some keys of a batch need and the cache did not have. Thread safety: owned by
// the coroutine that reads it, on the MultiGet caller's thread.
struct TableReader::MissedBlock {
  BlockHandle handle;
  std::vector<MultiGetKey*> keys;
  BlockReadRequest read;
  Status status;
};

void TableReader::ServeKeys(const ReadOptions& options, const BlockRef& ref,
                            const BlockHandle& handle, MultiGetKey* const* keys, size_t n) const {
  for (size_t i = 0; i < n; i++) {
    MultiGetKey* k = keys[i];
    const Slice ikey = k->lkey.internal_key();
    bool matched = false;
    bool done = false;
    Status s = ScanBlock(ref, handle, ikey, &k->ctx, &matched, &done);
    if (s.ok() && !done) {
      // The key's versions run past this block: continue with the blocks after it.
      BlockIter index;
      InitIndexIterator(&index);
      index.Seek(IndexTarget(ikey));
      if (index.Valid()) index.Next();
      s = GetFromIndex(options, &index, ikey, &k->ctx, &matched);
    }
    if (!s.ok()) k->status = s;
    if (matched && filter_ != nullptr) {
      RecordTick(options_.statistics, BLOOM_FILTER_FULL_TRUE_POSITIVE);
    }
  }
}

Task TableReader::ReadMissedBlock(ReadOptions options, MissedBlock block, AsyncIo* io) const {
  BlockRef ref;
  block.status = block.read.Prepare(file_.get(), file_size_, options_.file_name, block.handle);
  if (block.status.ok()) {
    ReadRequest* request = block.read.request();
    const uint64_t start = ReadStart();
    co_await io->ReadAll(file_.get(), &request, 1);
    block.status = CompleteBlockRead(options, block.handle, &block.read, start,
                                     &PerfContext::multiget_async_read_count, &ref);
  }
  if (!block.status.ok()) {
    for (MultiGetKey* k : block.keys) k->status = block.status;
    co_return;
  }
  ServeKeys(options, ref, block.handle, block.keys.data(), block.keys.size());
}

bool TableReader::FilterMayMatch(const Slice& user_key, uint64_t hash) const {
  if (filter_ == nullptr) return true;
  if (!(whole_key_filter_ ? filter_->HashMayMatch(hash) : KeyMayMatch(user_key))) {
    RecordTick(options_.statistics, BLOOM_FILTER_USEFUL);
    PerfCount(&PerfContext::bloom_sst_miss_count);
    return false;
  }
  RecordTick(options_.statistics, BLOOM_FILTER_FULL_POSITIVE);
  PerfCount(&PerfContext::bloom_sst_hit_count);
  return true;
}

void TableReader::MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n,
                           AsyncIo* io, bool filter_checked) const {
  if constexpr (kInvariantChecks) {
    // The caller's promise, which the grouping below relies on: a group is the run of keys
    // up to an index separator. Keys of equal user key (one batch reads at one sequence)
    // compare equal.
    for (size_t i = 0; i < n; i++) {
      SHALE_ASSERT(!keys[i]->done());
      SHALE_ASSERT(i == 0 || options_.comparator->Compare(keys[i - 1]->lkey.internal_key(),
                                                          keys[i]->lkey.internal_key()) <= 0);
    }
  }
  if (range_tombstones_ != nullptr) {
    for (size_t i = 0; i < n; i++)
      ApplyRangeTombstones(keys[i]->lkey.internal_key(), &keys[i]->ctx);
  }
  // The filter: prefetch every key's line, then probe.
  thread_local std::vector<MultiGetKey*> candidates;
  candidates.clear();
  if (filter_ != nullptr && !filter_checked) {
    for (size_t i = 0; i < n; i++) filter_->PrefetchHash(keys[i]->hash);
    for (size_t i = 0; i < n; i++) {
      if (FilterMayMatch(keys[i]->lkey.user_key(), keys[i]->hash)) {
        candidates.push_back(keys[i]);
      } else {
        keys[i]->ctx.EndIfCovered();
      }
    }
  } else {
    candidates.assign(keys, keys + n);
  }

  // The index: one seek per group of keys that share a data block, each scanning from the
  // restart point found for its first key by the batch's searches run side by side.
  BlockIter index;
  InitIndexIterator(&index);
  thread_local std::vector<Slice> targets;
  thread_local std::vector<uint32_t> restarts;
  targets.clear();
  for (const MultiGetKey* k : candidates) targets.push_back(IndexTarget(k->lkey.internal_key()));
  restarts.resize(targets.size());
  // On corruption the index is invalid with its status, which the loop below reports.
  (void)index.FindRestarts(targets.data(), targets.size(), restarts.data());
  std::vector<MissedBlock> missed;
  const Comparator* cmp = index_comparator_;
  // Groups are taken a window at a time, in stages, so that the cache misses of the window's
  // groups overlap instead of following one another: the cache slots of their blocks are
  // requested, then looked up; the blocks found have their first lines requested, then the
  // lines their first key's seek starts from, then every group is served (or its block read).
  constexpr size_t kWindow = 8;
  struct Group {
    BlockHandle handle;
    size_t begin;
    size_t end;
    BlockRef ref;
    bool cached;
  };
  Group window[kWindow];
  size_t pending = 0;
  auto run_window = [&] {
    for (size_t w = 0; w < pending; w++) PrefetchCachedBlock(window[w].handle);
    for (size_t w = 0; w < pending; w++) {
      Group& g = window[w];
      g.cached = LookupCachedBlock(g.handle, &g.ref);
      if (g.cached) g.ref.get()->PrefetchHeader();
    }
    for (size_t w = 0; w < pending; w++) {
      const Group& g = window[w];
      if (g.cached) g.ref.get()->PrefetchSeek(candidates[g.begin]->lkey.internal_key());
    }
    for (size_t w = 0; w < pending; w++) {
      Group& g = window[w];
      MultiGetKey** group_keys = &candidates[g.begin];
      const size_t group_size = g.end - g.begin;
      if (g.cached) {
        ServeKeys(options, g.ref, g.handle, group_keys, group_size);
      } else if (io == nullptr) {
        const Status s = ReadDataBlock(options, g.handle, &g.ref, nullptr);
        if (s.ok()) {
          ServeKeys(options, g.ref, g.handle, group_keys, group_size);
        } else {
          for (size_t k = 0; k < group_size; k++) group_keys[k]->status = s;
        }
      } else {
        MissedBlock& m = missed.emplace_back();
        m.handle = g.handle;
        m.keys.assign(group_keys, group_keys + group_size);
      }
      g.ref.Reset();
    }
    pending = 0;
  };
  size_t i = 0;
  while (i < candidates.size()) {
    const Slice target = targets[i];
    if (!index.Valid() || cmp->Compare(target, index.key()) > 0)
      index.SeekFromRestart(restarts[i], target);
    if (!index.Valid()) {
      if (!index.status().ok()) {
        const Status s = IndexBlockCorruption(options_.file_name, index.status());
        for (; i < candidates.size(); i++) candidates[i]->status = s;
      }
      break;  // past the last block: the rest of the batch is not in this file
    }
    Slice v = index.value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&v).ok()) {
      candidates[i++]->status = BadIndexEntry(options_.file_name);
      continue;
    }
    size_t j = i + 1;
    while (j < candidates.size() && cmp->Compare(targets[j], index.key()) <= 0) {
      j++;
    }
    Group& g = window[pending];
    g.handle = handle;
    g.begin = i;
    g.end = j;
    if (++pending == kWindow) run_window();
    i = j;
  }
  run_window();
  // One coroutine per missing block: each block is decoded and serves its keys as soon as
  // it arrives, while the file's other reads are still in flight.
  // The rate limiter's grants for all of them first (the reads reach the kernel together at the
  // round's flush either way), so that each read's SST_READ_MICROS sample starts after every
  // grant and holds none of the waits for the blocks after it.
  for (const MissedBlock& m : missed) RequestReadRate(options, m.handle);
  for (MissedBlock& m : missed) io->Spawn(ReadMissedBlock(options, std::move(m), io));
}

}  // namespace shale
