// 64-bit hashing for filters, cache sharding and tables: XXH3 from the xxHash library, inlined.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "shale/slice.h"

namespace shale {

uint64_t Hash64(const char* data, size_t n, uint64_t seed = 0);
inline uint64_t Hash64(const Slice& s, uint64_t seed = 0) {
  return Hash64(s.data(), s.size(), seed);
}

}  // namespace shale
