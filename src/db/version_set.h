// Version and VersionSet: which table files make up the DB, level by level, and the MANIFEST
// that records every change to that.
//
// A Version is an immutable snapshot of the files of every level:
//   L0      files may overlap; kept newest first (largest sequence, then file number).
//   L1..Ln  files are sorted by key and do not overlap; a user key's entries never span two
//           files of one level (compaction cuts outputs only between user keys).
// Versions are shared (std::shared_ptr): the current one, SuperVersions, iterators and
// compactions hold them; a table file stays on disk while any live Version lists it.
//
// The VersionSet owns the current Version, the file number counter, the last sequence and the
// MANIFEST: a log (WAL record format) of VersionEdits whose first record is a full snapshot.
// CURRENT names the live MANIFEST and is replaced atomically (temp file, fsync, rename, fsync
// directory). LogAndApply appends one edit, syncs it, and only then installs the new Version;
// after a failed MANIFEST write the next LogAndApply starts a new MANIFEST. A MANIFEST larger
// than Options::max_manifest_file_size is rolled over the same way.
//
// A failed MANIFEST write has an unknown outcome: the record (or a new MANIFEST that CURRENT
// was renamed to name) may be durable although the Version was not installed. The new files
// of such an edit stay "unresolved" and count as live (AddLiveFiles) until a later
// LogAndApply succeeds; that one necessarily wrote a fresh MANIFEST from the installed state
// and made CURRENT name it, so from then on no durable MANIFEST can name them.
//
// Thread safety: Versions are immutable (except FileMetaData::being_compacted, which the DB
// mutex guards) and safe to read from any thread. VersionSet methods require the DB mutex
// unless noted; LogAndApply holds it throughout, including the MANIFEST sync.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "shale/file_system.h"
#include "shale/options.h"
#include "src/base/dbformat.h"
#include "src/base/get_context.h"
#include "src/base/internal_iterator.h"
#include "src/db/version_edit.h"
#include "wal/log_writer.h"

namespace shale {

class AsyncIo;
struct MultiGetKey;

class TableCache;
class VersionSet;

using FileList = std::vector<std::shared_ptr<FileMetaData>>;

class Version {
 public:
  Version(const VersionSet* vset, int num_levels);
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  int num_levels() const { return static_cast<int>(files_.size()); }
  const FileList& files(int level) const { return files_[level]; }
  uint64_t NumLevelBytes(int level) const;
  uint64_t NumFiles() const;

  // Feeds ctx the key's entries from the table files: L0 newest first, then one file per
  // deeper level, until ctx has its answer. OK also when nothing was found.
  [[nodiscard]] Status Get(const ReadOptions& options, const LookupKey& key, GetContext* ctx) const;
  // Looks up keys[0..n) (sorted by user key, none done) in rounds.
  // Each round places every unresolved key at the next file on its path (L0 files newest
  // first, then the one file per deeper level whose range holds it) whose filter may hold it,
  // then looks the keys up file by file with TableReader::MultiGet. Keys on different levels
  // are read in the same round, so with io one round's block reads all go out together;
  // keys found to need an older file (filter false positive, merge operands) go on in the
  // next round. Errors go to the keys' statuses.
  void MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n, AsyncIo* io) const;
  // Advances k's path through the tree to the next file whose key range holds k's user key
  // (null: none left).
  const FileMetaData* NextCandidate(MultiGetKey* k) const;
  // One iterator per L0 file and one concatenating iterator per deeper non-empty level.
  void AddIterators(const ReadOptions& options,
                    std::vector<std::unique_ptr<InternalIterator>>* iters) const;
  // Files of level whose user-key range meets [begin, end] (null: unbounded).
  FileList OverlappingInputs(int level, const Slice* begin, const Slice* end) const;
  // True when no level below `level` holds user_key (deletions can then be dropped).
  bool KeyNotInLevelsBelow(int level, const Slice& user_key) const;
  // "L0: 3 files 12 MB ..." one line per level.
  std::string LevelSummary() const;

 private:
  friend class VersionSet;
  friend class VersionBuilder;
  const VersionSet* const vset_;
  std::vector<FileList> files_;
};

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
  void SetLastSequence(SequenceNumber s) { last_sequence_ = s; }
  uint64_t manifest_file_number() const { return manifest_file_number_; }

  // Every table file number some live Version lists or a failed edit may have made durable
  // (plus pending outputs the caller adds).
  void AddLiveFiles(std::set<uint64_t>* live);

  const InternalKeyComparator* icmp() const { return icmp_; }
  const Options& options() const { return *options_; }
  TableCache* table_cache() const { return table_cache_; }
  // Target bytes for a level (L1+), from max_bytes_for_level_base and the multiplier.
  uint64_t MaxBytesForLevel(int level) const;

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
