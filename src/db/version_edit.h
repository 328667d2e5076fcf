// VersionEdit: one change to the set of table files, as recorded in the MANIFEST.
//
//   edit  := field*
//   field := tag:varint32 payload
//     kComparator     (1): name:varstring
//     kLogNumber      (2): number:varint64   WALs below this number are no longer needed
//     kNextFileNumber (3): number:varint64
//     kLastSequence   (4): sequence:varint64
//     kDeletedFile    (5): level:varint32 number:varint64
//     kNewFile        (6): level:varint32 number:varint64 size:varint64
//                          smallest:varstring largest:varstring        (internal keys)
//                          smallest_seqno:varint64 largest_seqno:varint64
// Unknown tags are Corruption: a MANIFEST this version cannot fully understand is not opened.
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shale/slice.h"
#include "shale/status.h"
#include "src/base/dbformat.h"

namespace shale {

// One table file as a Version sees it. Immutable once in a Version, except being_compacted,
// which only changes under the DB mutex.
struct FileMetaData {
  uint64_t number = 0;
  uint64_t file_size = 0;
  std::string smallest;  // internal keys
  std::string largest;
  SequenceNumber smallest_seqno = 0;
  SequenceNumber largest_seqno = 0;
  bool being_compacted = false;
};

class VersionEdit {
 public:
  void SetComparatorName(const std::string& name) { comparator_ = name; }
  void SetLogNumber(uint64_t n) { log_number_ = n; }
  void SetNextFileNumber(uint64_t n) { next_file_number_ = n; }
  void SetLastSequence(SequenceNumber s) { last_sequence_ = s; }
  void DeleteFile(int level, uint64_t number) { deleted_files_.emplace(level, number); }
  void AddFile(int level, const FileMetaData& f) { new_files_.emplace_back(level, f); }

  const std::optional<std::string>& comparator() const { return comparator_; }
  const std::optional<uint64_t>& log_number() const { return log_number_; }
  const std::optional<uint64_t>& next_file_number() const { return next_file_number_; }
  const std::optional<SequenceNumber>& last_sequence() const { return last_sequence_; }
  const std::set<std::pair<int, uint64_t>>& deleted_files() const { return deleted_files_; }
  const std::vector<std::pair<int, FileMetaData>>& new_files() const { return new_files_; }

  void EncodeTo(std::string* dst) const;
  // Corruption on a malformed record or an unknown tag.
  [[nodiscard]] Status DecodeFrom(const Slice& src);
  std::string DebugString() const;

 private:
  std::optional<std::string> comparator_;
  std::optional<uint64_t> log_number_;
  std::optional<uint64_t> next_file_number_;
  std::optional<SequenceNumber> last_sequence_;
  std::set<std::pair<int, uint64_t>> deleted_files_;
  std::vector<std::pair<int, FileMetaData>> new_files_;
};

}  // namespace shale
