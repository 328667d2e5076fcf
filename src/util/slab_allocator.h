// SlabAllocator: memory for table blocks, in size classes carved from 2 MiB slabs; SlabBuffer
// owns one allocation.
//
// Every block a read brings into the block cache is a fresh allocation of about a block's
// size. Slabs serve them without a malloc call each, packed by size class, and give whole
// slabs back to the system when they empty. Slabs are not advised as transparent huge pages:
// measured on a reopened DB's first scan, zeroing fresh 2 MiB pages cost more than the 4 KiB
// faults they save (docs/benchmarks.md, "The page fault"). Their small pages are faulted in
// ahead, 256 KiB at a time as slots are carved, with one madvise call each.
//
// Layout of a slab (2 MiB, 2 MiB-aligned, one size class):
//   [header: 256 bytes][slot 0][slot 1] ... [slot capacity-1][unused tail]
// A slot's address rounded down to 2 MiB finds its slab. Size classes are multiples of 256
// bytes up to 16 KiB; larger requests (index and filter blocks of big files) go to
// operator new. A freed slot joins its slab's free list (the link lives in the slot); a slab
// with free slots is on its class's partial list; a slab that becomes empty is returned to
// the system unless it is the class's only one or the only one with room.
// Under AddressSanitizer, the bytes of a slot past the request and free slots are poisoned,
// so overruns within a slab are reported as they would be between malloc blocks.
//
// Thread caches (Default() only): each thread keeps, per size class, a stack of up to
// kThreadCacheSlots slots it freed, at most kThreadCacheBytes in all. A block cache at steady
// state frees one block (the evicted one) for each it allocates, mostly on the same thread, so
// most pairs take no lock. An empty stack is refilled with half its capacity under one lock; a
// full one gives half back under one lock. A thread's cached slots return to their slabs when
// the thread exits (or calls ReleaseThreadCache()); until then they count as used and keep
// their slabs mapped (an idle thread's small-class slots may hold slabs that would otherwise
// be returned).
//
// Thread safety: Allocate and Free may be called from any thread (one mutex per size class;
// thread caches are thread-local). A slot may be freed by another thread than allocated it.
// Ownership: the allocator owns its slabs; the process-wide Default() lives until exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "src/util/asan_poison.h"
#include "src/util/mutex.h"
#include "src/util/thread_annotations.h"

namespace shale {

class SlabAllocator {
 public:
  // Whether unrequested and freed bytes are poisoned (AddressSanitizer builds).
  static constexpr bool kPoisons = SHALE_ASAN_POISONING;
  static constexpr size_t kSlabSize = 2 << 20;
  static constexpr size_t kGranule = 256;  // size classes step by this; also the header size
  static constexpr size_t kMaxSlot = 16 << 10;
  static constexpr uint32_t kThreadCacheSlots = 16;       // per size class
  static constexpr size_t kThreadCacheBytes = 256 << 10;  // per thread, all classes

  SlabAllocator() = default;
  // REQUIRES: every allocation was freed.
  ~SlabAllocator();
  SlabAllocator(const SlabAllocator&) = delete;
  SlabAllocator& operator=(const SlabAllocator&) = delete;

  // The allocator table blocks use.
  static SlabAllocator& Default();

  // n bytes (0 counts as 1), aligned to 16; give back with Free(p, n).
  char* Allocate(size_t n);
  void Free(char* p, size_t n);

  // Bytes an allocation of n really takes (its slot), for memory accounting.
  static size_t UsableSize(size_t n) {
    return n > kMaxSlot ? n : (n + kGranule - 1) / kGranule * kGranule;
  }
  // Slabs held (for tests and statistics).
  size_t SlabCount() const;
  // Gives the calling thread's cached slots of Default() back to their slabs.
  static void ReleaseThreadCache();

 private:
  struct Slab;
  struct ThreadCache;
  class ThreadCacheOwner;
  struct SizeClass {
    mutable Mutex mu;
    Slab* partial GUARDED_BY(mu) = nullptr;  // slabs with a free or uncarved slot
    size_t slabs GUARDED_BY(mu) = 0;
  };
  static constexpr size_t kClasses = kMaxSlot / kGranule;

  explicit SlabAllocator(bool thread_caches) : thread_caches_(thread_caches) {}

  static void Unlink(SizeClass* c, Slab* slab) REQUIRES(c->mu);
  static void PushPartial(SizeClass* c, Slab* slab) REQUIRES(c->mu);
  // One slot of class c (slot_size bytes), left poisoned; maps a slab if none has room.
  static char* TakeSlot(SizeClass* c, size_t slot_size) REQUIRES(c->mu);
  // Puts p back on its slab's free list; returns the slab if it is to be unmapped (after the
  // lock is released), else null.
  static Slab* PutSlot(SizeClass* c, char* p, size_t slot_size) REQUIRES(c->mu);
  static Slab* SlabOf(char* p);  // the slab a slot lies in
  static void Unmap(Slab* slab);
  // Gives the first `count` slots of `slots` (all of one class) back to their slabs.
  void PutSlots(size_t class_index, char* const* slots, uint32_t count);

  const bool thread_caches_ = false;
  SizeClass classes_[kClasses];
};

// n bytes from SlabAllocator::Default(), freed when this dies. Move-only.
class SlabBuffer {
 public:
  SlabBuffer() = default;
  explicit SlabBuffer(size_t n) : data_(SlabAllocator::Default().Allocate(n)), size_(n) {}
  ~SlabBuffer() { reset(); }
  SlabBuffer(SlabBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  SlabBuffer& operator=(SlabBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  char* get() const { return data_; }
  size_t size() const { return size_; }
  size_t usable_size() const { return data_ == nullptr ? 0 : SlabAllocator::UsableSize(size_); }
  explicit operator bool() const { return data_ != nullptr; }
  void reset() {
    if (data_ != nullptr) SlabAllocator::Default().Free(std::exchange(data_, nullptr), size_);
    size_ = 0;
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace shale
