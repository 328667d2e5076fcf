// VersionSet: which column families the DB holds, which table files make up each — its current
// Version (version.h) — and the MANIFEST that records every change to that.
//
// The VersionSet owns each live family's current Version and log number, the file number
// counter, the last sequence and the MANIFEST: a log (WAL record format) of records of
// VersionEdits (version_edit.h) whose first record is a full snapshot of every live family.
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
#include <functional>
#include <map>
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

// What the VersionSet builds one column family's Versions with. Borrowed: the DB keeps them
// alive longer than the family's Versions.
struct FamilyConfig {
  const Options* options = nullptr;  // the family's (num_levels, ...)
  const InternalKeyComparator* icmp = nullptr;
  TableCache* table_cache = nullptr;
};

// A live column family as the MANIFEST records it.
struct FamilyInfo {
  uint32_t id = 0;
  std::string name;
};

class VersionSet {
 public:
  // options: the DB's, and with icmp and table_cache the default family's (id 0), which every
  // DB has.
  VersionSet(std::string dbname, const Options* options, FileSystem* fs, TableCache* table_cache,
             const InternalKeyComparator* icmp, Directory* db_dir);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  ~VersionSet();

  // Writes the first MANIFEST and CURRENT of a new DB.
  [[nodiscard]] Status CreateNew();
  // Called by Recover for each live family other than the default one, with its id, name and
  // the comparator name it was created with; fills in the family's FamilyConfig, or returns
  // why the family cannot be opened.
  using FamilyResolver = std::function<Status(const FamilyInfo& family, FamilyConfig* config)>;
  // Reads CURRENT and replays the MANIFEST it names. Corruption for a damaged or inconsistent
  // MANIFEST/CURRENT (empty, no newline, missing MANIFEST, unknown tag, overlapping files below
  // L0, duplicate file numbers, records of families that were never created or were dropped,
  // a family id created twice); InvalidArgument for a family opened with another comparator
  // than it was created with; the resolver's error for a family it refuses.
  [[nodiscard]] Status Recover(const FamilyResolver& resolve = nullptr);
  // Applies each edit to the current Version of its family, makes them durable in the MANIFEST
  // as one record (all or none) and installs the results. Fills in the next file number and
  // last sequence. Corruption for an edit of a family that is not live or that adds or drops
  // one (CreateColumnFamily and DropColumnFamily do that).
  [[nodiscard]] Status LogAndApply(const std::vector<VersionEdit*>& edits);
  [[nodiscard]] Status LogAndApply(VersionEdit* edit) {
    return LogAndApply(std::vector<VersionEdit*>{edit});
  }
  // Records a new, empty family named name (the caller checked the name is free) whose data
  // starts in WAL log_number, and returns its id: one more than any id ever handed out.
  [[nodiscard]] Status CreateColumnFamily(const std::string& name, const FamilyConfig& config,
                                          uint64_t log_number, uint32_t* id);
  // Records that family id (live, not the default one) is dropped. Its Versions live on while
  // shared, and their files with them (AddLiveFiles).
  [[nodiscard]] Status DropColumnFamily(uint32_t id);
  // The live families, by id.
  std::vector<FamilyInfo> Families() const;
  bool HasFamily(uint32_t id) const { return families_.contains(id); }
  // What family id's Versions are built with (id live).
  const FamilyConfig& config(uint32_t id) const { return family(id).config; }
  // The largest family id ever handed out: ids up to it that are not live were dropped.
  uint32_t max_column_family() const { return max_column_family_; }

  // The current Version of the default family, or of family id (which must be live).
  std::shared_ptr<Version> current() const { return current(0); }
  std::shared_ptr<Version> current(uint32_t id) const { return family(id).current; }
  uint64_t NewFileNumber() { return next_file_number_++; }
  uint64_t next_file_number() const { return next_file_number_; }
  // Makes sure number is never handed out (it was found on disk).
  void MarkFileNumberUsed(uint64_t number) {
    if (next_file_number_ <= number) next_file_number_ = number + 1;
  }
  // WALs below this number hold nothing any live family still needs: the smallest of the
  // families' log numbers.
  uint64_t log_number() const;
  // Family id's data in WALs below this number is in its tables.
  uint64_t log_number(uint32_t id) const { return family(id).log_number; }
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

  // The default family's comparator and options.
  const InternalKeyComparator* icmp() const { return family(0).config.icmp; }
  const Options& options() const { return *options_; }

  // The names of the live families recorded by the MANIFEST that dbname's CURRENT names
  // (Recover's checks of the records, without the families' files).
  [[nodiscard]] static Status ListColumnFamilies(FileSystem* fs, const std::string& dbname,
                                                 std::vector<std::string>* names);

 private:
  struct Family {
    std::string name;
    FamilyConfig config;
    std::shared_ptr<Version> current;
    uint64_t log_number = 0;
  };
  // A MANIFEST's records replayed as far as the family set goes (version_set.cc).
  struct ManifestState;
  [[nodiscard]] static Status ReadManifest(FileSystem* fs, const std::string& dbname,
                                           ManifestState* state);

  const Family& family(uint32_t id) const {
    auto it = families_.find(id);
    SHALE_ASSERT(it != families_.end());
    return it->second;
  }
  // Writes edits as one record (or, when there is no MANIFEST to append to or it is full, a
  // new MANIFEST snapshotting families_ with next applied); on success makes next current.
  // next: per family id, the state after the edits (absent: dropped by them).
  [[nodiscard]] Status Commit(const std::vector<VersionEdit*>& edits,
                              std::map<uint32_t, Family> next);
  // Writes a new MANIFEST holding the state of families and points CURRENT at it.
  [[nodiscard]] Status StartNewManifest(const std::map<uint32_t, Family>& families);
  [[nodiscard]] Status SetCurrentFile(uint64_t manifest_number);
  void TrackLive(const std::shared_ptr<Version>& v);
  std::vector<VersionEdit> SnapshotEdits(const std::map<uint32_t, Family>& families) const;

  const std::string dbname_;
  const Options* const options_;
  FileSystem* const fs_;
  Directory* const db_dir_;

  std::map<uint32_t, Family> families_;  // the live ones; always holds 0
  uint32_t max_column_family_ = 0;
  std::vector<std::weak_ptr<Version>> live_;  // every Version ever installed that may live
  uint64_t next_file_number_ = 2;
  SequenceNumber last_sequence_ = 0;
  uint64_t manifest_file_number_ = 0;
  std::unique_ptr<log::Writer> manifest_;
  // New files of edits whose MANIFEST write failed, until a write succeeds (see above).
  std::set<uint64_t> unresolved_files_;
};

}  // namespace shale
