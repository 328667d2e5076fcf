#include "wal/log_writer.h"

#include "src/util/coding.h"
#include "src/util/crc32c.h"
#include "src/util/invariants.h"

namespace shale::log {

Writer::Writer(std::unique_ptr<WritableFile> dest, uint64_t dest_length)
    : file_(std::move(dest)), block_offset_(static_cast<int>(dest_length % kBlockSize)) {
  for (int t = 0; t <= kMaxRecordType; t++) {
    char type = static_cast<char>(t);
    type_crc_[t] = crc32c::Value(&type, 1);
  }
}

Status Writer::AddRecord(const Slice& payload) {
  const char* ptr = payload.data();
  size_t left = payload.size();
  bool begin = true;
  // An empty payload still emits one (empty) kFull record.
  do {
    const int leftover = kBlockSize - block_offset_;
    SHALE_ASSERT(leftover >= 0);
    if (leftover < kHeaderSize) {
      if (leftover > 0) {
        static constexpr char kZeroes[kHeaderSize] = {};
        Status s = file_->Append(Slice(kZeroes, leftover));
        if (!s.ok()) return s;
      }
      block_offset_ = 0;
    }
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t fragment = left < avail ? left : avail;
    const bool end = (left == fragment);
    RecordType type = begin && end ? kFullType : begin ? kFirstType : end ? kLastType : kMiddleType;
    Status s = EmitPhysicalRecord(type, ptr, fragment);
    if (!s.ok()) return s;
    ptr += fragment;
    left -= fragment;
    begin = false;
  } while (left > 0);
  return file_->Flush();
}

Status Writer::EmitPhysicalRecord(RecordType type, const char* data, size_t length) {
  SHALE_ASSERT(length <= 0xffff);
  SHALE_ASSERT(block_offset_ + kHeaderSize + length <= static_cast<size_t>(kBlockSize));
  char header[kHeaderSize];
  header[4] = static_cast<char>(length & 0xff);
  header[5] = static_cast<char>(length >> 8);
  header[6] = static_cast<char>(type);
  uint32_t crc = crc32c::Extend(type_crc_[type], data, length);
  EncodeFixed32(header, crc32c::Mask(crc));
  // One append per fragment: a file with mapped appends stores an append's first 4 bytes last,
  // so a fragment cut off by a process crash has a zero checksum (wal/README.md).
  Status s = file_->AppendJoined(Slice(header, kHeaderSize), Slice(data, length));
  block_offset_ += static_cast<int>(kHeaderSize + length);
  return s;
}

}  // namespace shale::log
