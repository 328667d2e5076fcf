#include "src/util/arena.h"

#include "src/util/invariants.h"

namespace shale {

Arena::Arena(size_t block_size, std::shared_ptr<ArenaBlockPool> pool)
    : block_size_(BlockSizeFor(block_size)),
      huge_pages_(block_size >= kHugePageSize),
      pool_(pool != nullptr ? std::move(pool)
                            : std::make_shared<ArenaBlockPool>(block_size_, huge_pages_, 0)) {
  SHALE_ASSERT(pool_->block_size() == block_size_ && pool_->huge() == huge_pages_);
}

char* Arena::AllocateAligned(size_t bytes) {
  constexpr size_t kAlign = 16;
  static_assert((kAlign & (kAlign - 1)) == 0, "alignment must be a power of two");
  size_t misalignment = reinterpret_cast<uintptr_t>(ptr_) & (kAlign - 1);
  size_t padding = misalignment == 0 ? 0 : kAlign - misalignment;
  if (bytes + padding <= remaining_) {
    char* result = ptr_ + padding;
    ptr_ += bytes + padding;
    remaining_ -= bytes + padding;
    return result;
  }
  char* result = AllocateFallback(bytes);  // fresh blocks come from new[], which is aligned
  SHALE_ASSERT((reinterpret_cast<uintptr_t>(result) & (kAlign - 1)) == 0);
  return result;
}

char* Arena::AllocateFallback(size_t bytes) {
  if (bytes > block_size_ / 4) {
    // Large objects get a block of their own so the current block's tail is not wasted.
    return NewBlock(bytes);
  }
  ptr_ = NewBlock(block_size_);
  remaining_ = block_size_;
  char* result = ptr_;
  ptr_ += bytes;
  remaining_ -= bytes;
  return result;
}

char* Arena::NewBlock(size_t bytes) {
  // Owned before the vector grows (which may throw): a block is never leaked.
  std::unique_ptr<char[], BlockDeleter> block;
  if (bytes == block_size_) {
    block = {pool_->Take(), BlockDeleter{pool_.get(), false}};
  } else {
    // A large object's block of its own: huge pages when it spans one.
    const bool huge = huge_pages_ && bytes >= kHugePageSize;
    // Rounded up so every block start stays 16-byte aligned.
    bytes = huge ? RoundUpToHugePage(bytes) : (bytes + 15) & ~size_t{15};
    block = {ArenaBlockPool::Allocate(bytes, huge), BlockDeleter{nullptr, huge}};
  }
  blocks_.push_back(std::move(block));
  memory_usage_.fetch_add(bytes + sizeof(char*), std::memory_order_relaxed);
  return blocks_.back().get();
}

void Arena::BlockDeleter::operator()(char* p) const {
  if (pool != nullptr) {
    pool->Return(p);
  } else {
    ArenaBlockPool::Free(p, huge);
  }
}

}  // namespace shale
