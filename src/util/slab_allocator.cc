#include "src/util/slab_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "src/util/invariants.h"

namespace shale {

// The header at the start of every slab. Guarded by its size class's mutex.
struct SlabAllocator::Slab {
  Slab* prev = nullptr;  // partial list links (valid while in_partial)
  Slab* next = nullptr;
  char* free_list = nullptr;  // freed slots, linked through their first word
  uint32_t slot_size = 0;
  uint32_t capacity = 0;   // slots that fit after the header
  uint32_t carved = 0;     // slots handed out at least once (the rest are untouched)
  uint32_t populated = 0;  // bytes from the slab's start faulted in ahead (PopulateThrough)
  uint32_t used = 0;       // slots allocated now
  bool in_partial = false;

  char* slot(uint32_t i) {
    return reinterpret_cast<char*>(this) + kGranule + size_t{i} * slot_size;
  }

  // Faults in the slab's pages up to `end` bytes from its start, a chunk at a time, once the
  // slots carved so far reach past what is faulted in already. A slot's first touch would
  // fault its pages in one 4 KiB page at a time, each fault a trap into the kernel; one
  // madvise per chunk faults its 64 pages in one call (MADV_POPULATE_WRITE, Linux 5.14; on
  // older kernels the advice fails and the pages fault as before). A slab no longer carved
  // holds at most one chunk faulted in and unused. Runs under the size class's mutex (one
  // call per 256 KiB carved). docs/benchmarks.md ("Slabs faulted in ahead") has the
  // measurements.
  void PopulateThrough(size_t end) {
    constexpr size_t kChunk = 256 << 10;
    static_assert(kSlabSize % kChunk == 0);
    if (end <= populated) return;
    const size_t to = std::min(kSlabSize, (end + kChunk - 1) / kChunk * kChunk);
#ifdef MADV_POPULATE_WRITE
    // Advice: a failure leaves the pages to fault on first touch.
    madvise(reinterpret_cast<char*>(this) + populated, to - populated, MADV_POPULATE_WRITE);
#endif
    populated = static_cast<uint32_t>(to);
  }
};

namespace {

// 2 MiB of address space aligned to 2 MiB (a slot finds its slab by rounding its address down).
// No huge-page advice: a transparent huge page is zeroed whole at its first touch, from memory
// the process has not used before, and on a virtual machine that cost more than the small-page
// faults it saves (docs/benchmarks.md, "The page fault"). Where THP is on for every mapping the
// kernel may still back slabs with huge pages.
char* MapSlab() {
  constexpr size_t kSize = SlabAllocator::kSlabSize;
  void* raw = mmap(nullptr, 2 * kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kSize - 1) & ~(uintptr_t{kSize} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + 2 * kSize;
  if (end > aligned + kSize)
    munmap(reinterpret_cast<void*>(aligned + kSize), end - aligned - kSize);
  return reinterpret_cast<char*>(aligned);
}

}  // namespace

SlabAllocator& SlabAllocator::Default() {
  // Never destroyed: blocks may be freed by static destructors of the application.
  static SlabAllocator* const allocator = new SlabAllocator(/*thread_caches=*/true);
  return *allocator;
}

SlabAllocator::~SlabAllocator() {
  for (SizeClass& c : classes_) {
    MutexLock lock(&c.mu);
    while (c.partial != nullptr) {
      Slab* slab = c.partial;
      SHALE_ASSERT(slab->used == 0);
      Unlink(&c, slab);
      Unmap(slab);
    }
  }
}

void SlabAllocator::Unlink(SizeClass* c, Slab* slab) {
  if (slab->prev != nullptr) {
    slab->prev->next = slab->next;
  } else {
    c->partial = slab->next;
  }
  if (slab->next != nullptr) slab->next->prev = slab->prev;
  slab->prev = slab->next = nullptr;
  slab->in_partial = false;
}

void SlabAllocator::PushPartial(SizeClass* c, Slab* slab) {
  slab->prev = nullptr;
  slab->next = c->partial;
  if (c->partial != nullptr) c->partial->prev = slab;
  c->partial = slab;
  slab->in_partial = true;
}

// A thread's cached slots of Default(), one stack per size class. Touched by its thread only.
struct SlabAllocator::ThreadCache {
  struct Stack {
    uint32_t count = 0;
    char* slots[kThreadCacheSlots];
  };
  Stack stacks[kClasses];
  size_t bytes = 0;  // slot bytes in all stacks; at most kThreadCacheBytes

