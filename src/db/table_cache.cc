#include "src/db/table_cache.h"

#include <fmt/format.h>

#include "src/base/filename.h"
#include "src/util/coding.h"

namespace shale {
namespace {

// RocksDB's convention: some descriptors stay free for logs, the MANIFEST and the like.
constexpr int kReservedFiles = 10;

void DeleteReader(const Slice& /*key*/, void* value) {
  std::unique_ptr<TableReader> owned(static_cast<TableReader*>(value));
}

void ReleaseReader(void* cache, void* handle) {
  static_cast<Cache*>(cache)->Release(static_cast<Cache::Handle*>(handle));
}

}  // namespace

TableCache::TableCache(std::string dbname, FileSystem* fs, const TableReaderOptions& reader_options,
                       int max_open_files, bool use_direct_reads)
    : dbname_(std::move(dbname)),
      fs_(fs),
      reader_options_(reader_options),
      use_direct_reads_(use_direct_reads) {
  const size_t capacity = max_open_files < 0
                              ? size_t{4} << 20
                              : static_cast<size_t>(std::max(max_open_files - kReservedFiles, 20));
  // Shards cut lock contention on the hot lookup path, but each keeps at least 16 readers so
  // the bound stays close to exact.
  int shard_bits = 0;
  while (shard_bits < 4 && (capacity >> (shard_bits + 1)) >= 16) shard_bits++;
  cache_ = NewLRUCache(capacity, shard_bits);
}

Cache::Handle* TableCache::LookupOpen(uint64_t file_number) {
  char key[8];
  EncodeFixed64(key, file_number);
  return cache_->Lookup(Slice(key, sizeof(key)));
}

Status TableCache::GetRangeTombstones(uint64_t file_number, uint64_t file_size,
                                      uint64_t num_range_deletions,
                                      std::shared_ptr<const FragmentedRangeTombstoneList>* list) {
  SHALE_ASSERT(num_range_deletions > 0);
  Cache::Handle* handle = nullptr;
  Status s = FindTable(file_number, file_size, &handle);
  if (!s.ok()) return s;
  *list = GetReader(handle)->range_tombstones();
  Release(handle);
  if (*list == nullptr) {
    return Status::Corruption(fmt::format("table {} has no range deletions, the MANIFEST counts {}",
                                          file_number, num_range_deletions));
  }
  return Status::OK();
}

Status TableCache::FindTable(uint64_t file_number, uint64_t file_size, Cache::Handle** handle) {
  *handle = LookupOpen(file_number);
  if (*handle != nullptr) return Status::OK();
  char key[8];
  EncodeFixed64(key, file_number);

  const std::string name = TableFileName(dbname_, file_number);
  uint64_t actual_size = 0;
  Status s = fs_->GetFileSize(name, &actual_size);
  if (!s.ok()) return s;
  if (actual_size != file_size) {
    return Status::Corruption(
        fmt::format("{}: size is {} bytes, the MANIFEST says {}", name, actual_size, file_size));
  }
  FileOptions fo;
  fo.use_direct_io = use_direct_reads_;
  std::unique_ptr<RandomAccessFile> file;
  s = fs_->NewRandomAccessFile(name, fo, &file);
  if (!s.ok()) return s;
  TableReaderOptions ro = reader_options_;
  ro.file_name = name;
  std::unique_ptr<TableReader> reader;
  s = TableReader::Open(ro, std::move(file), file_size, &reader);
  if (!s.ok()) return s;  // not cached: a later attempt retries the open
  TableReader* raw = reader.get();
  s = cache_->Insert(Slice(key, sizeof(key)), raw, 1, &DeleteReader, handle);
  if (s.ok()) reader.release();
  return s;
}

Status TableCache::Get(const ReadOptions& options, uint64_t file_number, uint64_t file_size,
                       const Slice& internal_key, GetContext* ctx) {
  Cache::Handle* handle = nullptr;
  Status s = FindTable(file_number, file_size, &handle);
  if (!s.ok()) return s;
  s = GetReader(handle)->Get(options, internal_key, ctx);
  // Values pinned into ctx hold block-cache pins, not the reader: releasing it is safe.
  cache_->Release(handle);
  return s;
}

std::unique_ptr<InternalIterator> TableCache::NewIterator(const ReadOptions& options,
                                                          uint64_t file_number,
                                                          uint64_t file_size) {
  Cache::Handle* handle = nullptr;
  Status s = FindTable(file_number, file_size, &handle);
  if (!s.ok()) return NewErrorInternalIterator(s);
  std::unique_ptr<InternalIterator> it = GetReader(handle)->NewIterator(options);
  it->RegisterCleanup(&ReleaseReader, cache_.get(), handle);
  return it;
}

void TableCache::Evict(uint64_t file_number) {
  char key[8];
  EncodeFixed64(key, file_number);
  cache_->Erase(Slice(key, sizeof(key)));
}

}  // namespace shale
