// FileSystem helpers shared by every implementation.
#include <memory>

#include "shale/file_system.h"

namespace shale {

Status ReadFileToString(FileSystem* fs, const std::string& path, std::string* data) {
  data->clear();
  std::unique_ptr<SequentialFile> file;
  Status s = fs->NewSequentialFile(path, FileOptions(), &file);
  if (!s.ok()) return s;
  constexpr size_t kChunk = 64 << 10;
  auto scratch = std::make_unique_for_overwrite<char[]>(kChunk);
  while (true) {
    Slice got;
    s = file->Read(kChunk, &got, scratch.get());
    if (!s.ok()) return s;
    if (got.empty()) return Status::OK();
    data->append(got.data(), got.size());
  }
}

Status WriteStringToFile(FileSystem* fs, const Slice& data, const std::string& path, bool sync) {
  std::unique_ptr<WritableFile> file;
  Status s = fs->NewWritableFile(path, FileOptions(), &file);
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (!s.ok()) fs->DeleteFile(path).PermitUncheckedError();  // no half-written file left behind
  return s;
}

}  // namespace shale
