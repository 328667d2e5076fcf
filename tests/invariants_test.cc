// SHALE_ASSERT: aborts with the condition and its place when checks are on (Debug, or Release
// with -DSHALE_INVARIANTS=ON); when off, the condition is not evaluated.
#include "src/util/invariants.h"

#include <gtest/gtest.h>

namespace shale {
namespace {

int Touch(int* evaluations) {
  (*evaluations)++;
  return 1;
}

TEST(InvariantsTest, HoldingInvariantPasses) {
  int evaluations = 0;
  SHALE_ASSERT(Touch(&evaluations) == 1);
  EXPECT_EQ(evaluations, kInvariantChecks ? 1 : 0);
}

TEST(InvariantsDeathTest, BrokenInvariantAbortsWithItsCondition) {
  if (!kInvariantChecks) {
    GTEST_SKIP() << "invariant checks are compiled out in this build";
  }
  const int sequence = 7;
  const int last = 9;
  EXPECT_DEATH(SHALE_ASSERT(sequence >= last),
               "invariant failed at .*invariants_test.cc:[0-9]+: sequence >= last");
}

}  // namespace
}  // namespace shale
