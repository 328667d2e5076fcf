// The CLOCK cache behind HyperClockCacheOptions::MakeSharedCache (contract in
// include/shale/cache.h).
//
// Each shard is a fixed, power-of-two table of 64-byte slots with open addressing: a key's
// probe path starts at hash & mask and steps by an odd stride taken from other hash bits, so
// it visits every slot once. A slot's `passes` counts the entries whose path goes over it to
// a slot further on; a search stops at the first slot on its path whose `passes` is 0.
// Entries never move; freeing one takes one off `passes` along its path.
//
// Slot state (one atomic word; the other fields are written only by the thread that owns the
// slot, before it publishes the state with a release store, and read only by threads that
// hold a reference, which they take with an acquiring add on the word):
//
//   bits 0-27   uses:  added by every Lookup, Ref and probe that passes over the slot
//   bits 28-55  drops: added by every Release
//   bit 56      IN_USE     the slot is not empty
//   bit 57      LIVE       the counts are references: refs = uses - drops
//   bit 58      VISIBLE    Lookup may return the entry (cleared by Erase and replacement)
//   bit 59      STANDALONE a heap slot outside the table (a pinned insert into a full table)
//
//   empty       IN_USE clear. The counts mean nothing: a probe's add that lands there is
//               never undone, and the next owner stores a whole new word.
//   owned       IN_USE alone: one thread fills the slot in, or tears it down.
//   cached      IN_USE | LIVE | VISIBLE
//   erased      IN_USE | LIVE, still referenced; the last reference frees it.
//
// A probe adds one use to every slot it reads, without loading it first: if the slot was
// LIVE that add is a reference, which the probe gives back (subtracting the use) unless the
// slot holds its key. A hit is therefore one cache line and one atomic add, and a Release
// one more add on the same line. At zero references, min(uses, 3) is the entry's CLOCK
// weight: the hand takes one off per pass (setting both counts to it) and frees the entry at
// 0, so an entry looked up since the last pass survives the next. Entries start at weight 2.
// When drops passes 2^27 + 3, a Release clears bit 27 of both counts (refs and weight stay).
//
// Freeing is a compare-and-swap from exactly "LIVE, no references" to owned, so it never
// races a Lookup: a Lookup's add makes the swap fail. Deleters run after the slot is empty,
// never while a slot is owned.
//
// Thread safety: lock-free; every method may be called from any thread.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "shale/cache.h"
#include "src/cache/sharded_cache.h"
#include "src/util/cache_line.h"
#include "src/util/hash.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

constexpr int kCountBits = 28;
constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
constexpr uint64_t kUse = 1;
constexpr uint64_t kDrop = uint64_t{1} << kCountBits;
constexpr uint64_t kInUse = uint64_t{1} << 56;
constexpr uint64_t kLive = uint64_t{1} << 57;
constexpr uint64_t kVisible = uint64_t{1} << 58;
constexpr uint64_t kStandalone = uint64_t{1} << 59;
constexpr uint64_t kFlags = kInUse | kLive | kVisible | kStandalone;
// Bit 27 of each count, cleared together once drops reach kOverflowAt.
constexpr uint64_t kHighCountBits = (uint64_t{1} << (kCountBits - 1)) * (kUse + kDrop);
constexpr uint64_t kOverflowAt = (uint64_t{1} << (kCountBits - 1)) + 3;
constexpr uint64_t kMaxWeight = 3;
constexpr uint64_t kInitialWeight = 2;

constexpr uint64_t Uses(uint64_t s) { return s & kCountMask; }
constexpr uint64_t Drops(uint64_t s) { return (s >> kCountBits) & kCountMask; }
constexpr uint64_t Refs(uint64_t s) { return (Uses(s) - Drops(s)) & kCountMask; }
constexpr uint64_t Counts(uint64_t uses, uint64_t drops) { return uses * kUse + drops * kDrop; }

constexpr uint8_t kLongKey = 0xFF;  // key_len of a key longer than kInlineKey
constexpr size_t kInlineKey = 16;

