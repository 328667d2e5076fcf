#include "src/util/arena.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "src/util/invariants.h"

namespace shale {

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
  if (huge_pages_ && bytes >= kHugePageSize) {
    bytes = RoundUpToHugePage(bytes);
    char* p = static_cast<char*>(std::aligned_alloc(kHugePageSize, bytes));
    if (p == nullptr) throw std::bad_alloc();
    blocks_.emplace_back(p, BlockDeleter{true});
    // Advice only: without transparent huge pages the block works the same, with small pages.
    madvise(p, bytes, MADV_HUGEPAGE);
  } else {
    // Round up so every block start stays 16-byte aligned.
    bytes = (bytes + 15) & ~size_t{15};
    blocks_.emplace_back(new char[bytes], BlockDeleter{false});
  }
  memory_usage_.fetch_add(bytes + sizeof(char*), std::memory_order_relaxed);
  return blocks_.back().get();
}

void Arena::BlockDeleter::operator()(char* p) const {
  if (aligned) {
    std::free(p);
  } else {
    delete[] p;
  }
}

}  // namespace shale
