#include "src/db/version_edit.h"

#include <fmt/format.h>

#include <set>

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
  kColumnFamily = 7,
  kColumnFamilyAdd = 8,
  kColumnFamilyDrop = 9,
  kMaxColumnFamily = 10,
  kNewFileWithRangeDeletions = 11,
};

// A level number from the MANIFEST must be one a DB can have.
constexpr uint32_t kMaxLevels = 64;

}  // namespace

void VersionEdit::EncodeTo(std::string* dst) const {
  if (column_family_ != 0) {
    PutVarint32(dst, kColumnFamily);
    PutVarint32(dst, column_family_);
  }
  EncodeFields(dst);
}

void VersionEdit::EncodeFields(std::string* dst) const {
  if (column_family_add_) {
    PutVarint32(dst, kColumnFamilyAdd);
    PutLengthPrefixedSlice(dst, *column_family_add_);
  }
  if (column_family_drop_) PutVarint32(dst, kColumnFamilyDrop);
  if (max_column_family_) {
    PutVarint32(dst, kMaxColumnFamily);
    PutVarint32(dst, *max_column_family_);
  }
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
    PutVarint32(dst, f.num_range_deletions > 0 ? kNewFileWithRangeDeletions : kNewFile);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, f.number);
    PutVarint64(dst, f.file_size);
    PutLengthPrefixedSlice(dst, f.smallest);
    PutLengthPrefixedSlice(dst, f.largest);
    PutVarint64(dst, f.smallest_seqno);
    PutVarint64(dst, f.largest_seqno);
    if (f.num_range_deletions > 0) PutVarint64(dst, f.num_range_deletions);
  }
}

std::string VersionEdit::EncodeRecord(const std::vector<const VersionEdit*>& edits) {
  std::string record, fields;
  for (size_t i = 0; i < edits.size(); i++) {
    fields.clear();
    edits[i]->EncodeFields(&fields);
    // The first section's default-family tag is left out, unless the section is empty and
    // another follows (it would then read as part of that one).
    if (i > 0 || edits[i]->column_family_ != 0 || (fields.empty() && edits.size() > 1)) {
      PutVarint32(&record, kColumnFamily);
      PutVarint32(&record, edits[i]->column_family_);
    }
    record += fields;
  }
  return record;
}

std::string VersionEdit::EncodeRecord(const std::vector<VersionEdit>& edits) {
  std::vector<const VersionEdit*> pointers;
  for (const VersionEdit& e : edits) pointers.push_back(&e);
  return EncodeRecord(pointers);
}

Status VersionEdit::DecodeFrom(const Slice& src) {
  std::vector<VersionEdit> edits;
  Status s = DecodeRecord(src, &edits);
  if (!s.ok()) return s;
  if (edits.size() != 1) {
    return Status::Corruption("VersionEdit", "a record of more than one column family");
  }
  *this = std::move(edits[0]);
  return Status::OK();
}

Status VersionEdit::DecodeRecord(const Slice& src, std::vector<VersionEdit>* edits) {
  edits->clear();
  Slice in = src;
  std::set<uint32_t> families;
  auto bad = [](const char* what) { return Status::Corruption("VersionEdit", what); };
  do {
    VersionEdit edit;
    Status s = edit.DecodeSection(&in);
    if (!s.ok()) return s;
    if (!families.insert(edit.column_family_).second) return bad("column family twice");
    if (edit.column_family_add_ && edit.column_family_drop_) {
      return bad("column family both added and dropped");
    }
    if (edit.column_family_ == 0 && (edit.column_family_add_ || edit.column_family_drop_)) {
      return bad("the default column family added or dropped");
    }
    edits->push_back(std::move(edit));
  } while (!in.empty());
  return Status::OK();
}

Status VersionEdit::DecodeSection(Slice* in_out) {
  *this = VersionEdit();
  Slice& in = *in_out;
  auto bad = [](const char* what) { return Status::Corruption("VersionEdit", what); };
  bool started = false;  // a field of this section was read
  while (!in.empty()) {
    Slice before = in;
    uint32_t tag;
    if (!GetVarint32(&in, &tag)) return bad("truncated tag");
    if (tag == kColumnFamily && started) {
      in = before;  // the next section's
      break;
    }
    started = true;
    switch (tag) {
      case kColumnFamily:
        if (!GetVarint32(&in, &column_family_)) return bad("column family");
        break;
      case kColumnFamilyAdd: {
        Slice name;
        if (!GetLengthPrefixedSlice(&in, &name)) return bad("column family name");
        column_family_add_ = name.ToString();
        break;
      }
      case kColumnFamilyDrop:
        column_family_drop_ = true;
        break;
      case kMaxColumnFamily: {
        uint32_t id;
        if (!GetVarint32(&in, &id)) return bad("max column family");
        max_column_family_ = id;
        break;
      }
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
      case kNewFile:
      case kNewFileWithRangeDeletions: {
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
        const bool range_dels = tag == kNewFileWithRangeDeletions;
        if (range_dels &&
            (!GetVarint64(&in, &f.num_range_deletions) || f.num_range_deletions == 0)) {
          return bad("new file's range deletions");
        }
        ParsedInternalKey p;
        const auto parse = range_dels ? &ParseBoundaryKey : &ParseInternalKey;
        if (!parse(smallest, &p) || !parse(largest, &p) || IsRangeDeletionSentinel(smallest)) {
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
  if (column_family_ != 0) s += fmt::format(" family: {}", column_family_);
  if (column_family_add_) s += " add_family: " + *column_family_add_;
  if (column_family_drop_) s += " drop_family";
  if (max_column_family_) s += fmt::format(" max_family: {}", *max_column_family_);
  if (comparator_) s += " comparator: " + *comparator_;
  if (log_number_) s += fmt::format(" log: {}", *log_number_);
  if (next_file_number_) s += fmt::format(" next_file: {}", *next_file_number_);
  if (last_sequence_) s += fmt::format(" last_seq: {}", *last_sequence_);
  for (const auto& [level, number] : deleted_files_)
    s += fmt::format(" delete L{}#{}", level, number);
  for (const auto& [level, f] : new_files_) {
    s += fmt::format(" add L{}#{}({} bytes, seq {}..{}", level, f.number, f.file_size,
                     f.smallest_seqno, f.largest_seqno);
    if (f.num_range_deletions > 0) s += fmt::format(", {} range deletions", f.num_range_deletions);
    s += ")";
  }
  return s + " }";
}

}  // namespace shale
