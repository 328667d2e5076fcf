#include "src/db/version_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "src/base/async_read.h"
#include "src/base/filename.h"
#include "src/base/multi_get.h"
#include "src/db/level_iterator.h"
#include "src/db/table_cache.h"
#include "wal/log_reader.h"

namespace shale {

// ---- Version ----

Version::Version(const VersionSet* vset, int num_levels) : vset_(vset), files_(num_levels) {}

uint64_t Version::NumLevelBytes(int level) const {
  uint64_t sum = 0;
  for (const auto& f : files_[level]) sum += f->file_size;
  return sum;
}

uint64_t Version::NumFiles() const {
  uint64_t n = 0;
  for (const auto& level : files_) n += level.size();
  return n;
}

Status Version::Get(const ReadOptions& options, const LookupKey& key, GetContext* ctx) const {
  const Comparator* ucmp = vset_->icmp()->user_comparator();
  const InternalKeyComparator* icmp = vset_->icmp();
  const Slice user_key = key.user_key();
  const Slice ikey = key.internal_key();
  TableCache* tc = vset_->table_cache();
  for (const auto& f : files_[0]) {
    if (ucmp->Compare(user_key, ExtractUserKey(f->smallest)) < 0 ||
        ucmp->Compare(user_key, ExtractUserKey(f->largest)) > 0) {
      continue;
    }
    Status s = tc->Get(options, f->number, f->file_size, ikey, ctx);
    if (!s.ok()) return s;
    if (ctx->resolved()) return Status::OK();
  }
  for (int level = 1; level < num_levels(); level++) {
    const FileList& files = files_[level];
    if (files.empty()) continue;
    // The first file whose largest key is >= ikey.
    auto it = std::partition_point(files.begin(), files.end(), [&](const auto& f) {
      return icmp->Compare(f->largest, ikey) < 0;
    });
    if (it == files.end()) continue;
    const FileMetaData& f = **it;
    if (ucmp->Compare(user_key, ExtractUserKey(f.smallest)) < 0) continue;
    Status s = tc->Get(options, f.number, f.file_size, ikey, ctx);
    if (!s.ok()) return s;
    if (ctx->resolved()) return Status::OK();
  }
  return Status::OK();
}

const FileMetaData* Version::NextCandidate(MultiGetKey* k) const {
  const Comparator* ucmp = vset_->icmp()->user_comparator();
  const Slice uk = k->lkey.user_key();
  while (k->level < num_levels()) {
    if (k->level == 0) {
      const FileList& l0 = files_[0];
      while (k->l0_index < l0.size()) {
        const FileMetaData* f = l0[k->l0_index++].get();
        if (ucmp->Compare(uk, ExtractUserKey(f->smallest)) >= 0 &&
            ucmp->Compare(uk, ExtractUserKey(f->largest)) <= 0) {
          return f;
        }
      }
      k->level = 1;
      continue;
    }
    const FileList& files = files_[k->level++];
    const Slice ikey = k->lkey.internal_key();
    auto it = std::partition_point(files.begin(), files.end(), [&](const auto& f) {
      return vset_->icmp()->Compare(f->largest, ikey) < 0;
    });
    if (it != files.end() && ucmp->Compare(uk, ExtractUserKey((*it)->smallest)) >= 0) {
      return it->get();
    }
  }
  return nullptr;
}

void Version::MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n,
                       AsyncIo* io) const {
  TableCache* tc = vset_->table_cache();
  // The tables this batch touches, open (and so alive for the reads in flight) until the end.
  struct OpenTable {
    const FileMetaData* file;
    Cache::Handle* handle;
    Status status;
  };
  std::vector<OpenTable> open;
  auto table_of = [&](const FileMetaData* f) -> size_t {
    for (size_t i = 0; i < open.size(); i++) {
      if (open[i].file == f) return i;
    }
    OpenTable t{f, nullptr, Status()};
    t.status = tc->FindTable(f->number, f->file_size, &t.handle);
    open.push_back(t);
    return open.size() - 1;
  };
  auto reader = [&](size_t i) { return tc->GetReader(open[i].handle); };

  for (size_t i = 0; i < n; i++) keys[i]->position = i;
  std::vector<MultiGetKey*> unplaced, next;
  std::vector<std::pair<size_t, size_t>> placed;  // (table, key position in the batch)
  std::vector<MultiGetKey*> group;
  while (true) {
    unplaced.clear();
    for (size_t i = 0; i < n; i++) {
      if (!keys[i]->done() && !keys[i]->exhausted) unplaced.push_back(keys[i]);
    }
    // Place every key at the next file whose filter may hold it. Filter probes need no IO, so
    // a key whose entries sit deep in the tree is placed there in this round: the reads of
    // all levels go out together instead of one level after another.
    placed.clear();
    while (!unplaced.empty()) {
      for (MultiGetKey* k : unplaced) {
        const FileMetaData* f = NextCandidate(k);
        if (f == nullptr) {
          k->exhausted = true;
          continue;
        }
        k->table = table_of(f);
        if (open[k->table].status.ok()) reader(k->table)->PrefetchFilter(k->hash);
      }
      next.clear();
      for (MultiGetKey* k : unplaced) {
        if (k->exhausted) continue;
        const OpenTable& t = open[k->table];
        if (!t.status.ok()) {
          k->status = t.status;
        } else if (reader(k->table)->FilterMayMatch(k->hash)) {
          placed.emplace_back(k->table, k->position);
        } else {
          next.push_back(k);
        }
      }
      unplaced.swap(next);
    }
    if (placed.empty()) break;
    // One TableReader::MultiGet per file, its keys in batch (sorted) order.
    std::sort(placed.begin(), placed.end());
    for (size_t i = 0; i < placed.size();) {
      size_t j = i;
      group.clear();
      for (; j < placed.size() && placed[j].first == placed[i].first; j++) {
        group.push_back(keys[placed[j].second]);
      }
      reader(placed[i].first)
          ->MultiGet(options, group.data(), group.size(), io,
                     /*filter_checked=*/true);
      // This file's reads go out while the next file's keys are placed in blocks.
      if (io != nullptr) io->Flush();
      i = j;
    }
    if (io != nullptr) io->RunUntilDone();
  }
  for (const OpenTable& t : open) {
    if (t.status.ok()) tc->Release(t.handle);
  }
}

