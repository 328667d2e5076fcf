// Read-triggered compaction of L0 (after LevelDB's seek compaction and Pebble's read
// compaction): a seek landing on a key that an L0 file and another sorted run both hold charges
// the newest such L0 file, and once an L0 file has been charged more seeks than its size allows,
// L0 is compacted into the base level (ColumnFamilyOptions::read_compaction_bytes_per_seek),
// so that later seeks read fewer sorted runs.
//
// The cost model is LevelDB's: a seek that reads a block from one more sorted run costs about
// as much as compacting 16 KiB, so a file may be charged file_size / 16 KiB seeks (at least
// 100) before rewriting it is cheaper than going on paying for it. Only L0 files are charged:
// each usually spans most of the key space, so it is one more run for nearly every seek, and
// its compaction is the one L0's trigger would run later anyway. A file of a deeper level is
// one run per level by design, and moving it down rewrites about ten times its size of the
// next level: on flash that costs far more than the seeks it saves, and running it beside the
// reads that asked for it raised their P99.9 three times over (10M keys, S5 of
// docs/benchmarks.md). Only iterator seeks charge: point lookups skip the files that cannot
// hold their key by the files' filters. An iterator samples one seek in kSeekSamplePeriod at
// random and charges it that many.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "shale/slice.h"
#include "src/db/file_meta_data.h"
#include "src/util/random.h"

namespace shale {

class Version;

// Seeks a file may be charged before it is due for a read-triggered compaction.
// REQUIRES: bytes_per_seek > 0.
inline uint64_t AllowedSeeks(const FileMetaData& f, uint64_t bytes_per_seek) {
  return std::max<uint64_t>(100, f.file_size / bytes_per_seek);
}

// Whether f has been charged its allowed seeks (never, with bytes_per_seek 0).
inline bool SeeksExhausted(const FileMetaData& f, uint64_t bytes_per_seek) {
  return bytes_per_seek > 0 && f.seeks.charged() >= AllowedSeeks(f, bytes_per_seek);
}

// Charges one iterator's seeks to the L0 files of the Version it reads. When a charge brings a
// file to its allowed seeks, calls due (once per file: the charge that crosses the line).
// Thread safety: one thread at a time (the iterator's); charges on files are atomic, and due
// may be called from any iterator's thread. Lifetime: version must outlive the sampler (the
// iterator's SuperVersion holds it).
class ReadSampler {
 public:
  static constexpr uint32_t kSeekSamplePeriod = 16;

  // REQUIRES: bytes_per_seek > 0. seed varies the sampled seeks between iterators.
  ReadSampler(const Version* version, uint64_t bytes_per_seek, uint64_t seed,
              std::function<void()> due);
  ReadSampler(const ReadSampler&) = delete;
  ReadSampler& operator=(const ReadSampler&) = delete;

  // A seek landed on user_key.
  void Seeked(const Slice& user_key) {
    if (--countdown_ > 0) return;
    countdown_ = 1 + static_cast<uint32_t>(rnd_.Uniform(2 * kSeekSamplePeriod - 1));
    Charge(user_key);
  }

 private:
  void Charge(const Slice& user_key);

  const Version* const version_;
  const uint64_t bytes_per_seek_;
  const std::function<void()> due_;
  Random rnd_;
  uint32_t countdown_;  // seeks until the next sample
};

}  // namespace shale
