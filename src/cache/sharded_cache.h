// ShardedCache: what the caches share above their shards — ids, capacity split evenly over
// 2^shard_bits shards, and usage summed over them.
//
// Shard provides SetCapacity(size_t), usage(), pinned_usage() and EraseUnRefEntries(), each
// safe to call from any thread.
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "shale/cache.h"

namespace shale {

// Shard bits for capacity: each shard at least min_shard_bytes, at most 64 shards.
inline int ShardBitsFor(size_t capacity, size_t min_shard_bytes) {
  int bits = 0;
  while (bits < 6 && capacity >= 2 * min_shard_bytes) {
    bits++;
    capacity /= 2;
  }
  return bits;
}

template <class Shard>
class ShardedCache : public Cache {
 public:
  uint64_t NewId() override { return next_id_.fetch_add(1, std::memory_order_relaxed) + 1; }

  void SetCapacity(size_t capacity) override {
    capacity_.store(capacity, std::memory_order_relaxed);
    const size_t per_shard = (capacity + num_shards() - 1) / num_shards();
    for (size_t i = 0; i < num_shards(); i++) shards_[i].SetCapacity(per_shard);
  }
  size_t GetCapacity() const override { return capacity_.load(std::memory_order_relaxed); }
  size_t GetUsage() const override {
    size_t total = 0;
    for (size_t i = 0; i < num_shards(); i++) total += shards_[i].usage();
    return total;
  }
  size_t GetPinnedUsage() const override {
    size_t total = 0;
    for (size_t i = 0; i < num_shards(); i++) total += shards_[i].pinned_usage();
    return total;
  }
  void EraseUnRefEntries() override {
    for (size_t i = 0; i < num_shards(); i++) shards_[i].EraseUnRefEntries();
  }

 protected:
  explicit ShardedCache(int shard_bits)
      : shard_bits_(shard_bits), shards_(std::make_unique<Shard[]>(size_t{1} << shard_bits)) {}

  size_t num_shards() const { return size_t{1} << shard_bits_; }
  Shard& shard(size_t i) const { return shards_[i]; }
  // The shard of a hash whose top bits are well mixed (hash_bits wide).
  template <int hash_bits, class Hash>
  Shard& ShardOfHash(Hash hash) const {
    return shards_[shard_bits_ == 0 ? 0 : static_cast<size_t>(hash >> (hash_bits - shard_bits_))];
  }

  const int shard_bits_;

 private:
  const std::unique_ptr<Shard[]> shards_;
  std::atomic<size_t> capacity_{0};
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace shale