struct alignas(kCacheLineBytes) Slot : Cache::Handle {
  std::atomic<uint64_t> state{0};
  void* value = nullptr;
  Cache::Deleter deleter = nullptr;
  // Written before the state is published; atomic (relaxed) so that GetPinnedUsage may read it
  // without a reference.
  std::atomic<size_t> charge{0};
  // Inline keys: the bytes, zero-padded. A long key: key[0] holds a heap std::string*.
  uint64_t key[2] = {0, 0};
  uint64_t hash = 0;
  std::atomic<uint32_t> passes{0};
  uint8_t key_len = 0;  // 0..kInlineKey, or kLongKey

  const std::string* long_key() const {
    std::string* p;
    std::memcpy(&p, &key[0], sizeof(p));
    return p;
  }
};
static_assert(sizeof(Slot) == 64, "one slot per cache line");
static_assert(std::is_trivially_destructible_v<Slot>,
              "slots live in zeroed memory, never destroyed");

// A key as probes compare it. Thread safety: a value local to one call; borrows the key.
struct ProbeKey {
  explicit ProbeKey(const Slice& k) : full(k), hash(Hash64(k)) {
    if (k.size() <= kInlineKey) {
      len = static_cast<uint8_t>(k.size());
      if (!k.empty()) std::memcpy(words, k.data(), k.size());
    } else {
      len = kLongKey;
    }
  }
  bool Matches(const Slot& s) const {
    if (s.key_len != len) return false;
    if (len != kLongKey) return s.key[0] == words[0] && s.key[1] == words[1];
    return s.hash == hash && Slice(*s.long_key()) == full;
  }

  Slice full;
  uint64_t hash;
  uint64_t words[2] = {0, 0};
  uint8_t len = 0;
};

// What a freed entry leaves for its deleter, which runs once no slot is owned. Thread safety:
// local to the freeing thread, which owns the slot while it fills this in.
class Freed {
 public:
  Freed() = default;
  // Takes the key and value of an owned slot; the slot's fields are cleared.
  explicit Freed(Slot* s) : value_(s->value), deleter_(s->deleter), len_(s->key_len) {
    if (len_ == kLongKey) {
      long_key_.reset(const_cast<std::string*>(s->long_key()));
    } else {
      std::memcpy(key_, s->key, sizeof(key_));
    }
    s->value = nullptr;
    s->deleter = nullptr;
    s->key[0] = s->key[1] = 0;
    s->key_len = 0;
  }
  void Run() {
    if (deleter_ == nullptr) return;
    const Slice k = long_key_ ? Slice(*long_key_) : Slice(reinterpret_cast<char*>(key_), len_);
    deleter_(k, value_);
    deleter_ = nullptr;
  }

 private:
  void* value_ = nullptr;
  Cache::Deleter deleter_ = nullptr;
  uint64_t key_[2] = {0, 0};
  uint8_t len_ = 0;
  std::unique_ptr<std::string> long_key_;
};

void RunAll(std::vector<Freed>* freed) {
  for (Freed& f : *freed) f.Run();
  freed->clear();
}

void FillKey(Slot* s, const ProbeKey& k) {
  s->key_len = k.len;
  s->hash = k.hash;
  if (k.len == kLongKey) {
    std::string* copy = new std::string(k.full.data(), k.full.size());
    std::memcpy(&s->key[0], &copy, sizeof(copy));
    s->key[1] = 0;
  } else {
    s->key[0] = k.words[0];
    s->key[1] = k.words[1];
  }
}

// One shard: its table, its usage, and its clock hand.
// Thread safety: lock-free; the table pointer, mask and limits are set before any use.
class ClockShard {
 public:
  ClockShard() = default;
  ClockShard(const ClockShard&) = delete;
  ClockShard& operator=(const ClockShard&) = delete;

  // slots points to `count` constructed slots that outlive the shard.
  void Init(Slot* slots, size_t count, bool strict) {
    SHALE_ASSERT(count >= 16 && (count & (count - 1)) == 0);
    slots_ = slots;
    const size_t slots_n = count;
    mask_ = slots_n - 1;
    occupancy_limit_ = slots_n * 85 / 100;
    strict_ = strict;
    claimed_pages_ = std::make_unique<std::atomic<uint64_t>[]>(PageMapWords());
  }

