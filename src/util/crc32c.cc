#include "src/util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace shale::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// tables[k][b]: the CRC contribution of byte b followed by k zero bytes.
constexpr std::array<std::array<uint32_t, 256>, 8> MakeTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t crc = b;
    for (int i = 0; i < 8; i++) crc = (crc >> 1) ^ ((crc & 1) ? kPoly : 0);
    t[0][b] = crc;
  }
  for (uint32_t b = 0; b < 256; b++) {
    for (int k = 1; k < 8; k++) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}
constexpr auto kTables = MakeTables();

// Moving a CRC register past n zero bytes is linear over GF(2): a 32×32 bit matrix, stored as
// the images of the register's 32 bits. Used to join CRCs of adjacent stretches computed side
// by side: the register after A‖B is Shift(register after A, |B|) ^ (register over B from 0).
using Gf2Matrix = std::array<uint32_t, 32>;

constexpr uint32_t Apply(const Gf2Matrix& m, uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; v != 0; i++, v >>= 1) {
    if (v & 1) r ^= m[i];
  }
  return r;
}

constexpr Gf2Matrix Compose(const Gf2Matrix& a, const Gf2Matrix& b) {  // a after b
  Gf2Matrix r{};
  for (int i = 0; i < 32; i++) r[i] = Apply(a, b[i]);
  return r;
}

constexpr Gf2Matrix ZeroBytesOperator(size_t n) {
  Gf2Matrix power{};  // one zero byte, squared as n's bits are consumed
  Gf2Matrix result{};
  for (int i = 0; i < 32; i++) {
    const uint32_t bit = uint32_t{1} << i;
    power[i] = (bit >> 8) ^ kTables[0][bit & 0xff];
    result[i] = bit;
  }
  for (; n > 0; n >>= 1) {
    if (n & 1) result = Compose(power, result);
    power = Compose(power, power);
  }
  return result;
}

// The operator for n zero bytes as four byte-indexed tables (one lookup per register byte).
struct ZeroShift {
  std::array<std::array<uint32_t, 256>, 4> t{};

  constexpr explicit ZeroShift(size_t n) {
    const Gf2Matrix m = ZeroBytesOperator(n);
    for (int k = 0; k < 4; k++) {
      for (uint32_t b = 0; b < 256; b++) t[k][b] = Apply(m, b << (8 * k));
    }
  }
  uint32_t operator()(uint32_t crc) const {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
  }
};

#if defined(__x86_64__)
// The crc32 instruction takes 3 cycles and can start every cycle: three independent streams,
// over three adjacent stretches of `Stride` bytes, keep it busy, and two table shifts join
// them. A 4 KiB block takes one round of the long stride, then of the short one.
constexpr size_t kLongStride = 1024;
constexpr size_t kShortStride = 128;
constexpr ZeroShift kShiftLong(kLongStride);
constexpr ZeroShift kShiftShort(kShortStride);

template <size_t Stride>
__attribute__((target("sse4.2"), always_inline)) inline uint64_t ThreeWay(uint64_t c,
                                                                          const char** p, size_t* n,
                                                                          const ZeroShift& shift) {
  while (*n >= 3 * Stride) {
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    const char* a = *p;
    for (size_t i = 0; i < Stride; i += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, a + i, 8);
      std::memcpy(&w1, a + Stride + i, 8);
      std::memcpy(&w2, a + 2 * Stride + i, 8);
      c = _mm_crc32_u64(c, w0);
      c1 = _mm_crc32_u64(c1, w1);
      c2 = _mm_crc32_u64(c2, w2);
    }
    c = shift(static_cast<uint32_t>(c)) ^ c1;
    c = shift(static_cast<uint32_t>(c)) ^ c2;
    *p += 3 * Stride;
    *n -= 3 * Stride;
  }
  return c;
}

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const char* p, size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    n--;
  }
  c = ThreeWay<kLongStride>(c, &p, &n, kShiftLong);
  c = ThreeWay<kShortStride>(c, &p, &n, kShiftShort);
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    n--;
  }
  return ~static_cast<uint32_t>(c);
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t ExtendHardware(uint32_t crc, const char* p, size_t n) { return ExtendPortable(crc, p, n); }
bool DetectHardware() { return false; }
#endif

const bool kHardware = DetectHardware();

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t crc = ~init_crc;
  while (n >= 8) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xff];
    n--;
  }
  return ~crc;
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  return kHardware ? ExtendHardware(init_crc, data, n) : ExtendPortable(init_crc, data, n);
}

bool IsHardwareAccelerated() { return kHardware; }

}  // namespace shale::crc32c
