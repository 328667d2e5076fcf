// The CPU cache line the library lays hot data out for and prefetches by: 64 bytes on the
// x86-64 and AArch64 machines it targets. (A table's filter lines are 64 bytes too, but that
// is the file format's own constant, kFilterLineBytes, which does not follow the CPU.)
// Thread safety: constants and a stateless function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shale {

inline constexpr size_t kCacheLineBytes = 64;

// Asks for every cache line of [p, p + bytes) to be loaded (a hint: no fault, no wait).
inline void PrefetchLines(const void* p, size_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{kCacheLineBytes - 1};
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t line = begin; line < end; line += kCacheLineBytes) {
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

}  // namespace shale
