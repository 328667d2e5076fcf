// Utilities: bytewise comparison, fixed/varint coding, crc32c (hardware and portable), hashing,
// arenas, the random generator and histograms.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/comparator.h"
#include "src/base/dbformat.h"
#include "src/util/arena.h"
#include "src/util/bytewise.h"
#include "src/util/coding.h"
#include "src/util/crc32c.h"
#include "src/util/hash.h"
#include "src/util/histogram.h"
#include "src/util/random.h"
#include "src/util/test_hook.h"

namespace shale {
namespace {

std::string Separator(const Comparator* cmp, std::string start, const Slice& limit) {
  cmp->FindShortestSeparator(&start, limit);
  return start;
}

TEST(BytewiseComparatorTest, SeparatorsAreShortAndBetweenTheirBounds) {
  const Comparator* cmp = BytewiseComparator();
  EXPECT_EQ(Separator(cmp, "abc1xyz", "abc5"), "abc2");  // the differing byte bumped
  // Differing by one there: the next byte of start is bumped instead.
  const std::string a{'\x00', '\x05', '0', '0', '0', '0'};
  const std::string b{'\x00', '\x06', '0', '0', '0', '0'};
  EXPECT_EQ(Separator(cmp, a, b), (std::string{'\x00', '\x05', '1'}));
  // ... skipping bytes that cannot be bumped.
  EXPECT_EQ(Separator(cmp,
                      std::string("ab\x05\xff\xff"
                                  "cd",
                                  7),
                      "ab\x06"),
            std::string("ab\x05\xff\xff"
                        "d",
                        6));
  EXPECT_EQ(Separator(cmp, "ab\x05\xff", "ab\x06"), "ab\x05\xff");  // none can be: as it is
  EXPECT_EQ(Separator(cmp, "abc", "abcd"), "abc");                  // a prefix: as it is
  EXPECT_EQ(Separator(cmp, "abd", "abc"), "abd");                   // not below limit

  // Any start < limit: start <= separator < limit, and never longer than start.
  Random rnd(17);
  const char alphabet[] = {'\x00', '\x01', '\x02', '0', '1', '\xfe', '\xff'};
  auto random_key = [&] {
    std::string k(rnd.Uniform(7), '\0');
    for (char& c : k) c = alphabet[rnd.Uniform(sizeof(alphabet))];
    return k;
  };
  for (int i = 0; i < 50000; i++) {
    std::string start = random_key(), limit = random_key();
    if (Slice(start).compare(limit) >= 0) continue;
    const std::string sep = Separator(cmp, start, limit);
    ASSERT_LE(Slice(start).compare(sep), 0) << i;
    ASSERT_LT(Slice(sep).compare(limit), 0) << i;
    ASSERT_LE(sep.size(), start.size()) << i;
  }
}

// The internal-key separator a table's index stores: a shorter user key gets the largest tag,
// so it sorts after every version of the last key of a block and before the next block's.
TEST(InternalKeyComparatorTest, SeparatorsAreBetweenTheirBounds) {
  InternalKeyComparator icmp(BytewiseComparator());
  Random rnd(29);
  for (int i = 0; i < 50000; i++) {
    uint64_t x = rnd.Uniform(1000000), y = rnd.Uniform(1000000);
    if (x > y) std::swap(x, y);
    // db_bench's key shape: 8 big-endian bytes of a number, then '0' padding.
    auto user = [](uint64_t v) {
      std::string k;
      for (int b = 7; b >= 0; b--) k.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
      return k + "00000000";
    };
    std::string start, limit;
    AppendInternalKey(&start, user(x), rnd.Uniform(1000), kTypeValue);
    AppendInternalKey(&limit, user(y), rnd.Uniform(1000), kTypeValue);
    if (icmp.Compare(start, limit) >= 0) continue;
    std::string sep = start;
    icmp.FindShortestSeparator(&sep, limit);
    ASSERT_LE(icmp.Compare(start, sep), 0) << i;
    ASSERT_LT(icmp.Compare(sep, limit), 0) << i;
    if (y > x + 255) {
      EXPECT_LT(sep.size(), start.size()) << i;  // user keys apart in a byte before the last
    }
  }
}

// The word-at-a-time comparisons agree with Slice's memcmp ones for strings of bytes on both
// sides of 0x80 (signed bytes or words, or unswapped words, would not), of every length around
// the word size, often sharing long prefixes.
TEST(BytewiseTest, CompareAndEqualAgreeWithSlice) {
  const char bytes[] = {'\x00', '\x01', '\x7f', '\x80', '\xfe', '\xff'};
  Random rnd(42);
  auto random_string = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; i++) s.push_back(bytes[rnd.Uniform(sizeof(bytes))]);
    return s;
  };
  int less = 0, equal = 0, greater = 0;
  for (int i = 0; i < 20000; i++) {
    std::string a = random_string(rnd.Uniform(26));
    // b: a itself, or a prefix of a and up to 11 more bytes (the first difference anywhere in
    // an 8-byte word, the word's sign bit included).
    std::string b =
        rnd.OneIn(8) ? a : a.substr(0, rnd.Uniform(a.size() + 1)) + random_string(rnd.Uniform(12));
    if (rnd.OneIn(2)) std::swap(a, b);
    const int want = Slice(a).compare(Slice(b));
    const int got = CompareBytewise(Slice(a), Slice(b));
    ASSERT_EQ((got > 0) - (got < 0), (want > 0) - (want < 0)) << i;
    ASSERT_EQ(BytesEqual(Slice(a), Slice(b)), a == b) << i;
    (want < 0 ? less : want == 0 ? equal : greater)++;
  }
  // Every outcome is drawn often.
  EXPECT_GT(less, 500);
  EXPECT_GT(equal, 500);
  EXPECT_GT(greater, 500);
}

