// The block-based table file layout, and reading one block back with its checks.
//
//   file    := data_block* filter_block? properties_block metaindex_block index_block footer
//   each block on disk := contents trailer
//   trailer := compression_type:u8 checksum:fixed32      masked crc32c of contents + type byte
//   compressed contents (type kZSTD) := raw_size:varint32 zstd_frame
//   handle  := offset:varint64 size:varint64             size excludes the trailer
//   footer  := metaindex_handle index_handle zero padding to 40 bytes
//              format_version:fixed32 checksum:fixed32 magic:fixed64     (56 bytes)
//              checksum = masked crc32c of the footer's first 44 bytes
//
// Metaindex entries (a block of name → handle, sorted bytewise): "shale.filter" (absent when
// the table has no filter) and "shale.properties". Data and index blocks hold internal keys;
// index entries map a separator ≥ every key of a data block and < every key of the next one
// to that block's handle.
// Thread safety: pure functions and values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/file_system.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class BlockHandle {
 public:
  static constexpr size_t kMaxEncodedLength = 20;
  BlockHandle() = default;
  BlockHandle(uint64_t offset, uint64_t size) : offset_(offset), size_(size) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  void EncodeTo(std::string* dst) const;
  // Corruption on a malformed handle.
  [[nodiscard]] Status DecodeFrom(Slice* input);

 private:
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
};

constexpr size_t kBlockTrailerSize = 5;
constexpr uint64_t kTableMagicNumber = 0x656c616873b10c5dull;  // "]\x0c\xb1shale" little-endian
constexpr uint32_t kTableFormatVersion = 1;

struct Footer {
  static constexpr size_t kEncodedLength = 56;
  static constexpr size_t kHandlesLength = 40;

  BlockHandle metaindex_handle;
  BlockHandle index_handle;
  uint32_t format_version = kTableFormatVersion;

  void EncodeTo(std::string* dst) const;
  // Corruption naming what is wrong (magic, checksum, version, handles).
  [[nodiscard]] Status DecodeFrom(const Slice& input);
};

// The bytes of one block after its trailer was checked and it was decompressed.
struct BlockContents {
  Slice data;
  std::unique_ptr<char[]> owned;  // backs data unless the block was read in place
  size_t owned_size = 0;
};

// Appends the trailer for contents stored with type.
void AppendBlockTrailer(std::string* dst, const Slice& contents, CompressionType type);

// Compresses raw into *out when zstd saves at least 1/8 of it; returns the type stored.
CompressionType CompressBlock(const Slice& raw, CompressionType wanted, std::string* out);

// Reads the block at handle from file (of file_size bytes, for a clear error when the handle
// points past the end), verifies its trailer when verify_checksum, and decompresses it.
// file_name only labels errors, which are Corruption naming file and offset, or IOError.
[[nodiscard]] Status ReadBlock(const RandomAccessFile* file, uint64_t file_size,
                               const std::string& file_name, const BlockHandle& handle,
                               bool verify_checksum, BlockContents* contents);

// Checks a trailer and decompresses: raw is contents + trailer exactly as on disk.
[[nodiscard]] Status DecodeBlock(const Slice& raw, const std::string& file_name, uint64_t offset,
                                 bool verify_checksum, BlockContents* contents);

}  // namespace shale