void Version::AddIterators(const ReadOptions& options,
                           std::vector<std::unique_ptr<InternalIterator>>* iters) const {
  TableCache* tc = vset_->table_cache();
  for (const auto& f : files_[0])
    iters->push_back(tc->NewIterator(options, f->number, f->file_size));
  for (int level = 1; level < num_levels(); level++) {
    if (files_[level].empty()) continue;
    iters->push_back(NewLevelIterator(tc, options, vset_->icmp(), files_[level]));
  }
}

FileList Version::OverlappingInputs(int level, const Slice* begin, const Slice* end) const {
  const Comparator* ucmp = vset_->icmp()->user_comparator();
  FileList out;
  for (const auto& f : files_[level]) {
    if (begin != nullptr && ucmp->Compare(ExtractUserKey(f->largest), *begin) < 0) continue;
    if (end != nullptr && ucmp->Compare(ExtractUserKey(f->smallest), *end) > 0) continue;
    out.push_back(f);
  }
  return out;
}

bool Version::KeyNotInLevelsBelow(int level, const Slice& user_key) const {
  const Comparator* ucmp = vset_->icmp()->user_comparator();
  for (int l = level + 1; l < num_levels(); l++) {
    for (const auto& f : files_[l]) {
      if (ucmp->Compare(user_key, ExtractUserKey(f->smallest)) >= 0 &&
          ucmp->Compare(user_key, ExtractUserKey(f->largest)) <= 0) {
        return false;
      }
    }
  }
  return true;
}

std::string Version::LevelSummary() const {
  std::string out;
  for (int level = 0; level < num_levels(); level++) {
    if (files_[level].empty()) continue;
    out +=
        fmt::format("L{}: {} files, {} bytes\n", level, files_[level].size(), NumLevelBytes(level));
  }
  return out;
}