  // Gives every cached slot back to Default().
  void Drain() {
    for (size_t i = 0; i < kClasses; i++) {
      Default().PutSlots(i, stacks[i].slots, stacks[i].count);
      stacks[i].count = 0;
    }
    bytes = 0;
  }
};

// The calling thread's ThreadCache: made at its first use, drained and deleted by the
// thread-local destructor at thread exit. After that destructor has run (other thread-local
// destructors may still free blocks) the thread has none and uses the locked path.
class SlabAllocator::ThreadCacheOwner {
 public:
  static ThreadCache* Get() {
    ThreadCache* c = cache_;
    if (c != nullptr) [[likely]]
      return c;
    if (gone_) return nullptr;
    (void)&owner_;  // constructs this thread's owner, which registers its destructor
    cache_ = new ThreadCache();
    return cache_;
  }
  static void Release() {
    if (cache_ != nullptr) cache_->Drain();
  }

  ~ThreadCacheOwner() {
    Release();
    delete std::exchange(cache_, nullptr);
    gone_ = true;
  }

 private:
  static thread_local ThreadCache* cache_;
  static thread_local bool gone_;
  static thread_local ThreadCacheOwner owner_;
};

thread_local SlabAllocator::ThreadCache* SlabAllocator::ThreadCacheOwner::cache_ = nullptr;
thread_local bool SlabAllocator::ThreadCacheOwner::gone_ = false;
thread_local SlabAllocator::ThreadCacheOwner SlabAllocator::ThreadCacheOwner::owner_;

void SlabAllocator::ReleaseThreadCache() { ThreadCacheOwner::Release(); }

char* SlabAllocator::TakeSlot(SizeClass* c, size_t slot_size) {
  Slab* slab = c->partial;
  if (slab == nullptr) {
    char* mem = MapSlab();
    slab = new (mem) Slab();
    slab->slot_size = static_cast<uint32_t>(slot_size);
    slab->capacity = static_cast<uint32_t>((kSlabSize - kGranule) / slot_size);
    SHALE_POISON(slab->slot(0), kSlabSize - kGranule);
    PushPartial(c, slab);
    c->slabs++;
  }
  char* p;
  if (slab->free_list != nullptr) {
    p = slab->free_list;
    SHALE_UNPOISON(p, sizeof(char*));
    std::memcpy(&slab->free_list, p, sizeof(char*));
    SHALE_POISON(p, sizeof(char*));  // a request under 8 bytes unpoisons only its own
  } else {
    p = slab->slot(slab->carved++);
    slab->PopulateThrough(static_cast<size_t>(p - reinterpret_cast<char*>(slab)) + slot_size);
  }
  slab->used++;
  if (slab->free_list == nullptr && slab->carved == slab->capacity) Unlink(c, slab);
  return p;
}

SlabAllocator::Slab* SlabAllocator::PutSlot(SizeClass* c, char* p, size_t slot_size) {
  Slab* slab = SlabOf(p);
  SHALE_ASSERT(slab->slot_size == slot_size);
  SHALE_POISON(p, slot_size);
  SHALE_UNPOISON(p, sizeof(char*));
  std::memcpy(p, &slab->free_list, sizeof(char*));
  SHALE_POISON(p, sizeof(char*));
  slab->free_list = p;
  SHALE_ASSERT(slab->used > 0);
  slab->used--;
  if (!slab->in_partial) PushPartial(c, slab);
  if (slab->used == 0 && c->slabs > 1) {
    // Give an empty slab back unless it is the class's only one with room: with the others
    // full, the next allocation would map a new slab at once (a cache at steady state
    // evicting and inserting one block of the class would map and unmap on every pair).
    Unlink(c, slab);
    if (c->partial != nullptr) {
      c->slabs--;
      return slab;
    }
    PushPartial(c, slab);
  }
  return nullptr;
}

SlabAllocator::Slab* SlabAllocator::SlabOf(char* p) {
  return reinterpret_cast<Slab*>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{kSlabSize} - 1));
}

