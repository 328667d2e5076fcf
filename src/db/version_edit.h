// VersionEdit: one change to the table files of one column family, as recorded in the MANIFEST.
// One MANIFEST record holds the edits of one or more families, applied together or not at all.
//
//   record  := section+          one section per family; no family twice
//   section := [kColumnFamily id] field*
//              the tag may be left out only by the record's first section, which is then the
//              default family's (id 0); every later section starts with it, and so does an
//              empty first section that another follows
//   field   := tag:varint32 payload
//     kComparator       (1): name:varstring      the family's user comparator
//     kLogNumber        (2): number:varint64     the family's data in WALs below this number is
//                                                in its tables
//     kNextFileNumber   (3): number:varint64     (DB-wide)
//     kLastSequence     (4): sequence:varint64   (DB-wide)
//     kDeletedFile      (5): level:varint32 number:varint64
//     kNewFile          (6): level:varint32 number:varint64 size:varint64
//                            smallest:varstring largest:varstring        (internal keys)
//                            smallest_seqno:varint64 largest_seqno:varint64
//     kColumnFamily     (7): id:varint32         starts the section of family id
//     kColumnFamilyAdd  (8): name:varstring      the family is created (never the default one)
//     kColumnFamilyDrop (9): (empty)             the family is dropped; its id is never reused
//     kMaxColumnFamily (10): id:varint32         the largest family id handed out (DB-wide)
//     kNewFileWithRangeDeletions (11): as kNewFile, then num_range_deletions:varint64 (> 0);
//                            smallest and largest may be range-tombstone bounds (ParseBoundaryKey)
// A file with range tombstones is always written with tag 11, which older versions refuse.
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
#include "src/db/file_meta_data.h"

namespace shale {

class VersionEdit {
 public:
  // The family the edit changes (default: 0, the default family).
  void SetColumnFamily(uint32_t id) { column_family_ = id; }
  // The edit creates the family, named name.
  void AddColumnFamily(const std::string& name) { column_family_add_ = name; }
  // The edit drops the family.
  void DropColumnFamily() { column_family_drop_ = true; }
  void SetMaxColumnFamily(uint32_t id) { max_column_family_ = id; }
  void SetComparatorName(const std::string& name) { comparator_ = name; }
  void SetLogNumber(uint64_t n) { log_number_ = n; }
  void SetNextFileNumber(uint64_t n) { next_file_number_ = n; }
  void SetLastSequence(SequenceNumber s) { last_sequence_ = s; }
  void DeleteFile(int level, uint64_t number) { deleted_files_.emplace(level, number); }
  void AddFile(int level, const FileMetaData& f) { new_files_.emplace_back(level, f); }

  uint32_t column_family() const { return column_family_; }
  const std::optional<std::string>& column_family_add() const { return column_family_add_; }
  bool column_family_drop() const { return column_family_drop_; }
  const std::optional<uint32_t>& max_column_family() const { return max_column_family_; }
  const std::optional<std::string>& comparator() const { return comparator_; }
  const std::optional<uint64_t>& log_number() const { return log_number_; }
  const std::optional<uint64_t>& next_file_number() const { return next_file_number_; }
  const std::optional<SequenceNumber>& last_sequence() const { return last_sequence_; }
  const std::set<std::pair<int, uint64_t>>& deleted_files() const { return deleted_files_; }
  const std::vector<std::pair<int, FileMetaData>>& new_files() const { return new_files_; }

  // Appends the edit as a record of one section.
  void EncodeTo(std::string* dst) const;
  // A record of exactly one section. Corruption on a malformed record, an unknown tag or more
  // than one section.
  [[nodiscard]] Status DecodeFrom(const Slice& src);
  std::string DebugString() const;

  // A record of the given edits, one section each (their families distinct).
  static std::string EncodeRecord(const std::vector<const VersionEdit*>& edits);
  static std::string EncodeRecord(const std::vector<VersionEdit>& edits);
  // A record's sections, in order. Corruption on a malformed record, an unknown tag, a family
  // with two sections, a section that both adds and drops its family, or one that adds the
  // default family.
  [[nodiscard]] static Status DecodeRecord(const Slice& src, std::vector<VersionEdit>* edits);

 private:
  // The section's fields without its family tag.
  void EncodeFields(std::string* dst) const;
  // Decodes fields from *in into this edit up to the next kColumnFamily tag (left in *in) or
  // the end.
  [[nodiscard]] Status DecodeSection(Slice* in);

  uint32_t column_family_ = 0;
  std::optional<std::string> column_family_add_;
  bool column_family_drop_ = false;
  std::optional<uint32_t> max_column_family_;
  std::optional<std::string> comparator_;
  std::optional<uint64_t> log_number_;
  std::optional<uint64_t> next_file_number_;
  std::optional<SequenceNumber> last_sequence_;
  std::set<std::pair<int, uint64_t>> deleted_files_;
  std::vector<std::pair<int, FileMetaData>> new_files_;
};

}  // namespace shale