  ~ClockShard() {
    // Every handle has been released (include/shale/cache.h): no slot is referenced.
    SHALE_ASSERT(standalone_count_.load() == 0);
    ForEachClaimedSlot([](Slot* s) {
      const uint64_t st = s->state.load(std::memory_order_acquire);
      if ((st & kInUse) == 0) return;
      SHALE_ASSERT((st & kLive) != 0 && Refs(st) == 0);
      Freed(s).Run();
    });
  }

  // Hints the CPU to load, for writing, the first slot a probe for hash visits.
  void PrefetchHome(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_], 1); }

  Cache::Handle* Lookup(const ProbeKey& k) {
    const uint64_t step = Step(k.hash);
    uint64_t idx = k.hash & mask_;
    for (uint64_t n = 0; n <= mask_; n++) {
      Slot* s = &slots_[idx];
      const uint64_t old = s->state.fetch_add(kUse, std::memory_order_acquire);
      if ((old & kLive) != 0) {
        if ((old & kVisible) != 0 && k.Matches(*s)) return s;
        Unref(s, /*release=*/false);
      }
      if (s->passes.load(std::memory_order_relaxed) == 0) break;
      idx = (idx + step) & mask_;
    }
    return nullptr;
  }

  static void Ref(Slot* s) {
    const uint64_t old = s->state.fetch_add(kUse, std::memory_order_relaxed);
    SHALE_ASSERT((old & kLive) != 0 && Refs(old) > 0);
    (void)old;
  }

  // Drops one reference: a Release (release) or a probe's own (!release). The last reference
  // to an entry that is no longer visible frees it, and so does the last reference to any
  // entry while the shard is over capacity (a pinned insert pushed it over).
  void Unref(Slot* s, bool release) {
    uint64_t now;
    if (release) {
      // Counts near overflow are cut while this reference still holds the slot: once dropped,
      // the slot may be freed and reused. Drops >= 2^27 + 3 means bit 27 is set in both.
      uint64_t cur = s->state.load(std::memory_order_relaxed);
      while (Drops(cur) >= kOverflowAt &&
             !s->state.compare_exchange_weak(cur, cur & ~kHighCountBits, std::memory_order_acq_rel,
                                             std::memory_order_relaxed)) {
      }
      now = s->state.fetch_add(kDrop, std::memory_order_acq_rel) + kDrop;
    } else {
      now = s->state.fetch_sub(kUse, std::memory_order_acq_rel) - kUse;
    }
    SHALE_ASSERT((now & kLive) != 0);
    if (Refs(now) != 0) return;
    if ((now & kVisible) == 0 ||
        usage_.load(std::memory_order_relaxed) > capacity_.load(std::memory_order_relaxed)) {
      Freed f;
      if (TryFree(s, now, &f, nullptr)) f.Run();
    }
  }

  Status Insert(const ProbeKey& k, void* value, size_t charge, Cache::Deleter deleter,
                Cache::Handle** handle) {
    std::vector<Freed> freed;
    // 1. The charge.
    if (strict_) {
      size_t cur = usage_.load(std::memory_order_relaxed);
      int fruitless = 0;
      for (;;) {
        const size_t cap = capacity_.load(std::memory_order_relaxed);
        if (cur + charge <= cap) {
          if (usage_.compare_exchange_weak(cur, cur + charge, std::memory_order_relaxed)) break;
          continue;
        }
        const Evicted got = Evict(cur + charge - cap, 0, &freed);
        const size_t before = cur;
        cur = usage_.load(std::memory_order_relaxed);
        // Nothing unpinned to free, and usage unchanged meanwhile (or several such rounds):
        // the cache is full of pinned entries.
        if (got.bytes == 0 && got.slots == 0 && (cur == before || ++fruitless > 2)) {
          RunAll(&freed);
          return Status::Incomplete("cache is full of pinned entries");
        }
      }
    } else {
      const size_t now = usage_.fetch_add(charge, std::memory_order_relaxed) + charge;
      const size_t cap = capacity_.load(std::memory_order_relaxed);
      if (now > cap) Evict(now - cap, 0, &freed);
      if (handle == nullptr && usage_.load(std::memory_order_relaxed) > cap) {
        // Unpinned and does not fit: taken and dropped at once, as if inserted and evicted.
        usage_.fetch_sub(charge, std::memory_order_relaxed);
        Hide(k, nullptr);
        RunAll(&freed);
        if (deleter != nullptr) deleter(k.full, value);
        return Status::OK();
      }
    }
    // 2. A slot: the table is never filled past occupancy_limit_, so probes stay short and a
    // claim finds an empty slot.
    Slot* s = nullptr;
    if (occupancy_.fetch_add(1, std::memory_order_relaxed) + 1 <= occupancy_limit_ ||
        Evict(0, 1, &freed).slots > 0) {
      s = Claim(k.hash);
    }
    if (s == nullptr) {
      occupancy_.fetch_sub(1, std::memory_order_relaxed);
      RunAll(&freed);
      if (strict_) {
        usage_.fetch_sub(charge, std::memory_order_relaxed);
        return Status::Incomplete("cache table is full of pinned entries");
      }
      if (handle == nullptr) {
        usage_.fetch_sub(charge, std::memory_order_relaxed);
        Hide(k, nullptr);  // inserted and evicted at once: it still replaces
        if (deleter != nullptr) deleter(k.full, value);
        return Status::OK();
      }
      // Pinned: a heap slot outside the table, freed by its last Release.
      s = new Slot;
      FillKey(s, k);
      s->value = value;
      s->deleter = deleter;
      s->charge.store(charge, std::memory_order_relaxed);
      standalone_usage_.fetch_add(charge, std::memory_order_relaxed);
      standalone_count_.fetch_add(1, std::memory_order_relaxed);
      s->state.store(kInUse | kLive | kStandalone | Counts(1, 0), std::memory_order_release);
      Hide(k, nullptr);
      *handle = s;
      return Status::OK();
    }
    FillKey(s, k);
    s->value = value;
    s->deleter = deleter;
    s->charge.store(charge, std::memory_order_relaxed);
    const uint64_t counts = handle != nullptr ? Counts(kInitialWeight, kInitialWeight - 1)
                                              : Counts(kInitialWeight, kInitialWeight);
    s->state.store(kInUse | kLive | kVisible | counts, std::memory_order_release);
    // 3. Older entries for the key are replaced.
    Hide(k, s);
    if (handle != nullptr) *handle = s;
    RunAll(&freed);
    return Status::OK();
  }

  // Hides every visible entry for k (but keep); the last reference to each frees it.
  void Hide(const ProbeKey& k, const Slot* keep) {
    const uint64_t step = Step(k.hash);
    uint64_t idx = k.hash & mask_;
    // The path up to keep is walked whole: keep's insert counted itself in those passes.
    bool past_keep = keep == nullptr;
    for (uint64_t n = 0; n <= mask_; n++) {
      Slot* s = &slots_[idx];
      if (s == keep) {
        past_keep = true;
      } else {
        const uint64_t old = s->state.fetch_add(kUse, std::memory_order_acquire);
        if ((old & kLive) != 0) {
          if ((old & kVisible) != 0 && k.Matches(*s)) {
            s->state.fetch_and(~kVisible, std::memory_order_acq_rel);
          }
          Unref(s, /*release=*/false);
        }
      }
      if (past_keep && s->passes.load(std::memory_order_relaxed) == 0) break;
      idx = (idx + step) & mask_;
    }
  }

  void SetCapacity(size_t capacity) {
    capacity_.store(capacity, std::memory_order_relaxed);
    const size_t usage = usage_.load(std::memory_order_relaxed);
    if (usage > capacity) {
      std::vector<Freed> freed;
      Evict(usage - capacity, 0, &freed);
      RunAll(&freed);
    }
  }

  void EraseUnRefEntries() {
    ForEachClaimedSlot([this](Slot* s) {
      const uint64_t st = s->state.load(std::memory_order_relaxed);
      if ((st & kLive) == 0 || Refs(st) != 0) return;
      Freed f;
      if (TryFree(s, st, &f, nullptr)) f.Run();
    });
  }

  size_t usage() const { return usage_.load(std::memory_order_relaxed); }

  // Reads every slot without taking references (which would disturb evictions), so under
  // concurrent use the sum is approximate: it may count a probe's passing reference as a pin,
  // or read a slot as it is refilled. Exact when the cache is quiescent.
  size_t pinned_usage() const {
    size_t pinned = standalone_usage_.load(std::memory_order_relaxed);
    ForEachClaimedSlot([&pinned](const Slot* s) {
      const uint64_t st = s->state.load(std::memory_order_acquire);
      if ((st & kLive) != 0 && Refs(st) > 0) pinned += s->charge.load(std::memory_order_relaxed);
    });
    return pinned;
  }

 private:
  struct Evicted {
    size_t bytes = 0;
    size_t slots = 0;
  };
  static constexpr uint64_t kHandStep = 8;  // slots a thread claims from the hand at once

  uint64_t Step(uint64_t hash) const { return ((hash >> 32) & mask_) | 1; }

  // The page map: one bit per page of slots (kSlotsPerPage) that a claim has written. The
  // other slots are all zero (empty), and on some kernels even reading a page of the mapping
  // that was never written gives it memory (no shared zero page), so the walks over every
  // entry (destruction, EraseUnRefEntries, pinned_usage) read only the marked pages.
  static constexpr uint64_t kSlotsPerPage = 4096 / sizeof(Slot);
  size_t PageMapWords() const {
    return ((mask_ + 1 + kSlotsPerPage - 1) / kSlotsPerPage + 63) / 64;
  }
  void MarkClaimed(uint64_t idx) {
    const uint64_t page = idx / kSlotsPerPage;
    std::atomic<uint64_t>& word = claimed_pages_[page / 64];
    const uint64_t bit = uint64_t{1} << (page % 64);
    if ((word.load(std::memory_order_relaxed) & bit) == 0) {
      word.fetch_or(bit, std::memory_order_relaxed);
    }
  }
  // Calls f on every slot of the marked pages. A slot claimed concurrently may be missed, as
  // a walk over the whole table could miss it too; quiescent, every slot in use is visited
  // (a claim marks its page before it publishes the entry).
  template <typename F>
  void ForEachClaimedSlot(F f) const {
    if (slots_ == nullptr) return;
    const uint64_t slots = mask_ + 1;
    for (size_t w = 0, words = PageMapWords(); w < words; w++) {
      uint64_t bits = claimed_pages_[w].load(std::memory_order_relaxed);
      while (bits != 0) {
        const uint64_t page = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
        bits &= bits - 1;
        const uint64_t end = std::min(slots, (page + 1) * kSlotsPerPage);
        for (uint64_t i = page * kSlotsPerPage; i < end; i++) f(&slots_[i]);
      }
    }
  }

  // Takes an empty slot on hash's path, counting the path over the slots before it; null if a
  // whole cycle found none (concurrent inserts filled every slot it tried).
  Slot* Claim(uint64_t hash) {
    const uint64_t step = Step(hash);
    uint64_t idx = hash & mask_;
    for (uint64_t n = 0; n <= mask_; n++) {
      Slot* s = &slots_[idx];
      if ((s->state.fetch_or(kInUse, std::memory_order_acq_rel) & kInUse) == 0) {
        MarkClaimed(idx);
        return s;
      }
      s->passes.fetch_add(1, std::memory_order_relaxed);
      idx = (idx + step) & mask_;
    }
    idx = hash & mask_;
    for (uint64_t n = 0; n <= mask_; n++) {
      slots_[idx].passes.fetch_sub(1, std::memory_order_relaxed);
      idx = (idx + step) & mask_;
    }
    return nullptr;
  }

  // Frees the entry in s if its state is still exactly expected (LIVE, no references):
  // empties the slot and leaves the key and value in *out for the caller to delete.
  bool TryFree(Slot* s, uint64_t expected, Freed* out, size_t* charge_out) {
    if ((expected & kLive) == 0 || Refs(expected) != 0) return false;
    if (!s->state.compare_exchange_strong(expected, kInUse, std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
      return false;
    }
    const size_t charge = s->charge.load(std::memory_order_relaxed);
    if (charge_out != nullptr) *charge_out = charge;
    *out = Freed(s);
    if ((expected & kStandalone) != 0) {
      delete s;
      standalone_usage_.fetch_sub(charge, std::memory_order_relaxed);
      standalone_count_.fetch_sub(1, std::memory_order_relaxed);
      usage_.fetch_sub(charge, std::memory_order_relaxed);
      return true;
    }
    const uint64_t step = Step(s->hash);
    for (uint64_t idx = s->hash & mask_; &slots_[idx] != s; idx = (idx + step) & mask_) {
      const uint32_t before = slots_[idx].passes.fetch_sub(1, std::memory_order_relaxed);
      SHALE_ASSERT(before > 0);
      (void)before;
    }
    s->charge.store(0, std::memory_order_relaxed);
    s->hash = 0;
    s->state.store(0, std::memory_order_release);
    occupancy_.fetch_sub(1, std::memory_order_relaxed);
    usage_.fetch_sub(charge, std::memory_order_relaxed);
    return true;
  }

  // Runs the clock hand until need_bytes of charge and need_slots slots are freed, or four
  // passes over the table found too little that is unreferenced.
  Evicted Evict(size_t need_bytes, size_t need_slots, std::vector<Freed>* freed) {
    Evicted got;
    const uint64_t budget = 4 * (mask_ + 1);
    for (uint64_t seen = 0; seen < budget && (got.bytes < need_bytes || got.slots < need_slots);
         seen += kHandStep) {
      const uint64_t start = hand_.fetch_add(kHandStep, std::memory_order_relaxed);
      for (uint64_t j = 0; j < kHandStep; j++) {
        Slot* s = &slots_[(start + j) & mask_];
        uint64_t st = s->state.load(std::memory_order_relaxed);
        if ((st & kLive) == 0 || Refs(st) != 0) continue;
        if ((st & kVisible) != 0) {
          const uint64_t weight = std::min(Uses(st), kMaxWeight);
          if (weight > 0) {
            s->state.compare_exchange_strong(st, (st & kFlags) | Counts(weight - 1, weight - 1),
                                             std::memory_order_relaxed);
            continue;
          }
        }
        Freed f;
        size_t charge = 0;
        if (TryFree(s, st, &f, &charge)) {
          got.bytes += charge;
          got.slots++;
          freed->push_back(std::move(f));
        }
      }
    }
    return got;
  }

  // Set by Init, read-only after (the words of claimed_pages_ excepted).
  Slot* slots_ = nullptr;
  uint64_t mask_ = 0;
  size_t occupancy_limit_ = 0;
  bool strict_ = false;
  // Pages of slots ever claimed (MarkClaimed): bits are set, never cleared, with relaxed
  // operations (a claim marks its page before the release store that publishes its entry).
  std::unique_ptr<std::atomic<uint64_t>[]> claimed_pages_;

  // Written by inserts and frees, read by Release.
  alignas(kCacheLineBytes) std::atomic<size_t> capacity_{0};
  std::atomic<size_t> usage_{0};      // charge of every entry, in the table or standalone
  std::atomic<size_t> occupancy_{0};  // slots in use or reserved by an insert

  alignas(kCacheLineBytes) std::atomic<uint64_t> hand_{0};
  std::atomic<size_t> standalone_usage_{0};
  std::atomic<size_t> standalone_count_{0};
};

