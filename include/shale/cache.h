// Cache: a capacity-bounded map from byte-string keys to opaque values, used as the block
// cache (uncompressed blocks of table files) and the table cache (open table readers).
//
// Entries are charged in caller-chosen units (bytes for blocks). A Handle returned by Insert
// or Lookup pins its entry: the entry's value stays alive, and is never evicted, until every
// handle to it is Released — even if the entry is erased or replaced meanwhile. Unpinned
// entries are evicted least-recently-used first when usage exceeds capacity.
//
// Ownership: Insert hands the value to the cache; the cache calls the deleter exactly once,
// when the entry is both out of the cache and unpinned. Every handle is Released before the
// cache is destroyed.
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class Cache {
 public:
  // An opaque pin on an entry.
  struct Handle {};
  using Deleter = void (*)(const Slice& key, void* value);

  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  virtual ~Cache() = default;

  virtual const char* Name() const = 0;

  // Inserts key → value, replacing an existing entry for key. With handle non-null, *handle
  // pins the new entry and the caller must Release it; with handle null the entry may be
  // evicted at once if it does not fit. Returns Incomplete (and deletes nothing: the caller
  // keeps value) when a strict capacity limit leaves no room.
  [[nodiscard]] virtual Status Insert(const Slice& key, void* value, size_t charge, Deleter deleter,
                                      Handle** handle = nullptr) = 0;
  // A pinned entry for key, or null.
  virtual Handle* Lookup(const Slice& key) = 0;
  // A hint that Lookup(key) follows soon: the cache may start loading the memory that lookup
  // reads, so that several lookups' cache misses overlap. Changes nothing; does nothing by
  // default.
  virtual void Prefetch(const Slice& key) { (void)key; }
  // Adds one more pin to an entry already pinned by handle (Release once per pin).
  virtual void Ref(Handle* handle) = 0;
  virtual void Release(Handle* handle) = 0;
  virtual void* Value(Handle* handle) = 0;
  // Removes key from the cache; pinned values live on until released.
  virtual void Erase(const Slice& key) = 0;
  // A new id, unique within this cache, for callers to prefix keys with.
  virtual uint64_t NewId() = 0;

  virtual void SetCapacity(size_t capacity) = 0;
  virtual size_t GetCapacity() const = 0;
  // Charge of every entry in the cache plus pinned entries that were erased.
  virtual size_t GetUsage() const = 0;
  // Charge of pinned entries. The CLOCK cache computes it by visiting every slot.
  virtual size_t GetPinnedUsage() const = 0;
  // Drops every unpinned entry.
  virtual void EraseUnRefEntries() = 0;
};

// A sharded LRU cache of capacity bytes in 2^num_shard_bits shards (-1: chosen from capacity,
// at most 64 shards, each at least 512 KiB). With strict_capacity_limit, inserting beyond
// capacity fails with Incomplete instead of exceeding it.
std::shared_ptr<Cache> NewLRUCache(size_t capacity, int num_shard_bits = -1,
                                   bool strict_capacity_limit = false);

// A CLOCK cache whose hits take no lock: a lookup that finds its entry at the first probe
// reads one 64-byte slot and makes one atomic add on it, and a release makes one more, so
// readers on many threads do not contend on a shard mutex as with NewLRUCache.
//
// Each shard holds a fixed table of slots sized for entries of estimated_entry_charge: the
// table is built for capacity / (0.7 × estimated_entry_charge) entries and fills to 85 % of
// its slots at most, so entries much smaller than the estimate leave part of the capacity
// unused, and a capacity raised by SetCapacity does not grow the table. Keys of up to 16
// bytes are stored in the slot; longer keys work but take a heap copy each. Of two Inserts of
// one key racing each other, both may stay visible until one is evicted (a Lookup returns
// either); an Insert that begins after another ended replaces it, as in the LRU cache.
struct HyperClockCacheOptions {
  size_t capacity = 0;
  // The average charge of an entry: the block size for a block cache. 0 means 4 KiB.
  size_t estimated_entry_charge = 0;
  // 2^num_shard_bits shards; -1 picks them from capacity (each at least 32 MiB, at most 64).
  int num_shard_bits = -1;
  bool strict_capacity_limit = false;

  HyperClockCacheOptions() = default;
  HyperClockCacheOptions(size_t capacity_, size_t estimated_entry_charge_, int num_shard_bits_ = -1,
                         bool strict_capacity_limit_ = false)
      : capacity(capacity_),
        estimated_entry_charge(estimated_entry_charge_),
        num_shard_bits(num_shard_bits_),
        strict_capacity_limit(strict_capacity_limit_) {}

  std::shared_ptr<Cache> MakeSharedCache() const;
};

}  // namespace shale
