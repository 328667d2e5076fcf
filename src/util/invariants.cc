#include "src/util/invariants.h"

#include <cstdio>
#include <cstdlib>

namespace shale {

void InvariantFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "shale: invariant failed at %s:%d: %s\n", file, line, condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace shale
