// FileSystem helpers shared by every implementation.
#include "shale/file_system.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shale {
namespace {

// Reads at Submit, reports at Poll: the asynchronous interface over synchronous reads, for
// file systems without a native one. Thread safety: one thread.
class SyncAsyncReader final : public AsyncReader {
 public:
  Status Submit(const RandomAccessFile* file, ReadRequest* request, Callback done,
                void* arg) override {
    request->status = file->Read(request->offset, request->len, &request->result, request->scratch);
    completed_.push_back({request, done, arg});
    return Status::OK();
  }
  Status Poll() override {
    // Callbacks may submit more reads; those are reported by the next Poll.
    std::vector<Completion> ready;
    ready.swap(completed_);
    for (const Completion& c : ready) c.done(c.request, c.arg);
    return Status::OK();
  }
  size_t pending() const override { return completed_.size(); }
  const char* Name() const override { return "sync"; }

 private:
  struct Completion {
    ReadRequest* request;
    Callback done;
    void* arg;
  };
  std::vector<Completion> completed_;
};

}  // namespace

Status FileSystem::NewAsyncReader(std::unique_ptr<AsyncReader>* reader) {
  *reader = std::make_unique<SyncAsyncReader>();
  return Status::OK();
}

Status WritableFile::AppendJoined(const Slice& head, const Slice& body) {
  std::string joined;
  joined.reserve(head.size() + body.size());
  joined.append(head.data(), head.size());
  joined.append(body.data(), body.size());
  return Append(joined);
}

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