// The slots of every shard in one anonymous mapping, in huge pages where the kernel allows:
// lookups land on random slots, and 2 MiB pages keep their translations in the TLB. An empty
// slot is all zero bytes, which is what a fresh mapping holds, so the slots are not written
// at construction: a table takes memory only where entries have landed.
// Ownership: owns the mapping (unmapped on destruction). Thread safety: immutable after
// construction; the slots in it are shared as the shards' comments say.
class SlotArena {
 public:
  explicit SlotArena(size_t count) : bytes_(RoundUp(count * sizeof(Slot))) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes_, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
    slots_ = static_cast<Slot*>(p);
  }
  ~SlotArena() { munmap(slots_, bytes_); }
  SlotArena(const SlotArena&) = delete;
  SlotArena& operator=(const SlotArena&) = delete;
  Slot* get() const { return slots_; }

 private:
  static size_t RoundUp(size_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    return n >= kHuge ? (n + kHuge - 1) / kHuge * kHuge : (n + 4095) / 4096 * 4096;
  }
  size_t bytes_;
  Slot* slots_ = nullptr;
};

size_t SlotsPerShard(size_t capacity, size_t estimated_entry_charge, int shard_bits) {
  const size_t n = size_t{1} << shard_bits;
  const size_t per_shard = (capacity + n - 1) / n;
  // Room for per_shard / estimated_entry_charge entries at a load of 0.7, at most 2^22
  // slots (256 MiB of table) per shard.
  const double want =
      static_cast<double>(per_shard) / (0.7 * static_cast<double>(estimated_entry_charge));
  size_t slots = 16;
  while (slots < want && slots < (size_t{1} << 22)) slots *= 2;
  return slots;
}

