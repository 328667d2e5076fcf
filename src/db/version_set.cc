#include "src/db/version_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "src/base/filename.h"
#include "src/db/version_builder.h"
#include "wal/log_reader.h"

namespace shale {

VersionSet::VersionSet(std::string dbname, const Options* options, FileSystem* fs,
                       TableCache* table_cache, const InternalKeyComparator* icmp,
                       Directory* db_dir)
    : dbname_(std::move(dbname)),
      options_(options),
      fs_(fs),
      table_cache_(table_cache),
      icmp_(icmp),
      db_dir_(db_dir) {
  Install(std::make_shared<Version>(icmp_, table_cache_, options_->num_levels));
}

VersionSet::~VersionSet() {
  if (manifest_ != nullptr) manifest_->Close().PermitUncheckedError();
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

  VersionBuilder builder(*current_);
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
  VersionBuilder builder(Version(icmp_, table_cache_, options_->num_levels));
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