void SlabAllocator::Unmap(Slab* slab) {
  SHALE_UNPOISON(slab, kSlabSize);
  munmap(slab, kSlabSize);
}

void SlabAllocator::PutSlots(size_t class_index, char* const* slots, uint32_t count) {
  if (count == 0) return;
  SizeClass* c = &classes_[class_index];
  const size_t slot_size = (class_index + 1) * kGranule;
  Slab* unmap[kThreadCacheSlots];
  uint32_t unmaps = 0;
  {
    MutexLock lock(&c->mu);
    for (uint32_t i = 0; i < count; i++) {
      Slab* slab = PutSlot(c, slots[i], slot_size);
      if (slab != nullptr) {
        SHALE_ASSERT(unmaps < kThreadCacheSlots);
        unmap[unmaps++] = slab;
      }
    }
  }
  for (uint32_t i = 0; i < unmaps; i++) Unmap(unmap[i]);
}

char* SlabAllocator::Allocate(size_t n) {
  static_assert(sizeof(Slab) <= kGranule, "the header must fit before the first slot");
  n = n == 0 ? 1 : n;
  if (n > kMaxSlot) return new char[n];
  const size_t slot_size = UsableSize(n);
  const size_t class_index = slot_size / kGranule - 1;
  SizeClass* c = &classes_[class_index];
  ThreadCache* tc = thread_caches_ ? ThreadCacheOwner::Get() : nullptr;
  char* p;
  if (tc != nullptr && tc->stacks[class_index].count > 0) {
    ThreadCache::Stack& stack = tc->stacks[class_index];
    p = stack.slots[--stack.count];
    tc->bytes -= slot_size;
  } else if (tc != nullptr) {
    // Refill: this slot and up to half a stack more, within the thread's byte bound, from
    // slabs with room (a new slab is mapped for the first slot only).
    ThreadCache::Stack& stack = tc->stacks[class_index];
    const size_t extra =
        std::min<size_t>(kThreadCacheSlots / 2 - 1, (kThreadCacheBytes - tc->bytes) / slot_size);
    MutexLock lock(&c->mu);
    p = TakeSlot(c, slot_size);
    while (stack.count < extra && c->partial != nullptr) {
      stack.slots[stack.count++] = TakeSlot(c, slot_size);
      tc->bytes += slot_size;
    }
  } else {
    MutexLock lock(&c->mu);
    p = TakeSlot(c, slot_size);
  }
  SHALE_UNPOISON(p, n);
  return p;
}

void SlabAllocator::Free(char* p, size_t n) {
  if (p == nullptr) return;
  n = n == 0 ? 1 : n;
  if (n > kMaxSlot) {
    delete[] p;
    return;
  }
  const size_t slot_size = UsableSize(n);
  const size_t class_index = slot_size / kGranule - 1;
  // A live slot's first byte is addressable; a freed one's is poisoned (AddressSanitizer
  // builds), so a second Free of a slot is caught here, before a cache could hand it out twice.
  SHALE_ASSERT(!SHALE_IS_POISONED(p));
  ThreadCache* tc = thread_caches_ ? ThreadCacheOwner::Get() : nullptr;
  if (tc != nullptr) {
    ThreadCache::Stack& stack = tc->stacks[class_index];
    if (stack.count == kThreadCacheSlots || tc->bytes + slot_size > kThreadCacheBytes) {
      // Give the older half of this class's stack back.
      const uint32_t give = (stack.count + 1) / 2;
      PutSlots(class_index, stack.slots, give);
      std::copy(stack.slots + give, stack.slots + stack.count, stack.slots);
      stack.count -= give;
      tc->bytes -= give * slot_size;
    }
    if (tc->bytes + slot_size <= kThreadCacheBytes) {
      SHALE_ASSERT(SlabOf(p)->slot_size == slot_size);
      SHALE_POISON(p, slot_size);
      stack.slots[stack.count++] = p;
      tc->bytes += slot_size;
      return;
    }
  }
  PutSlots(class_index, &p, 1);
}

size_t SlabAllocator::SlabCount() const {
  size_t total = 0;
  for (const SizeClass& c : classes_) {
    MutexLock lock(&c.mu);
    total += c.slabs;
  }
  return total;
}

}  // namespace shale
