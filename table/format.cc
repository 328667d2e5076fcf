#include "table/format.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "shale/db.h"
#include "src/util/coding.h"
#include "src/util/crc32c.h"

namespace shale {

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset_);
  PutVarint64(dst, size_);
}

Status BlockHandle::DecodeFrom(Slice* input) {
  if (GetVarint64(input, &offset_) && GetVarint64(input, &size_)) return Status::OK();
  return Status::Corruption("bad block handle");
}

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  metaindex_handle.EncodeTo(dst);
  index_handle.EncodeTo(dst);
  dst->resize(start + kHandlesLength, '\0');
  PutFixed32(dst, format_version);
  PutFixed32(dst, crc32c::Mask(crc32c::Value(dst->data() + start, kHandlesLength + 4)));
  PutFixed64(dst, kTableMagicNumber);
}

Status Footer::DecodeFrom(const Slice& input) {
  if (input.size() != kEncodedLength) return Status::Corruption("footer has the wrong size");
  const char* p = input.data();
  if (DecodeFixed64(p + kHandlesLength + 8) != kTableMagicNumber) {
    return Status::Corruption("not a shale table (bad magic number)");
  }
  const uint32_t expected = crc32c::Unmask(DecodeFixed32(p + kHandlesLength + 4));
  if (crc32c::Value(p, kHandlesLength + 4) != expected) {
    return Status::Corruption("footer checksum mismatch");
  }
  format_version = DecodeFixed32(p + kHandlesLength);
  if (format_version != kTableFormatVersion &&
      format_version != kTableFormatVersionWithRangeDeletions &&
      format_version != kTableFormatVersionCompactIndex) {
    return Status::NotSupported(fmt::format("table format version {}", format_version));
  }
  Slice handles(p, kHandlesLength);
  Status s = metaindex_handle.DecodeFrom(&handles);
  if (s.ok()) s = index_handle.DecodeFrom(&handles);
  if (!s.ok()) return Status::Corruption("bad block handle in footer");
  return Status::OK();
}

void AppendBlockTrailer(std::string* dst, const Slice& contents, CompressionType type) {
  const char t = static_cast<char>(type);
  uint32_t crc = crc32c::Value(contents.data(), contents.size());
  crc = crc32c::Extend(crc, &t, 1);
  dst->push_back(t);
  PutFixed32(dst, crc32c::Mask(crc));
}

CompressionType CompressBlock(const Slice& raw, CompressionType wanted, std::string* out) {
  if (wanted != CompressionType::kZSTD || raw.empty()) return CompressionType::kNoCompression;
  out->clear();
  PutVarint32(out, static_cast<uint32_t>(raw.size()));
  const size_t header = out->size();
  const size_t bound = ZSTD_compressBound(raw.size());
  out->resize(header + bound);
  const size_t n = ZSTD_compress(out->data() + header, bound, raw.data(), raw.size(), 1);
  if (ZSTD_isError(n) != 0 || header + n > raw.size() - raw.size() / 8) {
    return CompressionType::kNoCompression;  // not worth it: store raw
  }
  out->resize(header + n);
  return CompressionType::kZSTD;
}

BlockContents BlockContents::CopyOf(const Slice& bytes) {
  BlockContents c;
  c.owned = SlabBuffer(bytes.size());
  if (!bytes.empty()) std::memcpy(c.owned.get(), bytes.data(), bytes.size());
  c.data = Slice(c.owned.get(), bytes.size());
  return c;
}

