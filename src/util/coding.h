// Byte encodings shared by every on-disk format:
//   fixed32 / fixed64 : little-endian, 4 / 8 bytes
//   varint32 / varint64: 7 bits per byte, low groups first, high bit set on all but the last
//                        byte (at most 5 / 10 bytes)
//   varstring          : length:varint32 followed by that many bytes
//
// Decoders never read past the limit they are given: they return nullptr / false on truncated
// or overlong input, which callers turn into Corruption.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "shale/slice.h"

namespace shale {

constexpr int kMaxVarint32Length = 5;
constexpr int kMaxVarint64Length = 10;

inline void EncodeFixed32(char* dst, uint32_t value) { std::memcpy(dst, &value, 4); }
inline void EncodeFixed64(char* dst, uint64_t value) { std::memcpy(dst, &value, 8); }
inline uint32_t DecodeFixed32(const char* ptr) {
  uint32_t v;
  std::memcpy(&v, ptr, 4);
  return v;
}
inline uint64_t DecodeFixed64(const char* ptr) {
  uint64_t v;
  std::memcpy(&v, ptr, 8);
  return v;
}
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fixed encodings assume little-endian");

void PutFixed32(std::string* dst, uint32_t value);
void PutFixed64(std::string* dst, uint64_t value);
void PutVarint32(std::string* dst, uint32_t value);
void PutVarint64(std::string* dst, uint64_t value);
void PutLengthPrefixedSlice(std::string* dst, const Slice& value);

// Writes the varint at dst and returns the byte past it. dst needs kMaxVarint{32,64}Length bytes.
char* EncodeVarint32(char* dst, uint32_t value);
char* EncodeVarint64(char* dst, uint64_t value);
int VarintLength(uint64_t value);

// Parse from [p, limit); return the byte past the value, or nullptr if truncated/overlong.
// The multi-byte case of GetVarint32Ptr.
const char* GetVarint32PtrSlow(const char* p, const char* limit, uint32_t* value);
inline const char* GetVarint32Ptr(const char* p, const char* limit, uint32_t* value) {
  // Inline fast paths: one byte (lengths below 128, the common case in keys and entries) and
  // two (below 16 KiB: most values).
  if (p < limit && (static_cast<unsigned char>(*p) & 0x80) == 0) {
    *value = static_cast<unsigned char>(*p);
    return p + 1;
  }
  if (p + 1 < limit && (static_cast<unsigned char>(p[1]) & 0x80) == 0) {
    *value = (static_cast<uint32_t>(static_cast<unsigned char>(p[0])) & 0x7f) |
             (static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 7);
    return p + 2;
  }
  return GetVarint32PtrSlow(p, limit, value);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

// Parse from the front of *input and advance it; false on malformed input.
bool GetFixed32(Slice* input, uint32_t* value);
bool GetFixed64(Slice* input, uint64_t* value);
bool GetVarint32(Slice* input, uint32_t* value);
bool GetVarint64(Slice* input, uint64_t* value);
bool GetLengthPrefixedSlice(Slice* input, Slice* result);

}  // namespace shale
