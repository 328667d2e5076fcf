#include "src/db/builder.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "src/base/filename.h"
#include "src/db/compaction.h"
#include "src/db/range_tombstone_output.h"
#include "src/env/rate_limited_file.h"
#include "src/util/invariants.h"

namespace shale {

namespace {

// One entry of the user key being gathered, as the memtable holds it.
struct RawEntry {
  Slice key, value;
  ParsedInternalKey parsed;
};

}  // namespace

Status BuildTable(const std::string& dbname, FileSystem* fs, const FileOptions& file_options,
                  const TableBuilderOptions& options, InternalIterator* iter, FileMetaData* meta,
                  const FlushFilter* filter, RateLimiter* limiter, Statistics* stats,
                  const FragmentedRangeTombstoneList* tombstones) {
  meta->file_size = 0;
  if (tombstones != nullptr && tombstones->empty()) tombstones = nullptr;
  iter->SeekToFirst();
  if (!iter->Valid() && (tombstones == nullptr || !iter->status().ok())) return iter->status();
  const std::string name = TableFileName(dbname, meta->number);
  std::unique_ptr<WritableFile> file;
  Status s = fs->NewWritableFile(name, file_options, &file);
  if (!s.ok()) return s;
  file = RateLimitedWritableFile::Wrap(std::move(file), limiter, IOPriority::kHigh, stats);
  TableBuilder builder(options, file.get());
  auto add = [&](const Slice& key, const Slice& value) {
    if (meta->smallest.empty()) meta->smallest = key.ToString();
    s = builder.Add(key, value);
    if (s.ok()) meta->largest.assign(key.data(), key.size());
  };
  if (filter == nullptr) {
    for (; iter->Valid() && s.ok(); iter->Next()) add(iter->key(), iter->value());
  } else {
    // Each user key's entries (newest first) are gathered and decided together; a key written
    // once (the common case) passes as it is.
    const Comparator* ucmp = options.comparator->user_comparator();
    std::vector<RawEntry> group;
    std::vector<KeyEntry> entries, survivors;
    auto decide = [&] {
      const bool merges = std::any_of(group.begin(), group.end(), [](const RawEntry& e) {
        return e.parsed.type == kTypeMerge;
      });
      const bool single_deletes = std::any_of(group.begin(), group.end(), [](const RawEntry& e) {
        return e.parsed.type == kTypeSingleDeletion;
      });
      if (group.size() == 1 || merges) {
        // Merge operands are left for compactions to merge.
        for (const RawEntry& e : group) {
          if (s.ok()) add(e.key, e.value);
        }
      } else if (filter->snapshots->empty() && !single_deletes) {
        add(group[0].key, group[0].value);  // the newest value or deletion hides the rest
      } else {
        entries.clear();
        for (const RawEntry& e : group) {
          entries.push_back(
              KeyEntry{e.key.ToString(), e.value.ToString(), e.parsed.sequence, e.parsed.type});
        }
        survivors.clear();
        CompactKeyEntries(
            group[0].parsed.user_key, &entries, *filter->snapshots, [] { return false; }, nullptr,
            stats, &survivors);
        for (const KeyEntry& e : survivors) {
          if (s.ok()) add(e.internal_key, e.value);
        }
      }
      group.clear();
    };
    for (; iter->Valid() && s.ok(); iter->Next()) {
      RawEntry e{iter->key(), iter->value(), {}};
      if (!ParseInternalKey(e.key, &e.parsed)) {
        s = Status::Corruption("a memtable being flushed holds a malformed key");
        break;
      }
      if (!group.empty() && ucmp->Compare(e.parsed.user_key, group[0].parsed.user_key) != 0) {
        decide();
      }
      group.push_back(e);
    }
    if (s.ok() && !group.empty()) decide();
  }
  if (s.ok()) s = iter->status();
  if (s.ok() && tombstones != nullptr) {
    AddRangeTombstones(*tombstones, *options.comparator, nullptr, nullptr, &builder,
                       &meta->smallest, &meta->largest, &s);
  }
  if (s.ok() && meta->smallest.empty()) {
    // Every entry was dropped (single deletions that met their values): no table.
    builder.Abandon();
    file.reset();
    // A file left behind is obsolete: DeleteObsoleteFiles removes it.
    fs->DeleteFile(name).PermitUncheckedError();
    return Status::OK();
  }
  if (s.ok()) s = builder.Finish();
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (!s.ok()) {
    builder.Abandon();
    file.reset();
    fs->DeleteFile(name).PermitUncheckedError();
    return s;
  }
  meta->file_size = builder.FileSize();
  meta->smallest_seqno = builder.properties().smallest_seqno;
  meta->largest_seqno = builder.properties().largest_seqno;
  meta->num_range_deletions = builder.properties().num_range_deletions;
  return Status::OK();
}

}  // namespace shale
