// Bytewise equality and three-way comparison of Slices, eight bytes at a time: for the short
// keys of memtables, where a library memcmp call costs more than the comparison itself.
// CompareBytewise orders as Slice::compare does (unsigned bytes, then the shorter first).
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "shale/slice.h"
#include "src/util/coding.h"

namespace shale {

inline bool BytesEqual(const Slice& a, const Slice& b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if (DecodeFixed64(x + i) != DecodeFixed64(y + i)) return false;
  }
  for (; i < n; i++) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

inline int CompareBytewise(const Slice& a, const Slice& b) {
  const size_t n = std::min(a.size(), b.size());
  const char* x = a.data();
  const char* y = b.data();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // Little-endian words, byte-swapped: the first byte becomes the most significant.
    const uint64_t u = __builtin_bswap64(DecodeFixed64(x + i));
    const uint64_t v = __builtin_bswap64(DecodeFixed64(y + i));
    if (u != v) return u < v ? -1 : +1;
  }
  for (; i < n; i++) {
    const auto u = static_cast<unsigned char>(x[i]);
    const auto v = static_cast<unsigned char>(y[i]);
    if (u != v) return u < v ? -1 : +1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? +1 : 0);
}

}  // namespace shale