// ---- VersionBuilder: a base Version plus edits → a new Version ----

class VersionBuilder {
 public:
  VersionBuilder(const VersionSet* vset, const Version& base) : vset_(vset) {
    for (int level = 0; level < base.num_levels(); level++) {
      for (const auto& f : base.files(level)) levels_[level][f->number] = f;
    }
    num_levels_ = base.num_levels();
  }

  Status Apply(const VersionEdit& edit) {
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
      f->being_compacted = false;  // a moved file arrives with its old flag
      // Added again without being deleted: two descriptions of one file, and no telling which
      // is right. (Another level's copy is caught by SaveTo.)
      if (!levels_[level].emplace(meta.number, std::move(f)).second) {
        return Status::Corruption(
            fmt::format("MANIFEST: file {} added to L{} twice", meta.number, level));
      }
    }
    return Status::OK();
  }

  // The new Version, checked: no file twice, no overlap below L0.
  Status SaveTo(std::shared_ptr<Version>* out) {
    auto v = std::make_shared<Version>(vset_, num_levels_);
    const InternalKeyComparator* icmp = vset_->icmp();
    std::set<uint64_t> seen;
    for (int level = 0; level < num_levels_; level++) {
      FileList& files = v->files_[level];
      for (const auto& [number, f] : levels_[level]) {
        if (!seen.insert(number).second) {
          return Status::Corruption(fmt::format("MANIFEST: file {} listed twice", number));
        }
        files.push_back(f);
      }
      if (level == 0) {
        std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
          if (a->largest_seqno != b->largest_seqno) return a->largest_seqno > b->largest_seqno;
          return a->number > b->number;
        });
      } else {
        std::sort(files.begin(), files.end(), [&](const auto& a, const auto& b) {
          return icmp->Compare(a->smallest, b->smallest) < 0;
        });
        for (size_t i = 1; i < files.size(); i++) {
          const Slice prev_largest = ExtractUserKey(files[i - 1]->largest);
          const Slice smallest = ExtractUserKey(files[i]->smallest);
          if (icmp->user_comparator()->Compare(prev_largest, smallest) >= 0) {
            return Status::Corruption(fmt::format("MANIFEST: files {} and {} overlap in L{}",
                                                  files[i - 1]->number, files[i]->number, level));
          }
        }
      }
    }
    *out = std::move(v);
    return Status::OK();
  }

 private:
  const VersionSet* const vset_;
  int num_levels_ = 0;
  std::map<uint64_t, std::shared_ptr<FileMetaData>> levels_[64];
};

// ---- VersionSet ----

VersionSet::VersionSet(std::string dbname, const Options* options, FileSystem* fs,
                       TableCache* table_cache, const InternalKeyComparator* icmp,
                       Directory* db_dir)
    : dbname_(std::move(dbname)),
      options_(options),
      fs_(fs),
      table_cache_(table_cache),
      icmp_(icmp),
      db_dir_(db_dir) {
  Install(std::make_shared<Version>(this, options_->num_levels));
}

VersionSet::~VersionSet() {
  if (manifest_ != nullptr) manifest_->Close().PermitUncheckedError();
}

uint64_t VersionSet::MaxBytesForLevel(int level) const {
  double bytes = static_cast<double>(options_->max_bytes_for_level_base);
  for (int l = 1; l < level; l++) bytes *= options_->max_bytes_for_level_multiplier;
  return static_cast<uint64_t>(bytes);
}

void VersionSet::Install(std::shared_ptr<Version> v) {
  std::erase_if(live_, [](const std::weak_ptr<Version>& w) { return w.expired(); });
  live_.push_back(v);
  current_ = std::move(v);
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) {
  live->insert(unresolved_files_.begin(), unresolved_files_.end());
  std::erase_if(live_, [](const std::weak_ptr<Version>& w) { return w.expired(); });
  for (const auto& w : live_) {
    if (auto v = w.lock()) {
      for (int level = 0; level < v->num_levels(); level++) {
        for (const auto& f : v->files(level)) live->insert(f->number);
      }
    }
  }
}

