// The write-ahead log (and MANIFEST) physical format.
//
//   file   := block*                       every block is kBlockSize bytes (the last may be short)
//   block  := record* trailer?
//   record := checksum:fixed32 length:fixed16 type:u8 payload[length]
//   trailer:= 0..6 zero bytes, when fewer than kHeaderSize bytes remain in the block
//
// checksum is the masked crc32c of type and payload. A logical record (one WriteBatch) is
// stored as a single kFull record or as kFirst, kMiddle*, kLast fragments when it spans blocks.
// Type 0 marks zero-filled space (preallocated or zeroed by a crash) and is never written.
// A live WAL keeps zeros written past its last record (FileOptions::mmap_appends and
// zero_fill_ahead), so its file ends in zeros after a crash; Close cuts them off. A process
// crash inside a mapped append leaves the fragment's checksum zero (it is stored last).
#pragma once

#include <cstdint>

namespace shale::log {

enum RecordType : uint8_t {
  kZeroType = 0,
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
constexpr uint8_t kMaxRecordType = kLastType;

constexpr int kBlockSize = 32768;
// The unit a device writes whole: a crash cuts a write over zero-filled space at a multiple.
constexpr int kSectorSize = 512;
constexpr int kHeaderSize = 4 + 2 + 1;
static_assert(kHeaderSize == 7, "checksum, length and type");

}  // namespace shale::log
