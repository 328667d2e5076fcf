#include "src/db/builder.h"

#include <utility>

#include "src/base/filename.h"
#include "src/env/rate_limited_file.h"

namespace shale {

Status BuildTable(const std::string& dbname, FileSystem* fs, const TableBuilderOptions& options,
                  InternalIterator* iter, FileMetaData* meta, RateLimiter* limiter,
                  Statistics* stats) {
  meta->file_size = 0;
  iter->SeekToFirst();
  if (!iter->Valid()) return iter->status();
  const std::string name = TableFileName(dbname, meta->number);
  std::unique_ptr<WritableFile> file;
  Status s = fs->NewWritableFile(name, FileOptions(), &file);
  if (!s.ok()) return s;
  file = RateLimitedWritableFile::Wrap(std::move(file), limiter, IOPriority::kHigh, stats);
  TableBuilder builder(options, file.get());
  meta->smallest = iter->key().ToString();
  for (; iter->Valid() && s.ok(); iter->Next()) {
    s = builder.Add(iter->key(), iter->value());
    if (s.ok()) meta->largest.assign(iter->key().data(), iter->key().size());
  }
  if (s.ok()) s = iter->status();
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
  return Status::OK();
}

}  // namespace shale
