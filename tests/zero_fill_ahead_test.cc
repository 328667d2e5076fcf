// ZeroFillAhead: the policy both writable files follow (none at the first sync, then up to
// `ahead` bytes past the data whenever less than half of that remains; a shortfall ends it).
#include "src/env/zero_fill_ahead.h"

#include <gtest/gtest.h>

namespace shale {
namespace {

TEST(ZeroFillAheadTest, OffWritesNothing) {
  ZeroFillAhead z(0);
  uint64_t from = 7, to = 7;
  for (int i = 0; i < 4; i++) EXPECT_FALSE(z.Due(100 * i, &from, &to));
  EXPECT_EQ(z.filled(), 0u);
  EXPECT_EQ(z.syncs(), 4u);  // counted all the same: they end mapped appends
}

TEST(ZeroFillAheadTest, FillsFromTheSecondSyncWhenLessThanHalfRemains) {
  ZeroFillAhead z(1000);
  uint64_t from = 0, to = 0;
  EXPECT_FALSE(z.Due(10, &from, &to));  // first sync: nothing
  ASSERT_TRUE(z.Due(20, &from, &to));
  EXPECT_EQ(from, 20u);
  EXPECT_EQ(to, 1020u);
  z.Filled(to, to);
  EXPECT_EQ(z.filled(), 1020u);
  EXPECT_FALSE(z.Due(500, &from, &to));  // 520 bytes of zeros remain
  EXPECT_FALSE(z.Due(520, &from, &to));  // exactly half remains
  ASSERT_TRUE(z.Due(521, &from, &to));   // less than half: fill from the end of the zeros
  EXPECT_EQ(from, 1020u);
  EXPECT_EQ(to, 1521u);
  z.Filled(to, to);
  // Data that ran past the zeros (a large append between syncs): fill from the data's end.
  ASSERT_TRUE(z.Due(3000, &from, &to));
  EXPECT_EQ(from, 3000u);
  EXPECT_EQ(to, 4000u);
}

TEST(ZeroFillAheadTest, AShortfallStopsFillingForGood) {
  ZeroFillAhead z(1000);
  uint64_t from = 0, to = 0;
  EXPECT_FALSE(z.Due(0, &from, &to));
  ASSERT_TRUE(z.Due(0, &from, &to));
  z.Filled(600, to);  // the disk filled up after 600 bytes
  EXPECT_EQ(z.filled(), 600u);
  for (uint64_t size = 0; size < 5000; size += 250) EXPECT_FALSE(z.Due(size, &from, &to));
  EXPECT_EQ(z.filled(), 600u);  // Close still cuts the zeros that were written
}

}  // namespace
}  // namespace shale
