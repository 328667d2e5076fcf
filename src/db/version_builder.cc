#include "src/db/version_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace shale {

VersionBuilder::VersionBuilder(const Version& base)
    : icmp_(base.icmp_), table_cache_(base.table_cache_), num_levels_(base.num_levels()) {
  for (int level = 0; level < base.num_levels(); level++) {
    for (const auto& f : base.files(level)) levels_[level][f->number] = f;
  }
}

Status VersionBuilder::Apply(const VersionEdit& edit) {
  // Levels decode as < kMaxLevels; one at or past num_levels is the options' doing (the DB
  // was written with more levels), not damage.
  auto beyond = [this](int level) {
    return Status::InvalidArgument(
        fmt::format("Options::num_levels is {} but the DB has files at level {}: open with "
                    "num_levels >= {}",
                    num_levels_, level, level + 1));
  };
  for (const auto& [level, number] : edit.deleted_files()) {
    if (level >= num_levels_) return beyond(level);
    levels_[level].erase(number);
  }
  for (const auto& [level, meta] : edit.new_files()) {
    if (level >= num_levels_) return beyond(level);
    auto f = std::make_shared<FileMetaData>(meta);
    f->being_compacted = false;  // a moved file arrives with its old flags
    f->read_compaction_refused = false;
    // Added again without being deleted: two descriptions of one file, and no telling which
    // is right. (Another level's copy is caught by SaveTo.)
    if (!levels_[level].emplace(meta.number, std::move(f)).second) {
      return Status::Corruption(
          fmt::format("MANIFEST: file {} added to L{} twice", meta.number, level));
    }
  }
  return Status::OK();
}

Status VersionBuilder::SaveTo(std::shared_ptr<Version>* out) {
  auto v = std::make_shared<Version>(icmp_, table_cache_, num_levels_);
  std::set<uint64_t> seen;
  for (int level = 0; level < num_levels_; level++) {
    FileList& files = v->files_[level];
    Status s = CollectLevel(level, &seen, &files);
    if (!s.ok()) return s;
    SortLevel(level, &files);
    if (level > 0) {
      s = CheckDisjoint(level, files);
      if (!s.ok()) return s;
    }
  }
  // Invariant: in every Version a VersionBuilder hands out, each level below L0 is sorted by
  // smallest key and its files are disjoint (file i's largest user key < file i+1's smallest),
  // so no user key spans two files of a level; Version::Get, NextCandidate and the
  // LevelIterator binary-search on it. It is checked in every build, not only asserted:
  // CheckDisjoint answers a breach with Corruption, both for a damaged MANIFEST (Recover) and
  // for an edit of the engine's (LogAndApply), and the Version is not installed.
  *out = std::move(v);
  return Status::OK();
}

Status VersionBuilder::CollectLevel(int level, std::set<uint64_t>* seen, FileList* files) const {
  for (const auto& [number, f] : levels_[level]) {
    if (!seen->insert(number).second) {
      return Status::Corruption(fmt::format("MANIFEST: file {} listed twice", number));
    }
    files->push_back(f);
  }
  return Status::OK();
}

void VersionBuilder::SortLevel(int level, FileList* files) const {
  if (level == 0) {
    std::sort(files->begin(), files->end(), [](const auto& a, const auto& b) {
      if (a->largest_seqno != b->largest_seqno) return a->largest_seqno > b->largest_seqno;
      return a->number > b->number;
    });
  } else {
    std::sort(files->begin(), files->end(), [&](const auto& a, const auto& b) {
      return icmp_->Compare(a->smallest, b->smallest) < 0;
    });
  }
}

Status VersionBuilder::CheckDisjoint(int level, const FileList& files) const {
  const Comparator* ucmp = icmp_->user_comparator();
  for (size_t i = 1; i < files.size(); i++) {
    const Slice prev_largest = ExtractUserKey(files[i - 1]->largest);
    const Slice smallest = ExtractUserKey(files[i]->smallest);
    // A file ending in a range-deletion sentinel holds nothing of its user key, which the next
    // file may then start with.
    const int c = ucmp->Compare(prev_largest, smallest);
    if (c > 0 || (c == 0 && !IsRangeDeletionSentinel(files[i - 1]->largest))) {
      return Status::Corruption(fmt::format("MANIFEST: files {} and {} overlap in L{}",
                                            files[i - 1]->number, files[i]->number, level));
    }
  }
  return Status::OK();
}

}  // namespace shale