void VersionSet::SnapshotEdit(const Version& v, VersionEdit* edit) const {
  edit->SetComparatorName(icmp_->user_comparator()->Name());
  edit->SetLogNumber(log_number_);
  edit->SetNextFileNumber(next_file_number_);
  edit->SetLastSequence(last_sequence_);
  for (int level = 0; level < v.num_levels(); level++) {
    for (const auto& f : v.files(level)) edit->AddFile(level, *f);
  }
}

Status VersionSet::SetCurrentFile(uint64_t manifest_number) {
  // CURRENT := "MANIFEST-NNNNNN\n", replaced atomically.
  std::string contents = ManifestFileName("", manifest_number);
  contents = contents.substr(contents.find_last_of('/') + 1) + "\n";
  const std::string tmp = TempFileName(dbname_, manifest_number);
  std::unique_ptr<WritableFile> f;
  Status s = fs_->NewWritableFile(tmp, FileOptions(), &f);
  if (s.ok()) s = f->Append(contents);
  if (s.ok()) s = f->Sync();
  if (s.ok()) s = f->Close();
  if (s.ok()) s = fs_->RenameFile(tmp, CurrentFileName(dbname_));
  if (s.ok()) s = db_dir_->Fsync();
  if (!s.ok()) fs_->DeleteFile(tmp).PermitUncheckedError();
  return s;
}

Status VersionSet::StartNewManifest(const Version& v) {
  if (manifest_ != nullptr) {
    manifest_->Close().PermitUncheckedError();
    manifest_.reset();
  }
  const uint64_t number = NewFileNumber();
  std::unique_ptr<WritableFile> f;
  Status s = fs_->NewWritableFile(ManifestFileName(dbname_, number), FileOptions(), &f);
  if (!s.ok()) return s;
  auto writer = std::make_unique<log::Writer>(std::move(f));
  VersionEdit snapshot;
  SnapshotEdit(v, &snapshot);
  std::string record;
  snapshot.EncodeTo(&record);
  s = writer->AddRecord(record);
  if (s.ok()) s = writer->Sync();
  if (!s.ok()) {
    writer->Close().PermitUncheckedError();
    fs_->DeleteFile(ManifestFileName(dbname_, number)).PermitUncheckedError();
    return s;
  }
  s = SetCurrentFile(number);
  if (!s.ok()) {
    // CURRENT may or may not name the new MANIFEST now; both are complete, so keep both.
    writer->Close().PermitUncheckedError();
    return s;
  }
  manifest_ = std::move(writer);
  manifest_file_number_ = number;
  return Status::OK();
}

Status VersionSet::CreateNew() {
  next_file_number_ = 2;
  log_number_ = 0;
  last_sequence_ = 0;
  return StartNewManifest(*current_);
}

Status VersionSet::LogAndApply(VersionEdit* edit) {
  if (edit->log_number()) {
    if (*edit->log_number() < log_number_ || *edit->log_number() >= next_file_number_) {
      return Status::Corruption("LogAndApply: log number out of range");
    }
  } else {
    edit->SetLogNumber(log_number_);
  }
  edit->SetNextFileNumber(next_file_number_);
  edit->SetLastSequence(last_sequence_);

  VersionBuilder builder(this, *current_);
  Status s = builder.Apply(*edit);
  std::shared_ptr<Version> v;
  if (s.ok()) s = builder.SaveTo(&v);
  if (!s.ok()) return s;
  if (!edit->new_files().empty()) {
    // The new tables' directory entries must be durable before the MANIFEST names them.
    s = db_dir_->Fsync();
    if (!s.ok()) return s;
  }

  if (manifest_ == nullptr || manifest_->FileSize() >= options_->max_manifest_file_size) {
    // A fresh MANIFEST snapshots the new state; it needs no separate edit record.
    const uint64_t saved_log = log_number_;
    log_number_ = *edit->log_number();
    s = StartNewManifest(*v);
    if (!s.ok()) log_number_ = saved_log;
  } else {
    std::string record;
    edit->EncodeTo(&record);
    s = manifest_->AddRecord(record);
    if (s.ok()) s = manifest_->Sync();
    if (!s.ok()) {
      // The MANIFEST may now end in a partial record: never append to it again.
      manifest_->Close().PermitUncheckedError();
      manifest_.reset();
    } else {
      log_number_ = *edit->log_number();
    }
  }
  if (!s.ok()) {
    // The edit may be durable all the same; its files must outlive that possibility.
    for (const auto& [level, f] : edit->new_files()) unresolved_files_.insert(f.number);
    return s;
  }
  // Every failure dropped manifest_, so after one this write started a new MANIFEST from the
  // installed state and CURRENT names it: no durable MANIFEST names the unresolved files now.
  unresolved_files_.clear();
  Install(std::move(v));
  return Status::OK();
}

