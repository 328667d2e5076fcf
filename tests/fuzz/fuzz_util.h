// Helpers shared by the fuzz targets and make_seeds: in-memory files over std::string, log files
// built from records, the abort-with-a-message used when an invariant breaks, and the
// VersionEdit round-trip check.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shale/file_system.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "src/db/version_edit.h"
#include "wal/log_writer.h"

namespace shale::fuzz {

// Reports a broken invariant and aborts, so libFuzzer records the input as a crash.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// A SequentialFile reading a copy of a string, with a short read now and then, as a file system
// may return. Ownership: owns its bytes. Thread safety: one thread.
class StringSequentialFile final : public SequentialFile {
 public:
  explicit StringSequentialFile(std::string data) : data_(std::move(data)) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    n = std::min(n, data_.size() - pos_);
    if (n > 1 && (pos_ % 3) == 1) n = n / 2;
    if (n > 0) std::memcpy(scratch, data_.data() + pos_, n);
    pos_ += n;
    *result = Slice(scratch, n);
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ += static_cast<size_t>(std::min<uint64_t>(n, data_.size() - pos_));
    return Status::OK();
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// A WritableFile appending to a string it owns (data). Thread safety: one thread.
class StringWritableFile final : public WritableFile {
 public:
  Status Append(const Slice& d) override {
    data.append(d.data(), d.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  uint64_t GetFileSize() const override { return data.size(); }

  std::string data;
};

// A log file (WAL or MANIFEST format) holding records, written by log::Writer.
inline std::string LogFileOf(const std::vector<std::string>& records) {
  auto sink = std::make_unique<StringWritableFile>();
  StringWritableFile* file = sink.get();
  log::Writer writer(std::move(sink));
  for (const std::string& r : records) {
    if (!writer.AddRecord(r).ok()) Fail("log::Writer::AddRecord failed");
  }
  return file->data;
}

// True when a and b hold the same fields with the same values.
inline bool SameEdit(const VersionEdit& a, const VersionEdit& b) {
  if (a.column_family() != b.column_family() || a.column_family_add() != b.column_family_add() ||
      a.column_family_drop() != b.column_family_drop() ||
      a.max_column_family() != b.max_column_family() || a.comparator() != b.comparator() ||
      a.log_number() != b.log_number() || a.next_file_number() != b.next_file_number() ||
      a.last_sequence() != b.last_sequence() || a.deleted_files() != b.deleted_files() ||
      a.new_files().size() != b.new_files().size()) {
    return false;
  }
  for (size_t i = 0; i < a.new_files().size(); i++) {
    const auto& [la, fa] = a.new_files()[i];
    const auto& [lb, fb] = b.new_files()[i];
    if (la != lb || fa.number != fb.number || fa.file_size != fb.file_size ||
        fa.smallest != fb.smallest || fa.largest != fb.largest ||
        fa.smallest_seqno != fb.smallest_seqno || fa.largest_seqno != fb.largest_seqno) {
      return false;
    }
  }
  return true;
}

// Decodes record as a MANIFEST record (one VersionEdit per column family). Malformed bytes must
// be Corruption. A record that decodes must survive EncodeRecord: the encoding decodes to the
// same edits and re-encodes to the same bytes, and is never longer than the record (repeated
// fields collapse, over-long varints shrink, the first section's default-family tag goes).
// Returns whether the record decoded.
inline bool CheckVersionEditRoundTrip(const Slice& record) {
  std::vector<VersionEdit> edits;
  Status s = VersionEdit::DecodeRecord(record, &edits);
  if (!s.ok()) {
    if (!s.IsCorruption()) Fail("VersionEdit::DecodeRecord failed with " + s.ToString());
    return false;
  }
  auto debug = [](const std::vector<VersionEdit>& e) {
    std::string out;
    for (const VersionEdit& x : e) out += x.DebugString();
    return out;
  };
  const std::string encoded = VersionEdit::EncodeRecord(edits);
  if (encoded.size() > record.size()) {
    Fail("VersionEdit encoding grew from " + std::to_string(record.size()) + " to " +
         std::to_string(encoded.size()) + " bytes: " + debug(edits));
  }
  std::vector<VersionEdit> again;
  s = VersionEdit::DecodeRecord(encoded, &again);
  if (!s.ok()) {
    Fail("re-encoded VersionEdit does not decode: " + s.ToString() + " for " + debug(edits));
  }
  bool same = again.size() == edits.size();
  for (size_t i = 0; same && i < edits.size(); i++) same = SameEdit(edits[i], again[i]);
  if (!same) Fail("VersionEdit changed in a round trip: " + debug(edits) + " vs " + debug(again));
  if (VersionEdit::EncodeRecord(again) != encoded) {
    Fail("VersionEdit encoding is not stable: " + debug(edits));
  }
  // One section is what DecodeFrom takes.
  VersionEdit single;
  if (single.DecodeFrom(record).ok() != (edits.size() == 1)) {
    Fail("DecodeFrom and DecodeRecord disagree on " + debug(edits));
  }
  return true;
}

}  // namespace shale::fuzz
