// The sharded LRU cache behind NewLRUCache (contract in include/shale/cache.h).
//
// Each shard is a mutex-protected intrusive hash table of entries plus a circular LRU list of
// the entries that are in the cache and unpinned (the only ones eviction may take). An entry
// counts one reference for being in the cache and one per client pin; it is freed when the
// count reaches zero.
//
// No pin outlives the cache (include/shale/cache.h): every handle is Released before the
// cache is destroyed, so then every entry is in the cache and holds only the cache's own
// reference; ~LRUShard asserts it. How the caches are used makes it hold:
//   - The block cache: the DB and every TableReader hold a reference to it
//     (TableReaderOptions::block_cache), so it lives at least as long as the readers. A
//     reader's BlockRefs and iterators release their pins before the reader goes; values a
//     Get pins into PinnableSlices are Reset before the DB is destroyed (include/shale/db.h).
//     A cache passed in Options::block_cache may outlive the DB: it then holds no pins.
//   - The table cache (src/db/table_cache.h): every pin on a reader — a Get's, a MultiGet's,
//     an iterator's cleanup — is released before the DB's close destroys it.
//
// Thread safety: every shard's state is guarded by its mutex; usage counters are atomics so
// the getters need no lock.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "shale/cache.h"
#include "src/cache/sharded_cache.h"
#include "src/util/hash.h"
#include "src/util/invariants.h"
#include "src/util/mutex.h"

namespace shale {
namespace {

struct Entry : Cache::Handle {
  void* value = nullptr;
  Cache::Deleter deleter = nullptr;
  Entry* next_hash = nullptr;  // chain in the hash table
  Entry* next = nullptr;       // LRU list (only while in the cache and unpinned)
  Entry* prev = nullptr;
  size_t charge = 0;
  uint32_t hash = 0;
  uint32_t refs = 0;  // the cache's own reference (while in_cache) + client pins
  bool in_cache = false;
  uint32_t key_length = 0;
  char key_data[1];  // key_length bytes follow

  Slice key() const { return Slice(key_data, key_length); }

  static Entry* Make(const Slice& key) {
    void* mem = ::operator new(offsetof(Entry, key_data) + std::max<size_t>(key.size(), 1));
    Entry* e = new (mem) Entry;
    e->key_length = static_cast<uint32_t>(key.size());
    if (!key.empty()) std::memcpy(e->key_data, key.data(), key.size());
    return e;
  }
  // Runs the deleter and frees the entry.
  static void Free(Entry* e) {
    if (e->deleter != nullptr) e->deleter(e->key(), e->value);
    e->~Entry();
    ::operator delete(e);
  }
};

// Chained hash table of entries keyed by (key, hash); grows to keep chains short.
class EntryTable {
 public:
  EntryTable() { Resize(); }

  Entry* Lookup(const Slice& key, uint32_t hash) { return *Find(key, hash); }
  // Inserts e; returns the entry it replaced (same key), or null.
  Entry* Insert(Entry* e) {
    Entry** slot = Find(e->key(), e->hash);
    Entry* old = *slot;
    e->next_hash = old == nullptr ? nullptr : old->next_hash;
    *slot = e;
    if (old == nullptr && ++elems_ > buckets_.size()) Resize();
    return old;
  }
  bool empty() const { return elems_ == 0; }
  Entry* Remove(const Slice& key, uint32_t hash) {
    Entry** slot = Find(key, hash);
    Entry* e = *slot;
    if (e != nullptr) {
      *slot = e->next_hash;
      elems_--;
    }
    return e;
  }

 private:
  Entry** Find(const Slice& key, uint32_t hash) {
    Entry** slot = &buckets_[hash & (buckets_.size() - 1)];
    while (*slot != nullptr && ((*slot)->hash != hash || key != (*slot)->key())) {
      slot = &(*slot)->next_hash;
    }
    return slot;
  }
  void Resize() {
    size_t n = 16;
    while (n < elems_ * 2) n *= 2;
    std::vector<Entry*> fresh(n, nullptr);
    for (Entry* head : buckets_) {
      while (head != nullptr) {
        Entry* next = head->next_hash;
        Entry*& b = fresh[head->hash & (n - 1)];
        head->next_hash = b;
        b = head;
        head = next;
      }
    }
    buckets_.swap(fresh);
  }

