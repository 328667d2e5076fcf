// ArenaBlockPool: the standard-size blocks that dying arenas give back, kept for the next arena
// instead of going back to the system.
//
// A memtable's arena reserves its memory in blocks and frees them all when the memtable is
// flushed and dropped; the next memtable then reserves as much again. Memory returned to the
// system and taken back costs a page fault per 4 KiB page on first touch (~12 µs each on a
// virtual machine whose host backs the pages lazily): two writer threads filling 64 MiB
// memtables with 1 KB values spent more than a tenth of their time faulting memtable pages in.
// A family's memtables share one pool, so each new memtable reuses the pages of the last one
// flushed.
//
// The pool holds at most max_bytes; a block returned beyond that is freed. Since a block enters
// the pool only when an arena lets it go, and arenas take pooled blocks before new ones, the
// pool and the arenas together never hold more than the arenas held at their peak.
// Under AddressSanitizer a pooled block is poisoned until it is taken again: a read of a dropped
// memtable's memory is reported while the block waits in the pool (once a new memtable takes
// it, such a read sees the new memtable's bytes).
// A pool that is not retaining (SetRetaining(false)) keeps nothing: the owner turns retention off
// when the memory is unlikely to be needed again soon (a family whose memtable was switched
// before it was full, i.e. one written little), and on again when a memtable fills.
// Only standard-size blocks are pooled; a large object's block of its own (a value over a
// quarter of a block, a large memtable Bloom filter) goes back to the system.
//
// Thread safety: Take, Return, SetRetaining and pooled_bytes may be called from any thread (one
// mutex). Ownership: owns the blocks it holds, and frees them when destroyed; arenas hold it by
// shared_ptr, so it outlives every block it handed out.
#pragma once

#include <cstddef>
#include <vector>

#include "src/util/asan_poison.h"
#include "src/util/mutex.h"
#include "src/util/thread_annotations.h"

namespace shale {

class ArenaBlockPool {
 public:
  // The size of a transparent huge page (the unit of huge blocks).
  static constexpr size_t kHugePageSize = 2 << 20;

  // Blocks of block_size bytes; huge: 2 MiB-aligned and advised as transparent huge pages
  // (REQUIRES then: block_size a multiple of 2 MiB). max_bytes: what the pool may hold (0: it
  // keeps nothing, every Return frees).
  ArenaBlockPool(size_t block_size, bool huge, size_t max_bytes);
  ArenaBlockPool(const ArenaBlockPool&) = delete;
  ArenaBlockPool& operator=(const ArenaBlockPool&) = delete;
  ~ArenaBlockPool();

  // Whether pooled blocks are poisoned (an AddressSanitizer build).
  static constexpr bool kPoisons = SHALE_ASAN_POISONING;

  size_t block_size() const { return block_size_; }
  bool huge() const { return huge_; }
  // A block of block_size() bytes, 16-byte aligned: a pooled one when there is one. Throws
  // std::bad_alloc when memory is exhausted.
  char* Take() EXCLUDES(mu_);
  // Gives back a block Take returned.
  void Return(char* block) EXCLUDES(mu_);
  size_t pooled_bytes() const EXCLUDES(mu_);
  // retain false: frees the pooled blocks, and Return frees every block until retention is
  // turned on again. A new pool retains.
  void SetRetaining(bool retain) EXCLUDES(mu_);
  bool retaining() const EXCLUDES(mu_);

  // Memory of `bytes` from the system, 16-byte aligned (huge: 2 MiB-aligned, advised as huge
  // pages, bytes a multiple of 2 MiB), and its release. Throws std::bad_alloc.
  static char* Allocate(size_t bytes, bool huge);
  static void Free(char* p, bool huge);

 private:
  // Frees blocks taken out of the pool (poisoned ones included).
  void FreeAll(std::vector<char*> blocks) const;

  const size_t block_size_;
  const bool huge_;
  const size_t max_blocks_;
  mutable Mutex mu_;
  bool retaining_ GUARDED_BY(mu_) = true;
  std::vector<char*> blocks_ GUARDED_BY(mu_);
};

}  // namespace shale
