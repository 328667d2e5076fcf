// VersionSet: which table files make up the DB — the current Version (version.h) — and the
// MANIFEST that records every change to that.
//
// The VersionSet owns the current Version, the file number counter, the last sequence and the
// MANIFEST: a log (WAL record format) of VersionEdits whose first record is a full snapshot.
// CURRENT names the live MANIFEST and is replaced atomically (temp file, fsync, rename, fsync
// directory). LogAndApply appends one edit, syncs it, and only then installs the new Version
// (built by VersionBuilder, version_builder.h); after a failed MANIFEST write the next
// LogAndApply starts a new MANIFEST. A MANIFEST larger than Options::max_manifest_file_size is
// rolled over the same way.
//
// A failed MANIFEST write has an unknown outcome: the record (or a new MANIFEST that CURRENT
// was renamed to name) may be durable although the Version was not installed. The new files
// of such an edit stay "unresolved" and count as live (AddLiveFiles) until a later
// LogAndApply succeeds; that one necessarily wrote a fresh MANIFEST from the installed state
// and made CURRENT name it, so from then on no durable MANIFEST can name them.
//
// Thread safety: VersionSet methods require the DB mutex unless noted; LogAndApply holds it
// throughout, including the MANIFEST sync. The Versions it hands out are immutable (version.h).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "shale/file_system.h"
#include "shale/options.h"
#include "shale/status.h"
#include "src/base/dbformat.h"
#include "src/db/version.h"
#include "src/db/version_edit.h"
#include "src/util/invariants.h"
#include "wal/log_writer.h"

namespace shale {

class TableCache;

class VersionSet {
 public:
  VersionSet(std::string dbname, const Options* options, FileSystem* fs, TableCache* table_cache,
             const InternalKeyComparator* icmp, Directory* db_dir);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  ~VersionSet();

  // Writes the first MANIFEST and CURRENT of a new DB.
  [[nodiscard]] Status CreateNew();
  // Reads CURRENT and replays the MANIFEST it names. Corruption for a damaged or inconsistent
  // MANIFEST/CURRENT (empty, no newline, missing MANIFEST, unknown tag, overlapping files below
  // L0, duplicate file numbers); InvalidArgument for another comparator.
  [[nodiscard]] Status Recover();
  // Applies edit to the current Version, makes it durable in the MANIFEST and installs the
  // result. Fills in the edit's next file number and last sequence.
  [[nodiscard]] Status LogAndApply(VersionEdit* edit);

  std::shared_ptr<Version> current() const { return current_; }
  uint64_t NewFileNumber() { return next_file_number_++; }
  uint64_t next_file_number() const { return next_file_number_; }
  // Makes sure number is never handed out (it was found on disk).
  void MarkFileNumberUsed(uint64_t number) {
    if (next_file_number_ <= number) next_file_number_ = number + 1;
  }
  uint64_t log_number() const { return log_number_; }
  SequenceNumber last_sequence() const { return last_sequence_; }
  // Invariant: the last sequence never goes backwards. The DB sets it to the max of it and the
  // sequence the DB has reached (a flush before logging its edit, recovery after replaying the
  // WALs). A lower one would let the MANIFEST record a last sequence below entries already in
  // table files, and a reopen hand their sequence numbers out again.
  void SetLastSequence(SequenceNumber s) {
    SHALE_ASSERT(s >= last_sequence_);
    last_sequence_ = s;
  }
  uint64_t manifest_file_number() const { return manifest_file_number_; }

  // Every table file number some live Version lists or a failed edit may have made durable
  // (plus pending outputs the caller adds).
  void AddLiveFiles(std::set<uint64_t>* live);

  const InternalKeyComparator* icmp() const { return icmp_; }
  const Options& options() const { return *options_; }

 private:
  // Writes a new MANIFEST holding the current state and points CURRENT at it.
  [[nodiscard]] Status StartNewManifest(const Version& v);
  [[nodiscard]] Status SetCurrentFile(uint64_t manifest_number);
  void Install(std::shared_ptr<Version> v);
  void SnapshotEdit(const Version& v, VersionEdit* edit) const;

  const std::string dbname_;
  const Options* const options_;
  FileSystem* const fs_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  Directory* const db_dir_;

  std::shared_ptr<Version> current_;
  std::vector<std::weak_ptr<Version>> live_;  // every Version ever installed that may live
  uint64_t next_file_number_ = 2;
  uint64_t log_number_ = 0;
  SequenceNumber last_sequence_ = 0;
  uint64_t manifest_file_number_ = 0;
  std::unique_ptr<log::Writer> manifest_;
  // New files of edits whose MANIFEST write failed, until a write succeeds (see above).
  std::set<uint64_t> unresolved_files_;
};

}  // namespace shale
