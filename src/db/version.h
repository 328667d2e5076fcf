// Version: an immutable snapshot of the table files of every level, and the read path over it.
//
//   L0      files may overlap; kept newest first (largest sequence, then file number).
//   L1..Ln  files are sorted by key and do not overlap; a user key's entries never span two
//           files of one level (compaction cuts outputs only between user keys).
// Versions are built by VersionBuilder (version_builder.h), which checks the levels, and
// installed by the VersionSet (version_set.h). They are shared (std::shared_ptr): the current
// one, SuperVersions, iterators and compactions hold them; a table file stays on disk while any
// live Version lists it.
//
// Ownership: shares the file metadata; borrows the comparator (the VersionSet's) and the
// TableCache (the DB's: DBImpl releases its Versions before its TableCache). Thread safety:
// immutable (except FileMetaData::being_compacted, which the DB mutex guards, and the range
// tombstones found once, under range_del_mu_) and safe to read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "src/base/dbformat.h"
#include "src/base/internal_iterator.h"
#include "src/base/range_tombstone.h"
#include "src/db/version_edit.h"
#include "src/util/mutex.h"

namespace shale {

class AsyncIo;
class GetContext;
struct MultiGetKey;
class TableCache;

using FileList = std::vector<std::shared_ptr<FileMetaData>>;

class Version {
 public:
  // No files on any of num_levels levels.
  Version(const InternalKeyComparator* icmp, TableCache* table_cache, int num_levels);
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  int num_levels() const { return static_cast<int>(files_.size()); }
  const FileList& files(int level) const { return files_[level]; }
  uint64_t NumLevelBytes(int level) const;

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
  // Appends the range tombstones of every file that has some (FileMetaData::num_range_deletions)
  // to *lists as one list, opening those tables. Found once per Version and kept; Corruption or
  // IOError from opening a table (not kept: a later call tries again).
  [[nodiscard]] Status AddRangeTombstones(RangeTombstoneLists* lists) const;
  // One iterator per L0 file and one concatenating iterator per deeper non-empty level; L0
  // files wholly outside options' iterator bounds are left out. With newest, appends for each
  // iterator the largest sequence of its files' entries (MergingIteratorOptions).
  void AddIterators(const ReadOptions& options,
                    std::vector<std::unique_ptr<InternalIterator>>* iters,
                    std::vector<SequenceNumber>* newest = nullptr) const;
  // Files of level whose user-key range meets [begin, end] (null: unbounded).
  FileList OverlappingInputs(int level, const Slice* begin, const Slice* end) const;
  // The newest L0 file whose key range holds user_key when another sorted run (an older L0
  // file, a deeper level) holds it too; null otherwise. What a seek landing on user_key charges
  // (read_compaction.h).
  const FileMetaData* L0FileOverlappingOtherRuns(const Slice& user_key) const;
  // True when no level below `level` holds user_key (deletions can then be dropped).
  bool KeyNotInLevelsBelow(int level, const Slice& user_key) const;
  // True when no level below `level` has a file whose range meets [start, end) (a range
  // tombstone over it then deletes nothing there).
  bool RangeNotInLevelsBelow(int level, const Slice& start, const Slice& end) const;
  // False when no table can hold key's user key: the filter of every table on its path rules
  // it out. Only readers already open are asked (nothing is read): a table whose reader is not
  // open may hold it.
  bool KeyMayExist(const LookupKey& key) const;
  // Approximate table bytes holding user keys in [start, limit): whole files inside, and for a
  // file the range cuts, the distance between the two keys' data blocks (its index says).
  // Opens the readers of those files. Corruption or IOError from opening one.
  [[nodiscard]] Status ApproximateSize(const Slice& start, const Slice& limit,
                                       uint64_t* size) const;

 private:
  friend class VersionBuilder;  // fills files_
  const InternalKeyComparator* const icmp_;
  TableCache* const table_cache_;
  std::vector<FileList> files_;
  mutable Mutex range_del_mu_;
  // AddRangeTombstones' list (the tables' tombstones fragmented together), once found.
  mutable std::shared_ptr<const RangeTombstoneLists> range_tombstones_ GUARDED_BY(range_del_mu_);
};

}  // namespace shale
