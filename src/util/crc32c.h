// CRC-32C (Castagnoli, polynomial 0x82F63B78 reflected), as stored in WAL records and block
// trailers. Uses the SSE4.2 crc32 instruction when the CPU has it, else a slicing-by-8 table.
//
// Stored checksums are masked: a CRC computed over data that itself embeds CRCs is weak, so
// stored values are rotated and offset (Mask) and un-rotated on read (Unmask).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shale::crc32c {

// The CRC of data[0, n) continuing from init_crc (the CRC of some earlier bytes; 0 to start).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// The table implementation, exposed so tests can compare both paths.
uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n);
// True when Extend uses the hardware instruction.
bool IsHardwareAccelerated();

constexpr uint32_t kMaskDelta = 0xa282ead8u;

inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace shale::crc32c
