#include "src/util/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace shale {

uint64_t Hash64(const char* data, size_t n, uint64_t seed) {
  return seed == 0 ? XXH3_64bits(data, n) : XXH3_64bits_withSeed(data, n, seed);
}

}  // namespace shale
