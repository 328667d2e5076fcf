#include "src/db/version_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "shale/column_family.h"
#include "src/base/filename.h"
#include "src/db/version_builder.h"
#include "wal/log_reader.h"

namespace shale {

VersionSet::VersionSet(std::string dbname, const Options* options, FileSystem* fs,
                       TableCache* table_cache, const InternalKeyComparator* icmp,
                       Directory* db_dir)
    : dbname_(std::move(dbname)), options_(options), fs_(fs), db_dir_(db_dir) {
  Family& f = families_[0];
  f.name = kDefaultColumnFamilyName;
  f.config = FamilyConfig{options, icmp, table_cache};
  f.current = std::make_shared<Version>(icmp, table_cache, options->num_levels);
  TrackLive(f.current);
}

VersionSet::~VersionSet() {
  if (manifest_ != nullptr) manifest_->Close().PermitUncheckedError();
}

void VersionSet::TrackLive(const std::shared_ptr<Version>& v) {
  std::erase_if(live_, [](const std::weak_ptr<Version>& w) { return w.expired(); });
  live_.push_back(v);
}

uint64_t VersionSet::log_number() const {
  uint64_t min = UINT64_MAX;
  for (const auto& [id, f] : families_) min = std::min(min, f.log_number);
  return min;
}

std::vector<FamilyInfo> VersionSet::Families() const {
  std::vector<FamilyInfo> out;
  for (const auto& [id, f] : families_) out.push_back(FamilyInfo{id, f.name});
  return out;
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

std::vector<VersionEdit> VersionSet::SnapshotEdits(
    const std::map<uint32_t, Family>& families) const {
  std::vector<VersionEdit> edits;
  for (const auto& [id, f] : families) {
    VersionEdit& edit = edits.emplace_back();
    edit.SetColumnFamily(id);
    if (id != 0) edit.AddColumnFamily(f.name);
    edit.SetComparatorName(f.config.icmp->user_comparator()->Name());
    edit.SetLogNumber(f.log_number);
    if (id == 0) {
      edit.SetNextFileNumber(next_file_number_);
      edit.SetLastSequence(last_sequence_);
      // Left out while no family was ever created: such a MANIFEST holds only the fields of
      // the default family's, as before families existed.
      if (max_column_family_ > 0) edit.SetMaxColumnFamily(max_column_family_);
    }
    const Version& v = *f.current;
    for (int level = 0; level < v.num_levels(); level++) {
      for (const auto& file : v.files(level)) edit.AddFile(level, *file);
    }
  }
  return edits;
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

Status VersionSet::StartNewManifest(const std::map<uint32_t, Family>& families) {
  if (manifest_ != nullptr) {
    manifest_->Close().PermitUncheckedError();
    manifest_.reset();
  }
  const uint64_t number = NewFileNumber();
  std::unique_ptr<WritableFile> f;
  Status s = fs_->NewWritableFile(ManifestFileName(dbname_, number), FileOptions(), &f);
  if (!s.ok()) return s;
  auto writer = std::make_unique<log::Writer>(std::move(f));
  s = writer->AddRecord(VersionEdit::EncodeRecord(SnapshotEdits(families)));
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
  last_sequence_ = 0;
  return StartNewManifest(families_);
}

Status VersionSet::Commit(const std::vector<VersionEdit*>& edits, std::map<uint32_t, Family> next) {
  Status s;
  bool new_files = false;
  for (const VersionEdit* e : edits) new_files = new_files || !e->new_files().empty();
  if (new_files) {
    // The new tables' directory entries must be durable before the MANIFEST names them.
    s = db_dir_->Fsync();
    if (!s.ok()) return s;
  }
  if (manifest_ == nullptr || manifest_->FileSize() >= options_->max_manifest_file_size) {
    // A fresh MANIFEST snapshots the new state; it needs no separate edit record.
    s = StartNewManifest(next);
  } else {
    s = manifest_->AddRecord(
        VersionEdit::EncodeRecord(std::vector<const VersionEdit*>(edits.begin(), edits.end())));
    if (s.ok()) s = manifest_->Sync();
    if (!s.ok()) {
      // The MANIFEST may now end in a partial record: never append to it again.
      manifest_->Close().PermitUncheckedError();
      manifest_.reset();
    }
  }
  if (!s.ok()) {
    // The edits may be durable all the same; their files must outlive that possibility.
    for (const VersionEdit* e : edits) {
      for (const auto& [level, f] : e->new_files()) unresolved_files_.insert(f.number);
    }
    return s;
  }
  // Every failure dropped manifest_, so after one this write started a new MANIFEST from the
  // installed state and CURRENT names it: no durable MANIFEST names the unresolved files now.
  unresolved_files_.clear();
  for (auto& [id, f] : next) {
    auto old = families_.find(id);
    if (old == families_.end() || old->second.current != f.current) TrackLive(f.current);
  }
  families_ = std::move(next);
  return Status::OK();
}

Status VersionSet::LogAndApply(const std::vector<VersionEdit*>& edits) {
  SHALE_ASSERT(!edits.empty());
  std::map<uint32_t, Family> next = families_;
  std::set<uint32_t> seen;
  for (size_t i = 0; i < edits.size(); i++) {
    VersionEdit* edit = edits[i];
    auto it = next.find(edit->column_family());
    if (it == next.end() || !seen.insert(edit->column_family()).second ||
        edit->column_family_add() || edit->column_family_drop()) {
      return Status::Corruption(
          fmt::format("LogAndApply: an edit of column family {} that is not live, named twice, "
                      "or adds or drops it",
                      edit->column_family()));
    }
    Family& f = it->second;
    if (edit->log_number()) {
      if (*edit->log_number() < f.log_number || *edit->log_number() >= next_file_number_) {
        return Status::Corruption("LogAndApply: log number out of range");
      }
    } else {
      edit->SetLogNumber(f.log_number);
    }
    if (i == 0) {
      edit->SetNextFileNumber(next_file_number_);
      edit->SetLastSequence(last_sequence_);
    }
    VersionBuilder builder(*f.current);
    Status s = builder.Apply(*edit);
    std::shared_ptr<Version> v;
    if (s.ok()) s = builder.SaveTo(&v);
    if (!s.ok()) return s;
    f.current = std::move(v);
    f.log_number = *edit->log_number();
  }
  return Commit(edits, std::move(next));
}

Status VersionSet::CreateColumnFamily(const std::string& name, const FamilyConfig& config,
                                      uint64_t log_number, uint32_t* id) {
  SHALE_ASSERT(log_number < next_file_number_);
  const uint32_t new_id = max_column_family_ + 1;
  VersionEdit edit;
  edit.SetColumnFamily(new_id);
  edit.AddColumnFamily(name);
  edit.SetComparatorName(config.icmp->user_comparator()->Name());
  edit.SetLogNumber(log_number);
  edit.SetMaxColumnFamily(new_id);
  edit.SetNextFileNumber(next_file_number_);
  edit.SetLastSequence(last_sequence_);
  std::map<uint32_t, Family> next = families_;
  Family& f = next[new_id];
  f.name = name;
  f.config = config;
  f.current =
      std::make_shared<Version>(config.icmp, config.table_cache, config.options->num_levels);
  f.log_number = log_number;
  // Taken even when the write fails: the record may be durable, so the id is never reused.
  max_column_family_ = new_id;
  Status s = Commit({&edit}, std::move(next));
  if (s.ok()) *id = new_id;
  return s;
}

Status VersionSet::DropColumnFamily(uint32_t id) {
  SHALE_ASSERT(id != 0 && families_.contains(id));
  VersionEdit edit;
  edit.SetColumnFamily(id);
  edit.DropColumnFamily();
  edit.SetNextFileNumber(next_file_number_);
  edit.SetLastSequence(last_sequence_);
  std::map<uint32_t, Family> next = families_;
  next.erase(id);
  return Commit({&edit}, std::move(next));
}

// What replaying a MANIFEST's records yields before any family's Versions are built.
struct VersionSet::ManifestState {
  struct RecordedFamily {
    std::string name;
    std::optional<std::string> comparator;
    std::vector<std::pair<uint64_t, VersionEdit>> edits;  // with record offsets, in order
  };
  std::map<uint32_t, RecordedFamily> live;
  uint64_t manifest_number = 0;
  std::string manifest_name;
  uint64_t next_file_number = 0;
  SequenceNumber last_sequence = 0;
  uint32_t max_column_family = 0;
};

Status VersionSet::ReadManifest(FileSystem* fs, const std::string& dbname, ManifestState* state) {
  std::string current;
  Status s = ReadFileToString(fs, CurrentFileName(dbname), &current);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("CURRENT is missing", dbname) : s;
  std::string manifest_file;
  s = ParseCurrentFile(dbname, current, &manifest_file, &state->manifest_number);
  if (!s.ok()) return s;
  const std::string manifest_name = dbname + "/" + manifest_file;
  state->manifest_name = manifest_name;
  std::unique_ptr<SequentialFile> file;
  s = fs->NewSequentialFile(manifest_name, FileOptions(), &file);
  if (!s.ok()) {
    return s.IsNotFound() || fs->FileExists(manifest_name).IsNotFound()
               ? Status::Corruption("CURRENT names a missing MANIFEST: " + manifest_file, dbname)
               : s;
  }
  log::Reader reader(std::move(file), manifest_name);
  bool have_next = false, have_log = false, have_seq = false;
  state->live[0].name = kDefaultColumnFamilyName;
  std::set<uint32_t> ever = {0};  // ids ever created: never created again
  Slice record;
  std::string scratch;
  uint64_t records = 0;
  std::vector<VersionEdit> edits;
  while (reader.ReadRecord(&record, &scratch)) {
    auto where = [&] {
      return fmt::format("{}: record at offset {}", manifest_name, reader.last_record_offset());
    };
    s = VersionEdit::DecodeRecord(record, &edits);
    if (!s.ok()) return Status::Corruption(where(), s.ToString());
    for (VersionEdit& edit : edits) {
      const uint32_t id = edit.column_family();
      if (edit.column_family_add()) {
        if (!ever.insert(id).second) {
          return Status::Corruption(where(), fmt::format("column family {} created twice", id));
        }
        state->live[id].name = *edit.column_family_add();
      } else if (!state->live.contains(id)) {
        return Status::Corruption(
            where(), fmt::format("an edit of column family {}, which is not live", id));
      }
      if (edit.column_family_drop()) {
        state->live.erase(id);
        continue;
      }
      ManifestState::RecordedFamily& f = state->live[id];
      if (edit.comparator()) f.comparator = *edit.comparator();
      if (edit.next_file_number())
        have_next = true, state->next_file_number = *edit.next_file_number();
      if (edit.log_number() && id == 0) have_log = true;
      if (edit.last_sequence()) {
        have_seq = true;
        state->last_sequence = std::max(state->last_sequence, *edit.last_sequence());
      }
      if (edit.max_column_family()) {
        state->max_column_family = std::max(state->max_column_family, *edit.max_column_family());
      }
      f.edits.emplace_back(reader.last_record_offset(), std::move(edit));
    }
    records++;
  }
  // A torn last record is an edit that was never acknowledged; anything else is damage.
  if (reader.end() == log::Reader::End::kCorruption || reader.end() == log::Reader::End::kIOError) {
    return reader.status();
  }
  if (records == 0 || !have_next || !have_log || !have_seq) {
    return Status::Corruption(manifest_name + ": no complete state recorded");
  }
  state->max_column_family = std::max(state->max_column_family, *ever.rbegin());
  return Status::OK();
}

Status VersionSet::ListColumnFamilies(FileSystem* fs, const std::string& dbname,
                                      std::vector<std::string>* names) {
  ManifestState state;
  Status s = ReadManifest(fs, dbname, &state);
  if (!s.ok()) return s;
  names->clear();
  for (const auto& [id, f] : state.live) names->push_back(f.name);
  return Status::OK();
}

Status VersionSet::Recover(const FamilyResolver& resolve) {
  ManifestState state;
  Status s = ReadManifest(fs_, dbname_, &state);
  if (!s.ok()) return s;
  std::map<uint32_t, Family> families;
  for (auto& [id, recorded] : state.live) {
    Family& f = families[id];
    f.name = recorded.name;
    if (id == 0) {
      f.config = families_.at(0).config;
    } else {
      if (resolve == nullptr) {
        return Status::InvalidArgument(dbname_, "column family " + f.name + " is not opened");
      }
      s = resolve(FamilyInfo{id, f.name}, &f.config);
      if (!s.ok()) return s;
    }
    const char* wanted = f.config.icmp->user_comparator()->Name();
    if (recorded.comparator && *recorded.comparator != wanted) {
      return Status::InvalidArgument(
          id == 0 ? fmt::format("{} was written with comparator {}, not {}", dbname_,
                                *recorded.comparator, wanted)
                  : fmt::format("{}: column family {} was created with comparator {}, not {}",
                                dbname_, f.name, *recorded.comparator, wanted));
    }
    VersionBuilder builder(
        Version(f.config.icmp, f.config.table_cache, f.config.options->num_levels));
    for (const auto& [offset, edit] : recorded.edits) {
      s = builder.Apply(edit);
      if (s.IsInvalidArgument()) return Status::InvalidArgument(dbname_, std::string(s.message()));
      if (!s.ok()) {
        return Status::Corruption(
            fmt::format("{}: record at offset {}", state.manifest_name, offset), s.ToString());
      }
      if (edit.log_number()) f.log_number = std::max(f.log_number, *edit.log_number());
    }
    s = builder.SaveTo(&f.current);
    if (!s.ok()) return Status::Corruption(state.manifest_name, s.ToString());
  }
  // A file listed by two families is damage too.
  std::set<uint64_t> numbers;
  for (const auto& [id, f] : families) {
    for (int level = 0; level < f.current->num_levels(); level++) {
      for (const auto& file : f.current->files(level)) {
        if (!numbers.insert(file->number).second) {
          return Status::Corruption(state.manifest_name,
                                    fmt::format("file {} listed twice", file->number));
        }
      }
    }
  }
  next_file_number_ = std::max(state.next_file_number, state.manifest_number + 1);
  last_sequence_ = state.last_sequence;
  max_column_family_ = state.max_column_family;
  manifest_file_number_ = state.manifest_number;
  for (const auto& [id, f] : families) TrackLive(f.current);
  families_ = std::move(families);
  // Continue in a new MANIFEST: the old one may end in a torn record.
  return StartNewManifest(families_);
}

}  // namespace shale