Status DecodeBlock(const Slice& raw, const std::string& file_name, uint64_t offset,
                   bool verify_checksum, BlockContents* contents) {
  auto corrupt = [&](const char* what) {
    return Status::Corruption(fmt::format("{}: block at offset {}: {}", file_name, offset, what));
  };
  if (raw.size() < kBlockTrailerSize) return corrupt("shorter than its trailer");
  const size_t n = raw.size() - kBlockTrailerSize;
  const char* data = raw.data();
  if (verify_checksum) {
    const uint32_t expected = crc32c::Unmask(DecodeFixed32(data + n + 1));
    if (crc32c::Value(data, n + 1) != expected) return corrupt("checksum mismatch");
  }
  switch (static_cast<CompressionType>(data[n])) {
    case CompressionType::kNoCompression:
      contents->data = Slice(data, n);
      return Status::OK();
    case CompressionType::kZSTD: {
      Slice in(data, n);
      uint32_t raw_size;
      if (!GetVarint32(&in, &raw_size)) return corrupt("bad compressed block header");
      if (raw_size > DB::kMaxKeySize + DB::kMaxValueSize + 1024) {
        return corrupt("compressed block too large");
      }
      const unsigned long long frame = ZSTD_getFrameContentSize(in.data(), in.size());
      if (frame != raw_size) return corrupt("decompressed size mismatch");
      SlabBuffer out(raw_size == 0 ? 1 : raw_size);
      const size_t got = ZSTD_decompress(out.get(), raw_size, in.data(), in.size());
      if (ZSTD_isError(got) != 0) return corrupt("zstd could not decompress");
      if (got != raw_size) return corrupt("decompressed size mismatch");
      contents->owned = std::move(out);
      contents->data = Slice(contents->owned.get(), raw_size);
      return Status::OK();
    }
  }
  return corrupt("unknown compression type");
}

namespace {

// Corruption when the block (with its trailer) does not lie inside the file.
Status CheckHandle(uint64_t file_size, const std::string& file_name, const BlockHandle& handle) {
  if (handle.offset() > file_size || handle.size() > file_size - handle.offset() ||
      file_size - handle.offset() - handle.size() < kBlockTrailerSize) {
    return Status::Corruption(
        fmt::format("{}: block handle (offset {}, size {}) past the end "
                    "of the {}-byte file",
                    file_name, handle.offset(), handle.size(), file_size));
  }
  return Status::OK();
}

}  // namespace

Status BlockReadRequest::Prepare(const RandomAccessFile* file, uint64_t file_size,
                                 const std::string& file_name, const BlockHandle& handle) {
  handle_ = handle;
  Status bounds = CheckHandle(file_size, file_name, handle);
  if (!bounds.ok()) return bounds;
  const size_t n = static_cast<size_t>(handle.size()) + kBlockTrailerSize;
  request_ = ReadRequest{};
  const size_t align = file->GetRequiredBufferAlignment();
  if (align > 1) {
    // Direct IO: the aligned range around the block, into an aligned buffer.
    const uint64_t start = handle.offset() / align * align;
    const uint64_t end = (handle.offset() + n + align - 1) / align * align;
    const size_t len = static_cast<size_t>(end - start);
    aligned_.reset(static_cast<char*>(std::aligned_alloc(align, len)));
    if (aligned_ == nullptr) return Status::IOError("out of memory reading a block");
    request_.offset = start;
    request_.len = len;
    request_.scratch = aligned_.get();
    skip_ = static_cast<size_t>(handle.offset() - start);
  } else {
    buffer_ = SlabBuffer(n);
    request_.offset = handle.offset();
    request_.len = n;
    request_.scratch = buffer_.get();
    skip_ = 0;
  }
  return Status::OK();
}

Status BlockReadRequest::Finish(const std::string& file_name, bool verify_checksum,
                                BlockContents* contents) {
  const Status& s = request_.status;
  if (!s.ok()) {
    return Status::IOError(
        fmt::format("{}: reading block at offset {}", file_name, handle_.offset()), s.ToString());
  }
  const size_t n = static_cast<size_t>(handle_.size()) + kBlockTrailerSize;
  const Slice got = request_.result;
  if (got.size() < skip_ + n) {
    return Status::Corruption(fmt::format("{}: block at offset {} truncated (read {} of {} bytes)",
                                          file_name, handle_.offset(),
                                          got.size() > skip_ ? got.size() - skip_ : 0, n));
  }
  const Slice raw(got.data() + skip_, n);
  Status d = DecodeBlock(raw, file_name, handle_.offset(), verify_checksum, contents);
  if (d.ok() && !contents->owned) {
    // The block is used in place: give the contents memory of their own (the file may have
    // returned its own memory, and direct-IO buffers are freed differently).
    if (!buffer_ || raw.data() != buffer_.get()) {
      SlabBuffer own(n);
      std::memcpy(own.get(), raw.data(), n);
      buffer_ = std::move(own);
    }
    contents->data = Slice(buffer_.get(), n - kBlockTrailerSize);
    contents->owned = std::move(buffer_);
  }
  return d;
}