// Holds the arena as a base class constructed before, and destroyed after, the shards that
// point into it.
struct ArenaHolder {
  explicit ArenaHolder(size_t slots) : arena(slots) {}
  SlotArena arena;
};

class ClockCache final : private ArenaHolder, public ShardedCache<ClockShard> {
 public:
  ClockCache(size_t capacity, size_t estimated_entry_charge, int num_shard_bits, bool strict)
      : ArenaHolder(SlotsPerShard(capacity, estimated_entry_charge, num_shard_bits)
                    << num_shard_bits),
        ShardedCache(num_shard_bits) {
    const size_t per_shard = SlotsPerShard(capacity, estimated_entry_charge, num_shard_bits);
    for (size_t i = 0; i < num_shards(); i++) {
      shard(i).Init(arena.get() + i * per_shard, per_shard, strict);
    }
    SetCapacity(capacity);
  }

  const char* Name() const override { return "HyperClockCache"; }

  Status Insert(const Slice& key, void* value, size_t charge, Deleter deleter,
                Handle** handle) override {
    const ProbeKey k(key);
    return ShardOf(k.hash).Insert(k, value, charge, deleter, handle);
  }
  Handle* Lookup(const Slice& key) override {
    const ProbeKey k(key);
    return ShardOf(k.hash).Lookup(k);
  }
  void Prefetch(const Slice& key) override {
    const uint64_t hash = Hash64(key);
    ShardOf(hash).PrefetchHome(hash);
  }
  void Ref(Handle* handle) override { ClockShard::Ref(static_cast<Slot*>(handle)); }
  void Release(Handle* handle) override {
    Slot* s = static_cast<Slot*>(handle);
    ShardOf(s->hash).Unref(s, /*release=*/true);
  }
  void* Value(Handle* handle) override { return static_cast<Slot*>(handle)->value; }
  void Erase(const Slice& key) override {
    const ProbeKey k(key);
    ShardOf(k.hash).Hide(k, nullptr);
  }

 private:
  // Shards take the top bits of the hash; probe paths inside a shard use the low bits.
  ClockShard& ShardOf(uint64_t hash) const { return ShardOfHash<64>(hash); }
};

}  // namespace

std::shared_ptr<Cache> HyperClockCacheOptions::MakeSharedCache() const {
  const size_t estimate = estimated_entry_charge == 0 ? 4096 : estimated_entry_charge;
  int bits = num_shard_bits < 0 ? ShardBitsFor(capacity, size_t{32} << 20) : num_shard_bits;
  bits = std::min(bits, 20);
  return std::make_shared<ClockCache>(capacity, estimate, bits, strict_capacity_limit);
}

}  // namespace shale