Status VersionSet::Recover() {
  std::string current;
  Status s = ReadFileToString(fs_, CurrentFileName(dbname_), &current);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("CURRENT is missing", dbname_) : s;
  std::string manifest_file;
  uint64_t manifest_number = 0;
  s = ParseCurrentFile(dbname_, current, &manifest_file, &manifest_number);
  if (!s.ok()) return s;
  const std::string manifest_name = dbname_ + "/" + manifest_file;
  std::unique_ptr<SequentialFile> file;
  s = fs_->NewSequentialFile(manifest_name, FileOptions(), &file);
  if (!s.ok()) {
    return s.IsNotFound() || fs_->FileExists(manifest_name).IsNotFound()
               ? Status::Corruption("CURRENT names a missing MANIFEST: " + manifest_file, dbname_)
               : s;
  }
  log::Reader reader(std::move(file), manifest_name);
  VersionBuilder builder(this, Version(this, options_->num_levels));
  bool have_next = false, have_log = false, have_seq = false;
  uint64_t next = 0, log = 0;
  SequenceNumber seq = 0;
  Slice record;
  std::string scratch;
  uint64_t records = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    VersionEdit edit;
    s = edit.DecodeFrom(record);
    if (!s.ok()) {
      return Status::Corruption(
          fmt::format("{}: record at offset {}", manifest_name, reader.last_record_offset()),
          s.ToString());
    }
    if (edit.comparator() && *edit.comparator() != icmp_->user_comparator()->Name()) {
      return Status::InvalidArgument(fmt::format("{} was written with comparator {}, not {}",
                                                 dbname_, *edit.comparator(),
                                                 icmp_->user_comparator()->Name()));
    }
    s = builder.Apply(edit);
    if (s.IsInvalidArgument()) return Status::InvalidArgument(dbname_, std::string(s.message()));
    if (!s.ok()) {
      return Status::Corruption(
          fmt::format("{}: record at offset {}", manifest_name, reader.last_record_offset()),
          s.ToString());
    }
    if (edit.next_file_number()) have_next = true, next = *edit.next_file_number();
    if (edit.log_number()) have_log = true, log = std::max(log, *edit.log_number());
    if (edit.last_sequence()) have_seq = true, seq = std::max(seq, *edit.last_sequence());
    records++;
  }
  // A torn last record is an edit that was never acknowledged; anything else is damage.
  if (reader.end() == log::Reader::End::kCorruption || reader.end() == log::Reader::End::kIOError) {
    return reader.status();
  }
  if (records == 0 || !have_next || !have_log || !have_seq) {
    return Status::Corruption(manifest_name + ": no complete state recorded");
  }
  std::shared_ptr<Version> v;
  s = builder.SaveTo(&v);
  if (!s.ok()) return Status::Corruption(manifest_name, s.ToString());
  next_file_number_ = std::max(next, manifest_number + 1);
  log_number_ = log;
  last_sequence_ = seq;
  manifest_file_number_ = manifest_number;
  Install(std::move(v));
  // Continue in a new MANIFEST: the old one may end in a torn record.
  return StartNewManifest(*current_);
}

}  // namespace shale
