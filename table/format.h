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
//   format_version := 1, or 2 when the table has a range-deletion block (older readers refuse
//                     2 rather than miss its tombstones); or 3, the compact index below (a
//                     range-deletion block exactly when the table has tombstones)
//
// Metaindex entries (a block of name → handle, sorted bytewise): "shale.filter" (absent when
// the table has no filter), "shale.properties" and "shale.range_del" (only in formats 2 and 3).
// Data blocks hold internal keys. Index entries map a separator ≥ every key of a data block
// and < every key of the next one to that block's handle:
//   formats 1, 2: index_entry := internal-key separator → handle, with its value length
//                 (BlockValueFormat::kSized, table/block_builder.h)
//   format 3:     index_entry := separator → handle, without a value length
//                 (BlockValueFormat::kHandle); the separators are user keys when the property
//                 shale.index.key.is.user.key is 1 (the builder writes them so when no user key
//                 has entries in two data blocks, so a user key tells its block), else internal
//                 keys
//
//   range_del_block := a block (restart interval 1, never compressed) of
//                      internal_key(start, seq, kTypeRangeDeletion) → end
// one entry per fragment and sequence of the table's fragmented tombstones
// (src/base/range_tombstone.h), in internal-key order; start < end by the user comparator; the
// count is the property shale.num.range.deletions.
// Thread safety: pure functions and values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "shale/file_system.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "src/util/slab_allocator.h"

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
constexpr uint32_t kTableFormatVersionWithRangeDeletions = 2;
constexpr uint32_t kTableFormatVersionCompactIndex = 3;

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
  SlabBuffer owned;  // backs data unless the block was read in place

  // Contents owning a copy of bytes (tests, tools, fuzzers).
  static BlockContents CopyOf(const Slice& bytes);
};

// Appends the trailer for contents stored with type.
void AppendBlockTrailer(std::string* dst, const Slice& contents, CompressionType type);

// Compresses raw into *out when zstd saves at least 1/8 of it; returns the type stored.
CompressionType CompressBlock(const Slice& raw, CompressionType wanted, std::string* out);

// One block read in two steps, so the bytes may come from a synchronous read or from an
// AsyncReader: Prepare checks the handle and sets up request() (an aligned range and buffer
// for direct IO), the caller reads it, Finish checks what arrived and decodes it.
// Ownership: owns the read buffer. Thread safety: one thread.
class BlockReadRequest {
 public:
  // file only tells the alignment; file_size and file_name give clear errors.
  [[nodiscard]] Status Prepare(const RandomAccessFile* file, uint64_t file_size,
                               const std::string& file_name, const BlockHandle& handle);
  ReadRequest* request() { return &request_; }
  const BlockHandle& handle() const { return handle_; }
  // After request()'s read completed: IOError for a failed read, Corruption for a short one
  // or a bad trailer; else *contents holds the (decompressed) block.
  [[nodiscard]] Status Finish(const std::string& file_name, bool verify_checksum,
                              BlockContents* contents);

 private:
  BlockHandle handle_;
  ReadRequest request_;
  size_t skip_ = 0;  // bytes before the block in an aligned read
  SlabBuffer buffer_;
  std::unique_ptr<char, void (*)(void*)> aligned_{nullptr, &std::free};
};

// Reads n bytes at offset into scratch (which must have room for n), honouring the file's
// alignment rules for direct IO. *result may be shorter only at end of file.
[[nodiscard]] Status ReadRange(const RandomAccessFile* file, uint64_t offset, size_t n,
                               Slice* result, char* scratch);

// Blocks read through a window of the file fetched in one request of readahead bytes, for
// sequential scans (compaction inputs, iterators) that would otherwise issue one small read per
// block. The request size starts at `readahead` and doubles at each refill up to
// `max_readahead`.
// Ownership: owns the window. Thread safety: one thread.
class ReadaheadBuffer {
 public:
  explicit ReadaheadBuffer(size_t readahead, size_t max_readahead = 0)
      : readahead_(readahead), max_readahead_(std::max(readahead, max_readahead)) {}
  // As ReadBlock, but from the window when it holds the whole block; otherwise the window is
  // refilled from the block on (under direct IO from the aligned offset at or before it).
  [[nodiscard]] Status ReadBlock(const RandomAccessFile* file, uint64_t file_size,
                                 const std::string& file_name, const BlockHandle& handle,
                                 bool verify_checksum, BlockContents* contents);

 private:
  size_t readahead_;
  const size_t max_readahead_;
  uint64_t start_ = 0;
  size_t len_ = 0;
  size_t capacity_ = 0;
  std::unique_ptr<char, void (*)(void*)> window_{nullptr, &std::free};  // aligned for direct IO
};

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
