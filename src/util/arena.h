// Arena: bump allocation out of large blocks, all freed together when the arena dies.
//
// Memtables keep their skiplist nodes and entries here: allocation is a pointer bump, and
// dropping a memtable frees everything at once.
// With a block size of kHugePageSize or more, blocks are 2 MiB-aligned multiples of 2 MiB
// advised as transparent huge pages (Linux, where enabled): a lookup walking a large memtable
// touches nodes megabytes apart, and with 4 KiB pages nearly every step is also a TLB miss.
// Standard-size blocks come from an ArenaBlockPool and go back to it when the arena dies: given
// one shared with other arenas (a family's memtables), a new arena reuses the memory of those
// gone instead of faulting fresh pages in.
// Thread safety: Arena is single-threaded; ConcurrentArena serializes allocation with a
// spin lock so concurrent skiplist inserters can share it. MemoryUsage() may be read by any
// thread at any time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "src/util/arena_block_pool.h"

namespace shale {

class Arena {
 public:
  static constexpr size_t kBlockSize = 64 << 10;
  static constexpr size_t kHugePageSize = ArenaBlockPool::kHugePageSize;

  // Memory is reserved in blocks of block_size bytes (a memtable sizes them from its write
  // buffer so that small buffers are not dominated by one block). pool: where standard-size
  // blocks come from and go back to; REQUIRES: its block_size() is BlockSizeFor(block_size)
  // and its huge() is block_size >= kHugePageSize. Null: a pool of the arena's own that keeps
  // nothing.
  explicit Arena(size_t block_size = kBlockSize, std::shared_ptr<ArenaBlockPool> pool = nullptr);
  // The block size and huge-page choice an Arena makes of block_size (what its pool must have).
  static size_t BlockSizeFor(size_t block_size) {
    return block_size >= kHugePageSize ? RoundUpToHugePage(block_size)
                                       : (block_size + 15) & ~size_t{15};
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Bytes with no alignment guarantee. REQUIRES: bytes > 0.
  char* Allocate(size_t bytes) {
    if (bytes <= remaining_) {
      char* result = ptr_;
      ptr_ += bytes;
      remaining_ -= bytes;
      return result;
    }
    return AllocateFallback(bytes);
  }
  // Bytes aligned for any fundamental type (alignof(max_align_t) up to 16).
  char* AllocateAligned(size_t bytes);

  // Bytes reserved from the system, including unused block tails.
  size_t MemoryUsage() const { return memory_usage_.load(std::memory_order_relaxed); }

 private:
  // Gives a block back: to the pool it came from, else the way ArenaBlockPool::Allocate made it.
  struct BlockDeleter {
    ArenaBlockPool* pool = nullptr;  // a standard-size block
    bool huge = false;               // a large object's block: its allocation
    void operator()(char* p) const;
  };
  static size_t RoundUpToHugePage(size_t n) {
    return (n + kHugePageSize - 1) & ~(kHugePageSize - 1);
  }

  char* AllocateFallback(size_t bytes);
  char* NewBlock(size_t bytes);

  const size_t block_size_;
  const bool huge_pages_;
  // Declared before blocks_: it outlives them.
  const std::shared_ptr<ArenaBlockPool> pool_;
  char* ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<std::unique_ptr<char[], BlockDeleter>> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

class ConcurrentArena {
 public:
  explicit ConcurrentArena(size_t block_size = Arena::kBlockSize,
                           std::shared_ptr<ArenaBlockPool> pool = nullptr)
      : arena_(block_size, std::move(pool)) {}
  ConcurrentArena(const ConcurrentArena&) = delete;
  ConcurrentArena& operator=(const ConcurrentArena&) = delete;

  char* Allocate(size_t bytes) {
    Guard g(&lock_);
    return arena_.Allocate(bytes);
  }
  char* AllocateAligned(size_t bytes) {
    Guard g(&lock_);
    return arena_.AllocateAligned(bytes);
  }
  size_t MemoryUsage() const { return arena_.MemoryUsage(); }

 private:
  // A test-and-test-and-set spin lock: allocation holds it for a few instructions.
  class Guard {
   public:
    explicit Guard(std::atomic<bool>* lock) : lock_(lock) {
      while (lock_->exchange(true, std::memory_order_acquire)) {
        while (lock_->load(std::memory_order_relaxed)) __builtin_ia32_pause();
      }
    }
    ~Guard() { lock_->store(false, std::memory_order_release); }

   private:
    std::atomic<bool>* lock_;
  };

  std::atomic<bool> lock_{false};
  Arena arena_;
};

}  // namespace shale
