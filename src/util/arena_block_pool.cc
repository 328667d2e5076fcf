#include "src/util/arena_block_pool.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <utility>

#include "src/util/invariants.h"

namespace shale {

ArenaBlockPool::ArenaBlockPool(size_t block_size, bool huge, size_t max_bytes)
    : block_size_(block_size), huge_(huge), max_blocks_(max_bytes / block_size) {
  SHALE_ASSERT(block_size > 0 && block_size % 16 == 0);
  SHALE_ASSERT(!huge || block_size % kHugePageSize == 0);
}

ArenaBlockPool::~ArenaBlockPool() { FreeAll(std::move(blocks_)); }

void ArenaBlockPool::FreeAll(std::vector<char*> blocks) const {
  for (char* p : blocks) {
    SHALE_UNPOISON(p, block_size_);
    Free(p, huge_);
  }
}

char* ArenaBlockPool::Take() {
  {
    MutexLock l(&mu_);
    if (!blocks_.empty()) {
      char* p = blocks_.back();
      blocks_.pop_back();
      SHALE_UNPOISON(p, block_size_);
      return p;
    }
  }
  return Allocate(block_size_, huge_);
}

void ArenaBlockPool::Return(char* block) {
  {
    MutexLock l(&mu_);
    if (retaining_ && blocks_.size() < max_blocks_) {
      SHALE_POISON(block, block_size_);
      blocks_.push_back(block);
      return;
    }
  }
  Free(block, huge_);
}

size_t ArenaBlockPool::pooled_bytes() const {
  MutexLock l(&mu_);
  return blocks_.size() * block_size_;
}

void ArenaBlockPool::SetRetaining(bool retain) {
  std::vector<char*> freed;
  {
    MutexLock l(&mu_);
    retaining_ = retain;
    if (!retain) freed.swap(blocks_);
  }
  FreeAll(std::move(freed));  // outside the lock: arenas may be taking and returning meanwhile
}

bool ArenaBlockPool::retaining() const {
  MutexLock l(&mu_);
  return retaining_;
}

char* ArenaBlockPool::Allocate(size_t bytes, bool huge) {
  if (!huge) return new char[bytes];  // new[] of char is aligned for max_align_t (16 bytes)
  SHALE_ASSERT(bytes % kHugePageSize == 0);
  char* p = static_cast<char*>(std::aligned_alloc(kHugePageSize, bytes));
  if (p == nullptr) throw std::bad_alloc();
  // Advice only: without transparent huge pages the block works the same, with small pages.
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void ArenaBlockPool::Free(char* p, bool huge) {
  if (huge) {
    std::free(p);
  } else {
    delete[] p;
  }
}

}  // namespace shale
