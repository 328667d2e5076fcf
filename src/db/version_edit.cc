#include "src/db/version_edit.h"

#include <fmt/format.h>

#include "src/util/coding.h"

namespace shale {
namespace {

enum Tag : uint32_t {
  kComparator = 1,
  kLogNumber = 2,
  kNextFileNumber = 3,
  kLastSequence = 4,
  kDeletedFile = 5,
  kNewFile = 6,
};

// A level number from the MANIFEST must be one a DB can have.
constexpr uint32_t kMaxLevels = 64;

}  // namespace

void VersionEdit::EncodeTo(std::string* dst) const {
  if (comparator_) {
    PutVarint32(dst, kComparator);
    PutLengthPrefixedSlice(dst, *comparator_);
  }
  if (log_number_) {
    PutVarint32(dst, kLogNumber);
    PutVarint64(dst, *log_number_);
  }
  if (next_file_number_) {
    PutVarint32(dst, kNextFileNumber);
    PutVarint64(dst, *next_file_number_);
  }
  if (last_sequence_) {
    PutVarint32(dst, kLastSequence);
    PutVarint64(dst, *last_sequence_);
  }
  for (const auto& [level, number] : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, number);
  }
  for (const auto& [level, f] : new_files_) {
    PutVarint32(dst, kNewFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, f.number);
    PutVarint64(dst, f.file_size);
    PutLengthPrefixedSlice(dst, f.smallest);
    PutLengthPrefixedSlice(dst, f.largest);
    PutVarint64(dst, f.smallest_seqno);
    PutVarint64(dst, f.largest_seqno);
  }
}

Status VersionEdit::DecodeFrom(const Slice& src) {
  *this = VersionEdit();
  Slice in = src;
  auto bad = [](const char* what) { return Status::Corruption("VersionEdit", what); };
  while (!in.empty()) {
    uint32_t tag;
    if (!GetVarint32(&in, &tag)) return bad("truncated tag");
    switch (tag) {
      case kComparator: {
        Slice name;
        if (!GetLengthPrefixedSlice(&in, &name)) return bad("comparator name");
        comparator_ = name.ToString();
        break;
      }
      case kLogNumber:
      case kNextFileNumber:
      case kLastSequence: {
        uint64_t v;
        if (!GetVarint64(&in, &v)) return bad("number");
        if (tag == kLogNumber) log_number_ = v;
        if (tag == kNextFileNumber) next_file_number_ = v;
        if (tag == kLastSequence) {
          if (v > kMaxSequenceNumber) return bad("last sequence out of range");
          last_sequence_ = v;
        }
        break;
      }
      case kDeletedFile: {
        uint32_t level;
        uint64_t number;
        if (!GetVarint32(&in, &level) || !GetVarint64(&in, &number)) return bad("deleted file");
        if (level >= kMaxLevels) return bad("level out of range");
        deleted_files_.emplace(static_cast<int>(level), number);
        break;
      }
      case kNewFile: {
        uint32_t level;
        FileMetaData f;
        Slice smallest, largest;
        if (!GetVarint32(&in, &level) || !GetVarint64(&in, &f.number) ||
            !GetVarint64(&in, &f.file_size) || !GetLengthPrefixedSlice(&in, &smallest) ||
            !GetLengthPrefixedSlice(&in, &largest) || !GetVarint64(&in, &f.smallest_seqno) ||
            !GetVarint64(&in, &f.largest_seqno)) {
          return bad("new file");
        }
        if (level >= kMaxLevels) return bad("level out of range");
        ParsedInternalKey p;
        if (!ParseInternalKey(smallest, &p) || !ParseInternalKey(largest, &p)) {
          return bad("new file with a malformed key range");
        }
        f.smallest = smallest.ToString();
        f.largest = largest.ToString();
        new_files_.emplace_back(static_cast<int>(level), std::move(f));
        break;
      }
      default:
        return Status::Corruption("VersionEdit", fmt::format("unknown tag {}", tag));
    }
  }
  return Status::OK();
}

std::string VersionEdit::DebugString() const {
  std::string s = "VersionEdit {";
  if (comparator_) s += " comparator: " + *comparator_;
  if (log_number_) s += fmt::format(" log: {}", *log_number_);
  if (next_file_number_) s += fmt::format(" next_file: {}", *next_file_number_);
  if (last_sequence_) s += fmt::format(" last_seq: {}", *last_sequence_);
  for (const auto& [level, number] : deleted_files_)
    s += fmt::format(" delete L{}#{}", level, number);
  for (const auto& [level, f] : new_files_) {
    s += fmt::format(" add L{}#{}({} bytes, seq {}..{})", level, f.number, f.file_size,
                     f.smallest_seqno, f.largest_seqno);
  }
  return s + " }";
}

}  // namespace shale