  std::vector<Entry*> buckets_;
  size_t elems_ = 0;
};

class LRUShard {
 public:
  LRUShard() {
    lru_.next = &lru_;
    lru_.prev = &lru_;
  }
  ~LRUShard() {
    // Every handle must have been released (no pinned entry, in the cache or erased from it):
    // what remains is in the cache, unpinned, so all of it is on the LRU list.
    MutexLock l(&mu_);
    SHALE_ASSERT(pinned_entries_ == 0);
    while (lru_.next != &lru_) {
      Entry* e = lru_.next;
      SHALE_ASSERT(e->refs == 1 && e->in_cache);
      Unlink(e);
      table_.Remove(e->key(), e->hash);
      Entry::Free(e);
    }
    SHALE_ASSERT(table_.empty());
  }

  void SetCapacity(size_t capacity) {
    std::vector<Entry*> freed;
    {
      MutexLock l(&mu_);
      capacity_ = capacity;
      EvictTo(capacity_, &freed);
    }
    FreeAll(freed);
  }

  Status Insert(const Slice& key, uint32_t hash, void* value, size_t charge, Cache::Deleter deleter,
                Cache::Handle** handle, bool strict) {
    std::vector<Entry*> freed;
    Status s;
    {
      MutexLock l(&mu_);
      // Make room among unpinned entries first.
      EvictTo(capacity_ > charge ? capacity_ - charge : 0, &freed);
      if (usage_.load(std::memory_order_relaxed) + charge > capacity_ &&
          (strict || handle == nullptr)) {
        if (strict) {
          s = Status::Incomplete("cache is full of pinned entries");
        } else {
          // Unpinned and does not fit: the cache takes it and drops it at once, as if it
          // had been inserted and evicted — so it still replaces an entry for key.
          if (Entry* old = table_.Remove(key, hash); old != nullptr) Detach(old, &freed);
          Entry* e = Entry::Make(key);
          e->value = value;
          e->deleter = deleter;
          e->charge = charge;
          freed.push_back(e);
        }
      } else {
        Entry* e = Entry::Make(key);
        e->value = value;
        e->deleter = deleter;
        e->charge = charge;
        e->hash = hash;
        e->in_cache = true;
        e->refs = 1 + (handle != nullptr ? 1 : 0);
        usage_.fetch_add(charge, std::memory_order_relaxed);
        if (handle != nullptr) {
          pinned_usage_.fetch_add(charge, std::memory_order_relaxed);
          pinned_entries_++;
          *handle = e;
        } else {
          Append(e);
        }
        Entry* old = table_.Insert(e);
        if (old != nullptr) Detach(old, &freed);
      }
    }
    FreeAll(freed);
    return s;
  }

  Cache::Handle* Lookup(const Slice& key, uint32_t hash) {
    MutexLock l(&mu_);
    Entry* e = table_.Lookup(key, hash);
    if (e != nullptr) Pin(e);
    return e;
  }

  void Ref(Entry* e) {
    MutexLock l(&mu_);
    SHALE_ASSERT(e->refs > (e->in_cache ? 1u : 0u));
    e->refs++;
  }

  void Release(Entry* e) {
    bool free_it = false;
    {
      MutexLock l(&mu_);
      free_it = Unpin(e);
    }
    if (free_it) Entry::Free(e);
  }

  void Erase(const Slice& key, uint32_t hash) {
    std::vector<Entry*> freed;
    {
      MutexLock l(&mu_);
      Entry* e = table_.Remove(key, hash);
      if (e != nullptr) Detach(e, &freed);
    }
    FreeAll(freed);
  }

  void EraseUnRefEntries() {
    std::vector<Entry*> freed;
    {
      MutexLock l(&mu_);
      EvictTo(0, &freed);
    }
    FreeAll(freed);
  }

  size_t usage() const { return usage_.load(std::memory_order_relaxed); }
  size_t pinned_usage() const { return pinned_usage_.load(std::memory_order_relaxed); }

