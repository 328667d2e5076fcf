// LogReader: reads logical records back from a log file (format in log_format.h).
//
// Reading stops at the first problem, and end() classifies how the log ended, so the caller can
// apply its recovery mode:
//   kClean         : end of file at a record boundary
//   kTruncatedTail : the file ends inside a record (a write torn by a crash) and no valid
//                    record follows the cut one; or, in a zero-filled log, a record whose bytes
//                    stop at a 512-byte sector boundary inside it with only zeros after them
//                    to the end of the file (a crash landed its first sectors only); or, in
//                    such a log, a last record whose checksum field is still zero, only
//                    zeros after it to the end of the file (a process crash cut a mapped
//                    append off before its checksum landed: src/env/mapped_appends.h)
//   kZeroedTail    : zero bytes from a record boundary to the end of file (preallocated or
//                    zeroed by a crash)
//   kCorruption    : a damaged record (checksum, length, type, fragment order), or zeroes
//                    followed by data
//   kIOError       : the file could not be read
// status() names the file and the byte offset of the problem.
// Ownership: owns its SequentialFile. Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/file_system.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "wal/log_format.h"

namespace shale::log {

class Reader {
 public:
  enum class End { kNone, kClean, kTruncatedTail, kZeroedTail, kCorruption, kIOError };

  Reader(std::unique_ptr<SequentialFile> file, std::string file_name);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the next record into *record, which may point into *scratch or into the reader's
  // buffer and stays valid until the next call. false at the end or at the first problem.
  bool ReadRecord(Slice* record, std::string* scratch);

  // How reading ended (kNone while records are still being returned).
  End end() const { return end_; }
  // OK for kNone/kClean; otherwise Corruption (or IOError) naming file and offset.
  const Status& status() const { return status_; }
  // The file offset at which the last returned record starts.
  uint64_t last_record_offset() const { return last_record_offset_; }
  // File offset just past the last returned record: the valid prefix of the file.
  uint64_t valid_prefix_bytes() const { return valid_prefix_bytes_; }

 private:
  // Physical record results beyond the RecordType values.
  enum : int { kEof = kMaxRecordType + 1, kStop };

  // Returns a RecordType, kEof, or kStop (end_ and status_ set).
  int ReadPhysicalRecord(Slice* fragment, uint64_t* offset);
  bool FillBuffer();
  bool RestIsZero();
  // True if the damaged record at file offset at (its header starts buffer_) is a write torn
  // in zero-filled space: its last non-zero byte ends a sector before the record's end, a
  // header that landed whole has a valid type, no valid record or checksum-matching prefix is
  // inside what landed (else its length is damaged), and the rest of the file is zero. May
  // consume the buffer.
  bool TornIntoZeros(uint64_t at, uint32_t length);
  // For a damaged record (its header starts buffer_): true if its checksum field is zero in
  // front of a valid type and a length that fits its block (not 0, but for a kFirst header
  // alone at a block's end), the shape of a mapped append cut off by a process crash
  // (src/env/mapped_appends.h); *cut then says whether only zeros follow the record to the end
  // of the file (it was the last append: a torn tail). A single flipped bit has that shape only
  // as a kFirst type in the zeros 7 bytes before a block's end, where it drops nothing. May
  // consume the buffer.
  bool ChecksumNeverLanded(uint32_t length, bool* cut);
  // Stops at the damaged record at offset at: a torn tail if ChecksumNeverLanded found it cut
  // or TornIntoZeros holds, else Corruption (what says why).
  void StopDamaged(uint64_t at, uint32_t length, const char* what);
  // True if a physical record with a valid checksum starts anywhere in bytes.
  static bool ValidRecordWithin(const Slice& bytes);
  // True if header's checksum matches its type byte plus some prefix of rest: a whole record
  // whose length field is damaged, not a torn one.
  static bool ChecksumMatchesAPrefix(const char* header, const Slice& rest);
  void Stop(End end, uint64_t offset, const char* what);

  std::unique_ptr<SequentialFile> file_;
  const std::string file_name_;
  std::unique_ptr<char[]> backing_;
  Slice buffer_;
  bool eof_ = false;
  uint64_t buffer_end_offset_ = 0;  // file offset just past buffer_
  End end_ = End::kNone;
  Status status_;
  uint64_t last_record_offset_ = 0;
  uint64_t valid_prefix_bytes_ = 0;
};

}  // namespace shale::log