TEST(CodingTest, FixedRoundTripAndLayout) {
  std::string s;
  for (uint32_t v = 0; v < 100000; v += 997) PutFixed32(&s, v);
  PutFixed64(&s, 0x0102030405060708ull);
  Slice in(s);
  for (uint32_t v = 0; v < 100000; v += 997) {
    uint32_t got;
    ASSERT_TRUE(GetFixed32(&in, &got));
    EXPECT_EQ(got, v);
  }
  // Little-endian on disk.
  EXPECT_EQ(static_cast<uint8_t>(in[0]), 0x08);
  EXPECT_EQ(static_cast<uint8_t>(in[7]), 0x01);
  uint64_t got64;
  ASSERT_TRUE(GetFixed64(&in, &got64));
  EXPECT_EQ(got64, 0x0102030405060708ull);
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(GetFixed64(&in, &got64));
}

TEST(CodingTest, VarintRoundTripEveryLength) {
  std::vector<uint64_t> values;
  for (int shift = 0; shift < 64; shift++) {
    const uint64_t p = uint64_t{1} << shift;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  values.push_back(UINT64_MAX);
  std::string s;
  for (uint64_t v : values) PutVarint64(&s, v);
  Slice in(s);
  for (uint64_t v : values) {
    const size_t before = in.size();
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
    EXPECT_EQ(before - in.size(), static_cast<size_t>(VarintLength(v)));
  }
  EXPECT_TRUE(in.empty());

  std::string s32;
  for (uint32_t v : {0u, 127u, 128u, 16383u, 16384u, UINT32_MAX}) PutVarint32(&s32, v);
  Slice in32(s32);
  for (uint32_t v : {0u, 127u, 128u, 16383u, 16384u, UINT32_MAX}) {
    uint32_t got;
    ASSERT_TRUE(GetVarint32(&in32, &got));
    EXPECT_EQ(got, v);
  }
}

TEST(CodingTest, TruncatedAndOverlongVarintsAreRejected) {
  std::string s;
  PutVarint64(&s, UINT64_MAX);
  for (size_t n = 0; n < s.size(); n++) {
    uint64_t v;
    EXPECT_EQ(GetVarint64Ptr(s.data(), s.data() + n, &v), nullptr) << n;
  }
  // Eleven continuation bytes: longer than any uint64 encoding.
  std::string overlong(11, '\x80');
  uint64_t v;
  EXPECT_EQ(GetVarint64Ptr(overlong.data(), overlong.data() + overlong.size(), &v), nullptr);
  // Every length of every 32-bit encoding (the inline one- and two-byte paths included):
  // whole, it decodes; cut short, it is rejected.
  for (uint32_t value : {0u, 1u, 127u, 128u, 300u, 16383u, 16384u, 2097151u, UINT32_MAX}) {
    std::string e;
    PutVarint32(&e, value);
    uint32_t got = 0;
    EXPECT_EQ(GetVarint32Ptr(e.data(), e.data() + e.size(), &got), e.data() + e.size()) << value;
    EXPECT_EQ(got, value);
    for (size_t n = 0; n < e.size(); n++) {
      EXPECT_EQ(GetVarint32Ptr(e.data(), e.data() + n, &got), nullptr) << value << " " << n;
    }
  }
  // A 32-bit varint may not carry more than 32 bits.
  std::string big;
  PutVarint64(&big, uint64_t{1} << 40);
  uint32_t v32;
  EXPECT_EQ(GetVarint32Ptr(big.data(), big.data() + big.size(), &v32), nullptr);
}

TEST(CodingTest, LengthPrefixedSlices) {
  std::string s;
  PutLengthPrefixedSlice(&s, "");
  PutLengthPrefixedSlice(&s, "foo");
  PutLengthPrefixedSlice(&s, std::string(300, 'x'));
  Slice in(s), out;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ(out.ToString(), "");
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ(out.ToString(), "foo");
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &out));
  EXPECT_EQ(out.ToString(), std::string(300, 'x'));
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &out));
  // A length longer than what follows.
  std::string bad;
  PutVarint32(&bad, 10);
  bad += "abc";
  Slice bin(bad);
  EXPECT_FALSE(GetLengthPrefixedSlice(&bin, &out));
}

