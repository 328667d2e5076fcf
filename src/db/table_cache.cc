#include "src/db/table_cache.h"

#include <fmt/format.h>

#include <utility>

#include "src/base/filename.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"

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

// A reader's key in the cache: its file number, fixed 8 bytes.
class FileKey {
 public:
  explicit FileKey(uint64_t file_number) { EncodeFixed64(bytes_, file_number); }
  Slice slice() const { return Slice(bytes_, sizeof(bytes_)); }

 private:
  char bytes_[8];
};

}  // namespace

TableRef& TableRef::operator=(TableRef&& other) noexcept {
  if (this != &other) {
    Reset();
    reader_ = std::exchange(other.reader_, nullptr);
    cache_ = std::exchange(other.cache_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void TableRef::Reset() {
  if (handle_ != nullptr) cache_->Release(handle_);
  reader_ = nullptr;
  cache_ = nullptr;
  handle_ = nullptr;
}

TableCache::TableCache(std::string dbname, FileSystem* fs, const TableReaderOptions& reader_options,
                       int max_open_files, bool use_direct_reads)
    : dbname_(std::move(dbname)),
      fs_(fs),
      reader_options_(reader_options),
      use_direct_reads_(use_direct_reads),
      pin_readers_(max_open_files < 0) {
  const size_t capacity = max_open_files < 0
                              ? size_t{4} << 20
                              : static_cast<size_t>(std::max(max_open_files - kReservedFiles, 20));
  // Shards cut lock contention on the hot lookup path, but each keeps at least 16 readers so
  // the bound stays close to exact.
  int shard_bits = 0;
  while (shard_bits < 4 && (capacity >> (shard_bits + 1)) >= 16) shard_bits++;
  cache_ = NewLRUCache(capacity, shard_bits);
}

TableRef TableCache::Ref(const FileMetaData& f, Cache::Handle* handle) {
  TableRef ref;
  ref.reader_ = static_cast<TableReader*>(cache_->Value(handle));
  if (pin_readers_ && f.pin.Install(cache_, handle, ref.reader_)) return ref;
  ref.cache_ = cache_.get();
  ref.handle_ = handle;
  return ref;
}

TableRef TableCache::FindOpen(const FileMetaData& f) {
  TableRef ref;
  ref.reader_ = f.pin.reader();
  if (ref.reader_ != nullptr) return ref;
  Cache::Handle* handle = cache_->Lookup(FileKey(f.number).slice());
  return handle == nullptr ? TableRef() : Ref(f, handle);
}

Status TableCache::Find(const FileMetaData& f, TableRef* ref) {
  *ref = FindOpen(f);
  if (*ref) return Status::OK();
  Cache::Handle* handle = nullptr;
  Status s = OpenTable(f.number, f.file_size, &handle);
  if (s.ok()) *ref = Ref(f, handle);
  return s;
}

Status TableCache::GetRangeTombstones(const FileMetaData& f,
                                      std::shared_ptr<const FragmentedRangeTombstoneList>* list) {
  SHALE_ASSERT(f.num_range_deletions > 0);
  TableRef ref;
  Status s = Find(f, &ref);
  if (!s.ok()) return s;
  *list = ref->range_tombstones();
  if (*list == nullptr) {
    return Status::Corruption(fmt::format("table {} has no range deletions, the MANIFEST counts {}",
                                          f.number, f.num_range_deletions));
  }
  return Status::OK();
}

Status TableCache::OpenTable(uint64_t file_number, uint64_t file_size, Cache::Handle** handle) {
  const FileKey key(file_number);
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
  s = cache_->Insert(key.slice(), raw, 1, &DeleteReader, handle);
  if (s.ok()) reader.release();
  return s;
}

std::unique_ptr<InternalIterator> TableCache::NewIterator(const ReadOptions& options,
                                                          const FileMetaData& f) {
  TableRef ref;
  Status s = Find(f, &ref);
  if (!s.ok()) return NewErrorInternalIterator(s);
  std::unique_ptr<InternalIterator> it = ref->NewIterator(options);
  if (ref.handle_ != nullptr) {
    it->RegisterCleanup(&ReleaseReader, std::exchange(ref.cache_, nullptr),
                        std::exchange(ref.handle_, nullptr));
  }
  return it;
}

void TableCache::Evict(uint64_t file_number) { cache_->Erase(FileKey(file_number).slice()); }

}  // namespace shale