 private:
  void Append(Entry* e) REQUIRES(mu_) {
    e->next = &lru_;
    e->prev = lru_.prev;
    e->prev->next = e;
    e->next->prev = e;
  }
  static void Unlink(Entry* e) {
    e->next->prev = e->prev;
    e->prev->next = e->next;
    e->next = e->prev = nullptr;
  }
  void Pin(Entry* e) REQUIRES(mu_) {
    if (e->in_cache && e->refs == 1) {
      Unlink(e);
      pinned_usage_.fetch_add(e->charge, std::memory_order_relaxed);
      pinned_entries_++;
    }
    e->refs++;
  }
  // Drops one client pin; true when the entry must be freed by the caller.
  bool Unpin(Entry* e) REQUIRES(mu_) {
    SHALE_ASSERT(e->refs > 0);
    e->refs--;
    if (e->refs == 0) {
      // Out of the cache and no longer pinned.
      pinned_usage_.fetch_sub(e->charge, std::memory_order_relaxed);
      pinned_entries_--;
      usage_.fetch_sub(e->charge, std::memory_order_relaxed);
      return true;
    }
    if (e->in_cache && e->refs == 1) {
      pinned_usage_.fetch_sub(e->charge, std::memory_order_relaxed);
      pinned_entries_--;
      if (usage_.load(std::memory_order_relaxed) > capacity_) {
        // Over capacity (an earlier pinned insert): drop it rather than keep it.
        table_.Remove(e->key(), e->hash);
        e->in_cache = false;
        e->refs = 0;
        usage_.fetch_sub(e->charge, std::memory_order_relaxed);
        return true;
      }
      Append(e);
    }
    return false;
  }
  // e was just removed from the table: drop the cache's reference.
  void Detach(Entry* e, std::vector<Entry*>* freed) REQUIRES(mu_) {
    SHALE_ASSERT(e->in_cache);
    e->in_cache = false;
    if (e->refs == 1) {
      Unlink(e);
      e->refs = 0;
      usage_.fetch_sub(e->charge, std::memory_order_relaxed);
      freed->push_back(e);
    } else {
      // Still pinned: it leaves the cache but its charge stays in usage (and pinned usage)
      // until the last Release.
      e->refs--;
    }
  }
  void EvictTo(size_t target, std::vector<Entry*>* freed) REQUIRES(mu_) {
    while (usage_.load(std::memory_order_relaxed) > target && lru_.next != &lru_) {
      Entry* e = lru_.next;
      table_.Remove(e->key(), e->hash);
      Detach(e, freed);
    }
  }
  // Deleters run outside the lock: they may be slow or call back into the cache.
  static void FreeAll(const std::vector<Entry*>& entries) {
    for (Entry* e : entries) Entry::Free(e);
  }

  Mutex mu_;
  size_t capacity_ GUARDED_BY(mu_) = 0;
  EntryTable table_ GUARDED_BY(mu_);
  Entry lru_ GUARDED_BY(mu_);  // list head; oldest at lru_.next
  std::atomic<size_t> usage_{0};
  std::atomic<size_t> pinned_usage_{0};
  // Entries with a client pin, in the cache or erased from it: pinned_usage_ counted in
  // entries rather than charge, so that entries of charge 0 count too.
  size_t pinned_entries_ GUARDED_BY(mu_) = 0;
};

class LRUCache final : public ShardedCache<LRUShard> {
 public:
  LRUCache(size_t capacity, int num_shard_bits, bool strict)
      : ShardedCache(num_shard_bits), strict_(strict) {
    SetCapacity(capacity);
  }

  const char* Name() const override { return "LRUCache"; }

  Status Insert(const Slice& key, void* value, size_t charge, Deleter deleter,
                Handle** handle) override {
    const uint32_t h = HashOf(key);
    return Shard(h).Insert(key, h, value, charge, deleter, handle, strict_);
  }
  Handle* Lookup(const Slice& key) override {
    const uint32_t h = HashOf(key);
    return Shard(h).Lookup(key, h);
  }
  void Ref(Handle* handle) override {
    Entry* e = static_cast<Entry*>(handle);
    Shard(e->hash).Ref(e);
  }
  void Release(Handle* handle) override {
    Entry* e = static_cast<Entry*>(handle);
    Shard(e->hash).Release(e);
  }
  void* Value(Handle* handle) override { return static_cast<Entry*>(handle)->value; }
  void Erase(const Slice& key) override {
    const uint32_t h = HashOf(key);
    Shard(h).Erase(key, h);
  }

 private:
  static uint32_t HashOf(const Slice& key) { return static_cast<uint32_t>(Hash64(key) >> 32); }
  // Shards take the top bits; the hash table inside a shard uses the low bits.
  LRUShard& Shard(uint32_t hash) const { return ShardOfHash<32>(hash); }

  const bool strict_;
};

}  // namespace

std::shared_ptr<Cache> NewLRUCache(size_t capacity, int num_shard_bits,
                                   bool strict_capacity_limit) {
  if (num_shard_bits < 0) num_shard_bits = ShardBitsFor(capacity, size_t{512} << 10);
  num_shard_bits = std::min(num_shard_bits, 20);
  return std::make_shared<LRUCache>(capacity, num_shard_bits, strict_capacity_limit);
}

}  // namespace shale