// Published CRC-32C test vectors (RFC 3720 appendix B.4 and the "123456789" check value).
TEST(Crc32cTest, StandardVectors) {
  char buf[32];
  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x8A9136AAu);
  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x62A8AB43u);
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x46DD794Eu);
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(31 - i);
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x113FDB5Cu);
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xE3069283u);
}

TEST(Crc32cTest, ExtendEqualsWholeAndPortableAgrees) {
  Random rnd(7);
  for (int iter = 0; iter < 200; iter++) {
    std::string data = rnd.RandomString(rnd.Uniform(5000));
    const uint32_t whole = crc32c::Value(data.data(), data.size());
    EXPECT_EQ(whole, crc32c::ExtendPortable(0, data.data(), data.size()));
    const size_t cut = data.empty() ? 0 : rnd.Uniform(data.size());
    EXPECT_EQ(crc32c::Extend(crc32c::Value(data.data(), cut), data.data() + cut, data.size() - cut),
              whole);
    // Unaligned starts.
    if (data.size() > 3) {
      EXPECT_EQ(crc32c::Value(data.data() + 3, data.size() - 3),
                crc32c::ExtendPortable(0, data.data() + 3, data.size() - 3));
    }
  }
}

// The hardware path runs three streams over adjacent stretches of 1,024 and then 128 bytes and
// joins them: every length around those strides' multiples, every start alignment and random
// starting CRCs agree with the table implementation.
TEST(Crc32cTest, InterleavedStreamsAgreeWithPortable) {
  Random rnd(11);
  const std::string data = rnd.RandomString(3 * 3 * 1024 + 3 * 128 * 3 + 64);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 3 * 128 + 40; n++) lengths.push_back(n);
  for (size_t base : {3 * 128 * 2, 3 * 1024, 3 * 1024 + 3 * 128, 2 * 3 * 1024, 4096, 4101}) {
    for (size_t d = 0; d < 20; d++) lengths.push_back(base + d - 10);
  }
  for (int i = 0; i < 100; i++) lengths.push_back(rnd.Uniform(data.size() - 8));
  for (size_t n : lengths) {
    for (size_t offset = 0; offset < 8; offset++) {
      const uint32_t init = static_cast<uint32_t>(rnd.Next());
      ASSERT_EQ(crc32c::Extend(init, data.data() + offset, n),
                crc32c::ExtendPortable(init, data.data() + offset, n))
          << "length " << n << " offset " << offset;
    }
  }
}

