#include "wal/log_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/util/coding.h"
#include "src/util/crc32c.h"

namespace shale::log {

Reader::Reader(std::unique_ptr<SequentialFile> file, std::string file_name)
    : file_(std::move(file)),
      file_name_(std::move(file_name)),
      backing_(std::make_unique_for_overwrite<char[]>(kBlockSize)) {}

void Reader::Stop(End end, uint64_t offset, const char* what) {
  end_ = end;
  if (end == End::kClean) return;
  std::string msg = fmt::format("{}: offset {}: {}", file_name_, offset, what);
  status_ = end == End::kIOError ? Status::IOError(msg) : Status::Corruption(msg);
}

bool Reader::FillBuffer() {
  // A read may return fewer bytes than asked for before the end of the file; only an empty
  // read means the end.
  size_t filled = 0;
  while (filled < static_cast<size_t>(kBlockSize)) {
    Slice got;
    char* dst = backing_.get() + filled;
    Status s = file_->Read(kBlockSize - filled, &got, dst);
    if (!s.ok()) {
      end_ = End::kIOError;
      status_ = Status::IOError(
          fmt::format("{}: offset {}", file_name_, buffer_end_offset_ + filled), s.ToString());
      return false;
    }
    if (got.empty()) {
      eof_ = true;
      break;
    }
    if (got.data() != dst) std::memmove(dst, got.data(), got.size());
    filled += got.size();
  }
  buffer_ = Slice(backing_.get(), filled);
  buffer_end_offset_ += filled;
  return true;
}

bool Reader::RestIsZero() {
  while (true) {
    if (std::any_of(buffer_.data(), buffer_.data() + buffer_.size(),
                    [](char c) { return c != 0; })) {
      return false;
    }
    buffer_.clear();
    if (eof_) return true;
    if (!FillBuffer()) return false;
  }
}

bool Reader::TornIntoZeros(uint64_t at, uint32_t length) {
  // buffer_ starts with the record's header.
  const char* p = buffer_.data();
  size_t nonzero = buffer_.size();
  while (nonzero > 0 && p[nonzero - 1] == 0) nonzero--;
  const uint64_t sector_end = (at + nonzero + kSectorSize - 1) / kSectorSize * kSectorSize;
  if (sector_end >= at + kHeaderSize + length) return false;  // the record's bytes are all there
  // A header that landed whole must be a valid one.
  const uint8_t type = static_cast<uint8_t>(p[6]);
  if (sector_end >= at + kHeaderSize && (type == kZeroType || type > kMaxRecordType)) {
    return false;
  }
  // A damaged length can also reach into the zeros. A torn write leaves its own bytes only:
  // no record that checks out inside them, and a checksum over all of its payload. (The span
  // keeps its zeros: a payload may itself end in zero bytes.)
  const size_t span = std::min<size_t>(kHeaderSize + length, buffer_.size()) - kHeaderSize;
  const Slice payload(p + kHeaderSize, span);
  if (ValidRecordWithin(payload) || ChecksumMatchesAPrefix(p, payload)) return false;
  buffer_.clear();
  return RestIsZero();
}

bool Reader::ChecksumNeverLanded(uint32_t length, bool* cut) {
  // buffer_ starts with the record's header.
  const char* p = buffer_.data();
  const uint8_t type = static_cast<uint8_t>(p[6]);
  // A fragment carries payload, but for the first fragment of a record that begins exactly
  // 7 bytes before a block's end (a header alone there). (An empty record is never in a WAL.)
  const bool header_alone = type == kFirstType && buffer_.size() == kHeaderSize;
  if (DecodeFixed32(p) != 0 || type == kZeroType || type > kMaxRecordType ||
      (length == 0 && !header_alone) || kHeaderSize + length > buffer_.size()) {
    return false;
  }
  const char* after = p + kHeaderSize + length;
  *cut = std::all_of(after, buffer_.data() + buffer_.size(), [](char c) { return c == 0; });
  if (*cut) {
    buffer_.clear();
    *cut = RestIsZero();
  }
  return true;
}

void Reader::StopDamaged(uint64_t at, uint32_t length, const char* what) {
  bool cut = false;
  if (ChecksumNeverLanded(length, &cut)) {
    if (cut) {
      Stop(End::kTruncatedTail, at, "record cut off before its checksum landed, zeros after it");
    } else if (end_ == End::kNone) {
      Stop(End::kCorruption, at, what);
    }
  } else if (TornIntoZeros(at, length)) {
    Stop(End::kTruncatedTail, at, "record cut off at a sector boundary, zeros after it");
  } else if (end_ == End::kNone) {  // not already stopped by a read error
    Stop(End::kCorruption, at, what);
  }
}

bool Reader::ValidRecordWithin(const Slice& bytes) {
  const char* p = bytes.data();
  for (size_t off = 0; off + kHeaderSize <= bytes.size(); off++) {
    const char* h = p + off;
    const uint32_t length =
        static_cast<uint8_t>(h[4]) | (static_cast<uint32_t>(static_cast<uint8_t>(h[5])) << 8);
    const uint8_t type = static_cast<uint8_t>(h[6]);
    if (type == kZeroType || type > kMaxRecordType) continue;
    if (off + kHeaderSize + length > bytes.size()) continue;
    if (crc32c::Unmask(DecodeFixed32(h)) == crc32c::Value(h + 6, 1 + length)) return true;
  }
  return false;
}

bool Reader::ChecksumMatchesAPrefix(const char* header, const Slice& rest) {
  const uint32_t expected = crc32c::Unmask(DecodeFixed32(header));
  uint32_t crc = crc32c::Value(header + 6, 1);  // the type byte
  if (crc == expected) return true;
  for (size_t i = 0; i < rest.size(); i++) {
    crc = crc32c::Extend(crc, rest.data() + i, 1);
    if (crc == expected) return true;
  }
  return false;
}

int Reader::ReadPhysicalRecord(Slice* fragment, uint64_t* offset) {
  while (true) {
    if (buffer_.size() < static_cast<size_t>(kHeaderSize)) {
      if (!eof_) {
        // The rest of the block is the trailer the writer zero-fills (or nothing).
        if (std::any_of(buffer_.data(), buffer_.data() + buffer_.size(),
                        [](char c) { return c != 0; })) {
          Stop(End::kCorruption, buffer_end_offset_ - buffer_.size(), "non-zero block trailer");
          return kStop;
        }
        buffer_.clear();
        if (!FillBuffer()) return kStop;
        continue;
      }
      if (buffer_.empty()) return kEof;
      uint64_t at = buffer_end_offset_ - buffer_.size();
      if (RestIsZero()) {
        Stop(End::kZeroedTail, at, "zeroed tail");
      } else {
        Stop(End::kTruncatedTail, at, "truncated record header at end of file");
      }
      return kStop;
    }
    const char* header = buffer_.data();
    const uint64_t at = buffer_end_offset_ - buffer_.size();
    const uint32_t length = static_cast<uint8_t>(header[4]) |
                            (static_cast<uint32_t>(static_cast<uint8_t>(header[5])) << 8);
    const uint8_t type = static_cast<uint8_t>(header[6]);
    if (type == kZeroType && length == 0 && DecodeFixed32(header) == 0) {
      if (RestIsZero()) {
        Stop(End::kZeroedTail, at, "zeroed tail");
      } else if (end_ == End::kNone) {
        Stop(End::kCorruption, at, "zeroed bytes followed by data");
      }
      return kStop;
    }
    const bool bad_type = type == kZeroType || type > kMaxRecordType;
    if (kHeaderSize + length > buffer_.size()) {
      const Slice rest(header + kHeaderSize, buffer_.size() - kHeaderSize);
      // An appended torn write's header (here whole) is a valid one.
      if (eof_ && !bad_type && !ValidRecordWithin(rest) && !ChecksumMatchesAPrefix(header, rest)) {
        Stop(End::kTruncatedTail, at, "truncated record at end of file");
      } else if (eof_ && bad_type) {
        // In a zero-filled log the type byte may be a zero that a crash left in place.
        StopDamaged(at, length, "unknown record type");
      } else if (eof_) {
        // A torn write leaves nothing valid after it, and its own checksum covers bytes that
        // never landed; a checksum that matches what is here means the length field itself
        // is damaged.
        Stop(End::kCorruption, at, "record length past the end of file, with intact data");
      } else {
        Stop(End::kCorruption, at, "record length past the end of its block");
      }
      return kStop;
    }
    if (bad_type ||
        crc32c::Unmask(DecodeFixed32(header)) != crc32c::Value(header + 6, 1 + length)) {
      StopDamaged(at, length, bad_type ? "unknown record type" : "checksum mismatch");
      return kStop;
    }
    *fragment = Slice(header + kHeaderSize, length);
    *offset = at;
    buffer_.remove_prefix(kHeaderSize + length);
    return type;
  }
}

bool Reader::ReadRecord(Slice* record, std::string* scratch) {
  if (end_ != End::kNone) return false;
  scratch->clear();
  bool in_fragmented = false;
  uint64_t first_offset = 0;
  while (true) {
    Slice fragment;
    uint64_t offset = 0;
    const int type = ReadPhysicalRecord(&fragment, &offset);
    switch (type) {
      case kFullType:
        if (in_fragmented) {
          Stop(End::kCorruption, offset, "FULL record inside a fragmented record");
          return false;
        }
        *record = fragment;
        last_record_offset_ = offset;
        valid_prefix_bytes_ = buffer_end_offset_ - buffer_.size();
        return true;
      case kFirstType:
        if (in_fragmented) {
          Stop(End::kCorruption, offset, "FIRST record inside a fragmented record");
          return false;
        }
        in_fragmented = true;
        first_offset = offset;
        scratch->assign(fragment.data(), fragment.size());
        break;
      case kMiddleType:
      case kLastType:
        if (!in_fragmented) {
          Stop(End::kCorruption, offset,
               type == kMiddleType ? "MIDDLE record without FIRST" : "LAST record without FIRST");
          return false;
        }
        scratch->append(fragment.data(), fragment.size());
        if (type == kLastType) {
          *record = Slice(*scratch);
          last_record_offset_ = first_offset;
          valid_prefix_bytes_ = buffer_end_offset_ - buffer_.size();
          return true;
        }
        break;
      case kEof:
        if (in_fragmented) {
          Stop(End::kTruncatedTail, first_offset, "fragmented record cut off at end of file");
        } else {
          Stop(End::kClean, buffer_end_offset_, "");
        }
        return false;
      default:  // kStop
        return false;
    }
  }
}

}  // namespace shale::log
