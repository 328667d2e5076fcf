// VersionBuilder: a base Version plus VersionEdits → a new Version, checked.
//
// The VersionSet builds every Version this way: LogAndApply applies one edit of the engine's to
// the current Version; Recover replays every edit of a MANIFEST onto an empty Version. Both get
// a Status for what the builder refuses: an edit it cannot apply, or a result that would break
// what Version promises (version.h), a file listed twice or files of a level below L0 that
// overlap. From Recover that is a damaged MANIFEST; from LogAndApply, an edit that should never
// have been made (a bug, or compaction inputs whose keys lie outside their recorded ranges).
//
// Ownership: shares the base Version's file metadata (a file's flag being_compacted is reset
// in the copies an edit adds); borrows its comparator and TableCache. Thread safety: one
// thread; the base Version is only read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "shale/status.h"
#include "src/base/dbformat.h"
#include "src/db/version.h"
#include "src/db/version_edit.h"

namespace shale {

class TableCache;

class VersionBuilder {
 public:
  explicit VersionBuilder(const Version& base);
  VersionBuilder(const VersionBuilder&) = delete;
  VersionBuilder& operator=(const VersionBuilder&) = delete;

  // Removes the edit's deleted files, then adds its new files. InvalidArgument for a level at or
  // past the base's num_levels (the DB was written with more levels: the options' doing, not
  // damage); Corruption for a file added to a level that already lists it.
  [[nodiscard]] Status Apply(const VersionEdit& edit);
  // The new Version: L0 newest first (largest sequence, then file number), each deeper level
  // sorted by smallest key. Corruption when a file is listed on two levels or two files of a
  // level below L0 overlap (share a user key); *out is then untouched.
  [[nodiscard]] Status SaveTo(std::shared_ptr<Version>* out);

 private:
  // Appends level's files to files; Corruption for a file already in seen (on another level).
  Status CollectLevel(int level, std::set<uint64_t>* seen, FileList* files) const;
  // Puts files in the order Version keeps for level.
  void SortLevel(int level, FileList* files) const;
  // Corruption naming the first two files of a sorted level below L0 that share a user key.
  Status CheckDisjoint(int level, const FileList& files) const;

  const InternalKeyComparator* const icmp_;
  TableCache* const table_cache_;
  const int num_levels_;
  std::map<uint64_t, std::shared_ptr<FileMetaData>> levels_[64];
};

}  // namespace shale