// A hook runs the callback set for its point (the latest one), nothing once cleared, and
// nothing in builds that compile hooks out.
TEST(TestHookTest, HooksRunTheirPointsCallback) {
  int a = 0;
  int b = 0;
  test_hook::Set("a", [&] { a++; });
  test_hook::Set("b", [&] { b++; });
  SHALE_TEST_HOOK("a");
  SHALE_TEST_HOOK("c");
  test_hook::Set("a", [&] { a += 10; });
  SHALE_TEST_HOOK("a");
  test_hook::ClearAll();
  SHALE_TEST_HOOK("a");
  SHALE_TEST_HOOK("b");
  EXPECT_EQ(a, test_hook::kEnabled ? 11 : 0);
  EXPECT_EQ(b, 0);
}

TEST(Crc32cTest, MaskIsInvertibleAndChangesValue) {
  const uint32_t crc = crc32c::Value("foo", 3);
  EXPECT_NE(crc, crc32c::Mask(crc));
  EXPECT_NE(crc, crc32c::Mask(crc32c::Mask(crc)));
  EXPECT_EQ(crc, crc32c::Unmask(crc32c::Mask(crc)));
  EXPECT_EQ(crc, crc32c::Unmask(crc32c::Unmask(crc32c::Mask(crc32c::Mask(crc)))));
}

TEST(HashTest, DeterministicSeededAndSpread) {
  EXPECT_EQ(Hash64("hello", 5), Hash64(Slice("hello")));
  EXPECT_NE(Hash64("hello", 5, 0), Hash64("hello", 5, 1));
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; i++) seen.insert(Hash64(Slice(std::to_string(i))));
  EXPECT_EQ(seen.size(), 10000u);
  // Low bits are used for bucket selection: they must be spread too.
  std::vector<int> buckets(16);
  for (int i = 0; i < 16000; i++) buckets[Hash64(Slice("k" + std::to_string(i))) & 15]++;
  for (int b : buckets) EXPECT_GT(b, 800);
}

TEST(ArenaTest, AllocationsAreDistinctAndAligned) {
  Arena arena;
  Random rnd(301);
  std::vector<std::pair<char*, size_t>> allocs;
  size_t total = 0;
  for (int i = 0; i < 5000; i++) {
    size_t n = i % 100 == 0 ? 100000 : 1 + rnd.Uniform(i % 10 == 0 ? 6000 : 20);
    char* p = i % 2 == 0 ? arena.AllocateAligned(n) : arena.Allocate(n);
    if (i % 2 == 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(std::max_align_t), 0u);
    }
    std::memset(p, i & 0xff, n);
    allocs.emplace_back(p, n);
    total += n;
  }
  for (size_t i = 0; i < allocs.size(); i++) {
    auto [p, n] = allocs[i];
    for (size_t j = 0; j < n; j++) ASSERT_EQ(static_cast<uint8_t>(p[j]), i & 0xff);
  }
  EXPECT_GE(arena.MemoryUsage(), total);
  EXPECT_LT(arena.MemoryUsage(), total + total / 2 + Arena::kBlockSize);
}

// An arena with huge-page blocks: blocks start on 2 MiB boundaries and are whole 2 MiB
// multiples, allocations stay within them (ASan checks the writes), usage counts every block.
TEST(ArenaTest, HugePageBlocksAreAlignedAndCounted) {
  constexpr size_t kHuge = Arena::kHugePageSize;
  Arena arena(kHuge);
  char* first = arena.Allocate(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kHuge, 0u);
  EXPECT_GE(arena.MemoryUsage(), kHuge);
  char* big = arena.AllocateAligned(3 * kHuge / 2);  // its own block, rounded to 4 MiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % kHuge, 0u);
  std::memset(big, 1, 3 * kHuge / 2);
  char* medium = arena.Allocate(600 << 10);  // its own block, not a huge one
  std::memset(medium, 2, 600 << 10);
  // Small allocations fill the first block and continue in a second one.
  size_t small = 100;
  for (int i = 0; i < 40000; i++) {
    char* p = arena.Allocate(100);
    std::memset(p, 3, 100);
    small += 100;
  }
  EXPECT_GT(small, kHuge);
  // Every byte asked for, the big block's rounding to 4 MiB, and at most two partly used blocks.
  const size_t requested = small + 3 * kHuge / 2 + (600 << 10);
  EXPECT_GE(arena.MemoryUsage(), requested + kHuge / 2);
  EXPECT_LT(arena.MemoryUsage(), requested + kHuge / 2 + 2 * kHuge);
  EXPECT_EQ(arena.MemoryUsage() % kHuge, 4 * sizeof(char*));  // four blocks, all huge
}