Status ReadRange(const RandomAccessFile* file, uint64_t offset, size_t n, Slice* result,
                 char* scratch) {
  const size_t align = file->GetRequiredBufferAlignment();
  if (align <= 1) return file->Read(offset, n, result, scratch);
  const uint64_t start = offset / align * align;
  const size_t len = static_cast<size_t>((offset + n + align - 1) / align * align - start);
  std::unique_ptr<char, void (*)(void*)> aligned(static_cast<char*>(std::aligned_alloc(align, len)),
                                                 &std::free);
  if (aligned == nullptr) return Status::IOError("out of memory reading a file");
  Slice got;
  Status s = file->Read(start, len, &got, aligned.get());
  if (!s.ok()) return s;
  const size_t skip = static_cast<size_t>(offset - start);
  const size_t have = got.size() > skip ? std::min(n, got.size() - skip) : 0;
  if (have > 0) std::memcpy(scratch, got.data() + skip, have);
  *result = Slice(scratch, have);
  return Status::OK();
}

Status ReadaheadBuffer::ReadBlock(const RandomAccessFile* file, uint64_t file_size,
                                  const std::string& file_name, const BlockHandle& handle,
                                  bool verify_checksum, BlockContents* contents) {
  Status bounds = CheckHandle(file_size, file_name, handle);
  if (!bounds.ok()) return bounds;
  const size_t n = static_cast<size_t>(handle.size()) + kBlockTrailerSize;
  const uint64_t off = handle.offset();
  if (off < start_ || off + n > start_ + len_) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(std::max(readahead_, n), file_size - off));
    // Under direct IO the window reads the aligned range around [off, off + want) in place:
    // one buffer for the reader's life, where a buffer per refill (2 MiB for compactions) left
    // glibc's heaps holding well over a hundred MB that no live allocation used.
    const size_t align = std::max<size_t>(file->GetRequiredBufferAlignment(), 16);
    const uint64_t from = off / align * align;
    const size_t len = static_cast<size_t>((off + want + align - 1) / align * align - from);
    if (len > capacity_) {
      window_.reset(static_cast<char*>(std::aligned_alloc(align, len)));
      if (window_ == nullptr) {
        capacity_ = 0;
        len_ = 0;
        return Status::IOError("out of memory reading a file");
      }
      capacity_ = len;
    }
    len_ = 0;
    Slice got;
    Status s = file->Read(from, len, &got, window_.get());
    if (!s.ok()) {
      return Status::IOError(fmt::format("{}: reading block at offset {}", file_name, off),
                             s.ToString());
    }
    if (got.data() != window_.get()) std::memmove(window_.get(), got.data(), got.size());
    start_ = from;
    len_ = got.size();
    readahead_ = std::min(max_readahead_, readahead_ * 2);
    if (off + n > start_ + len_) {
      const uint64_t have = start_ + len_ > off ? start_ + len_ - off : 0;
      return Status::Corruption(fmt::format(
          "{}: block at offset {} truncated (read {} of {} bytes)", file_name, off, have, n));
    }
  }
  const Slice raw(window_.get() + (off - start_), n);
  Status s = DecodeBlock(raw, file_name, off, verify_checksum, contents);
  if (s.ok() && !contents->owned) {
    // The window is reused: the block gets bytes of its own.
    SlabBuffer own(n);
    std::memcpy(own.get(), raw.data(), n);
    contents->data = Slice(own.get(), n - kBlockTrailerSize);
    contents->owned = std::move(own);
  }
  return s;
}

Status ReadBlock(const RandomAccessFile* file, uint64_t file_size, const std::string& file_name,
                 const BlockHandle& handle, bool verify_checksum, BlockContents* contents) {
  BlockReadRequest read;
  Status s = read.Prepare(file, file_size, file_name, handle);
  if (!s.ok()) return s;
  ReadRequest* r = read.request();
  r->status = file->Read(r->offset, r->len, &r->result, r->scratch);
  return read.Finish(file_name, verify_checksum, contents);
}

}  // namespace shale