TEST(ConcurrentArenaTest, ConcurrentAllocationsDoNotOverlap) {
  ConcurrentArena arena;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::vector<char*>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i++) {
        char* p = arena.AllocateAligned(16);
        std::memset(p, t, 16);
        got[t].push_back(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; t++) {
    for (char* p : got[t]) {
      for (int j = 0; j < 16; j++) ASSERT_EQ(p[j], t);
    }
  }
  EXPECT_GE(arena.MemoryUsage(), size_t{kThreads} * kPerThread * 16);
}

TEST(RandomTest, DeterministicAndInRange) {
  Random a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; i++) {
    const uint64_t x = a.Next64();
    EXPECT_EQ(x, b.Next64());
    differs |= x != c.Next64();
  }
  EXPECT_TRUE(differs);
  Random r(0);  // seed 0 still works
  std::vector<int> counts(10);
  for (int i = 0; i < 100000; i++) {
    const uint64_t u = r.Uniform(10);
    ASSERT_LT(u, 10u);
    counts[u]++;
  }
  for (int n : counts) {
    EXPECT_GT(n, 9000);
    EXPECT_LT(n, 11000);
  }
  int ones = 0;
  for (int i = 0; i < 100000; i++) ones += r.OneIn(100) ? 1 : 0;
  EXPECT_GT(ones, 800);
  EXPECT_LT(ones, 1200);
  for (int i = 0; i < 1000; i++) EXPECT_LT(r.Skewed(10), 1024u);
  const std::string s = r.RandomString(100);
  EXPECT_EQ(s.size(), 100u);
  for (char ch : s) EXPECT_TRUE(ch >= ' ' && ch < 127);
}

TEST(HistogramTest, StatisticsAndPercentiles) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Average(), 0);
  for (uint64_t v = 1; v <= 100; v++) h.Add(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.sum(), 5050u);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 100);
  EXPECT_DOUBLE_EQ(h.Average(), 50.5);
  EXPECT_NEAR(h.StandardDeviation(), 28.866, 0.01);
  // Geometric buckets with ratio 1.08: percentiles within ~8 %.
  EXPECT_NEAR(h.Median(), 50, 4);
  EXPECT_NEAR(h.Percentile(99), 99, 8);
  EXPECT_LE(h.Percentile(100), 100);
  EXPECT_GE(h.Percentile(0), 1);

  Histogram g;
  g.Add(1000000);
  h.Merge(g);
  EXPECT_EQ(h.count(), 101u);
  EXPECT_EQ(h.max(), 1000000);
  EXPECT_NE(h.ToString().find("Count: 101"), std::string::npos) << h.ToString();
  h.Clear();
  EXPECT_EQ(h.count(), 0u);
}

TEST(HistogramTest, BucketsAreOrderedAndCoverValues) {
  for (int b = 1; b < HistogramBuckets::kNumBuckets; b++) {
    ASSERT_GT(HistogramBuckets::Limit(b), HistogramBuckets::Limit(b - 1)) << b;
  }
  for (uint64_t v : {0ull, 1ull, 9ull, 10ull, 11ull, 1000ull, 123456789ull, 1ull << 40}) {
    const int b = HistogramBuckets::IndexOf(v);
    EXPECT_LT(v, HistogramBuckets::Limit(b)) << v;
    if (b > 0) {
      EXPECT_GE(v, HistogramBuckets::Limit(b - 1)) << v;
    }
  }
}

TEST(ConcurrentHistogramTest, AtomicHistogramCountsEveryAdd) {
  AtomicHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (uint64_t i = 1; i <= 10000; i++) h.Add(i);
    });
  }
  for (auto& th : threads) th.join();
  Histogram snap = h.Snapshot();
  EXPECT_EQ(snap.count(), 40000u);
  EXPECT_EQ(snap.sum(), 4u * 10000 * 10001 / 2);
  EXPECT_EQ(snap.min(), 1);
  EXPECT_EQ(snap.max(), 10000);
}

}  // namespace
}  // namespace shale
