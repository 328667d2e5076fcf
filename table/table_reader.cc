#include "table/table_reader.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "src/monitoring/perf_context_imp.h"
#include "src/util/clock.h"
#include "src/util/coding.h"

namespace shale {
namespace {

void RecordTick(Statistics* stats, Tickers t) {
  if (stats != nullptr) stats->recordTick(t);
}

// A block read from the file, in the calling thread's PerfContext.
void CountBlockRead(const BlockHandle& handle) {
  if (!PerfCountEnabled()) return;
  PerfCount(&PerfContext::block_read_count);
  PerfCount(&PerfContext::block_read_byte, handle.size() + kBlockTrailerSize);
}

void DeleteCachedBlock(const Slice& /*key*/, void* value) {
  std::unique_ptr<Block> owned(static_cast<Block*>(value));
}

void ReleaseCacheHandle(void* cache, void* handle) {
  static_cast<Cache*>(cache)->Release(static_cast<Cache::Handle*>(handle));
}

void DeleteOwnedBlock(void* block, void* /*unused*/) {
  std::unique_ptr<Block> owned(static_cast<Block*>(block));
}

void PinCachedBlock(void* ref, Cleanable* target) {
  static_cast<const BlockRef*>(ref)->PinInto(target);
}

}  // namespace

// ---- BlockRef ----

void BlockRef::Reset() {
  if (handle_ != nullptr) cache_->Release(handle_);
  handle_ = nullptr;
  cache_ = nullptr;
  owned_.reset();
  block_ = nullptr;
}

void BlockRef::PinInto(Cleanable* target) const {
  cache_->Ref(handle_);
  target->RegisterCleanup(&ReleaseCacheHandle, cache_, handle_);
}

void BlockRef::TransferTo(Cleanable* target) {
  if (handle_ != nullptr) {
    target->RegisterCleanup(&ReleaseCacheHandle, cache_, handle_);
  } else if (owned_ != nullptr) {
    target->RegisterCleanup(&DeleteOwnedBlock, owned_.release(), nullptr);
  }
  handle_ = nullptr;
  cache_ = nullptr;
  block_ = nullptr;
}

// ---- TableIterator: the index block's iterator over data block iterators ----

class TableIterator final : public InternalIterator {
 public:
  TableIterator(const TableReader* table, const ReadOptions& options,
                const InternalKeyComparator* cmp, std::unique_ptr<InternalIterator> index)
      : table_(table), options_(options), cmp_(cmp), index_(std::move(index)) {
    if (options.readahead_size > 0) {
      readahead_ = std::make_unique<ReadaheadBuffer>(options.readahead_size);
    }
  }

  bool Valid() const override { return data_valid_ && data_.Valid(); }
  void SeekToFirst() override {
    index_->SeekToFirst();
    LoadBlock();
    if (data_valid_) data_.SeekToFirst();
    SkipEmptyForward();
  }
  void SeekToLast() override {
    index_->SeekToLast();
    LoadBlock();
    if (data_valid_) data_.SeekToLast();
    SkipEmptyBackward();
  }
  void Seek(const Slice& target) override {
    index_->Seek(target);
    LoadBlock();
    if (data_valid_) data_.Seek(target);
    SkipEmptyForward();
  }
  void SeekForPrev(const Slice& target) override {
    index_->Seek(target);
    if (!index_->Valid() && index_->status().ok()) index_->SeekToLast();
    LoadBlock();
    if (data_valid_) data_.SeekForPrev(target);
    SkipEmptyBackward();
  }
  void Next() override {
    data_.Next();
    SkipEmptyForward();
  }
  void Prev() override {
    data_.Prev();
    SkipEmptyBackward();
  }
  Slice key() const override { return data_.key(); }
  Slice value() const override { return data_.value(); }
  // A block iterator's error does not know the file: name it, and the block.
  Status status() const override {
    if (!index_->status().ok()) {
      return Status::Corruption(table_->file_name() + ": index block", index_->status().ToString());
    }
    if (!status_.ok()) return status_;
    if (data_valid_ && !data_.status().ok()) {
      return Status::Corruption(
          fmt::format("{}: data block at offset {}", table_->file_name(), block_offset_),
          data_.status().ToString());
    }
    return Status::OK();
  }

 private:
  // Points data_ at the block the index is on (or invalid at the index's end or an error).
  void LoadBlock() {
    if (!index_->Valid()) {
      ClearBlock();
      return;
    }
    Slice v = index_->value();
    BlockHandle handle;
    Status s = handle.DecodeFrom(&v);
    if (!s.ok()) {
      status_ = Status::Corruption(table_->file_name(), "bad index entry");
      ClearBlock();
      return;
    }
    if (data_valid_ && handle.offset() == block_offset_) return;  // already loaded
    ClearBlock();
    s = table_->GetDataBlock(options_, handle, &block_, readahead_.get());
    if (!s.ok()) {
      status_ = s;
      return;
    }
    block_.get()->InitIterator(cmp_, &data_);
    block_offset_ = handle.offset();
    data_valid_ = true;
  }
  void ClearBlock() {
    block_.Reset();
    data_valid_ = false;
  }
  void SkipEmptyForward() {
    while (status_.ok() && data_valid_ && !data_.Valid() && data_.status().ok()) {
      index_->Next();
      LoadBlock();
      if (data_valid_) data_.SeekToFirst();
    }
  }
  void SkipEmptyBackward() {
    while (status_.ok() && data_valid_ && !data_.Valid() && data_.status().ok()) {
      index_->Prev();
      LoadBlock();
      if (data_valid_) data_.SeekToLast();
    }
  }

  const TableReader* const table_;
  const ReadOptions options_;
  const InternalKeyComparator* const cmp_;
  std::unique_ptr<InternalIterator> index_;
  std::unique_ptr<ReadaheadBuffer> readahead_;  // null: one read per block
  BlockRef block_;
  BlockIter data_;
  bool data_valid_ = false;
  uint64_t block_offset_ = 0;
  Status status_;
};

// ---- TableReader ----

TableReader::TableReader(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile> file,
                         uint64_t file_size)
    : options_(options), file_(std::move(file)), file_size_(file_size) {
  if (options_.block_cache != nullptr) cache_id_ = options_.block_cache->NewId();
}

TableReader::~TableReader() = default;

Status TableReader::Annotate(const Status& s) const {
  if (s.ok() || s.ToString().find(options_.file_name) != std::string::npos) return s;
  if (s.IsCorruption()) return Status::Corruption(options_.file_name, s.ToString());
  if (s.IsIOError()) return Status::IOError(options_.file_name, s.ToString());
  return s;
}

Status TableReader::Open(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile> file,
                         uint64_t file_size, std::unique_ptr<TableReader>* reader) {
  reader->reset();
  if (options.comparator == nullptr)
    return Status::InvalidArgument("TableReader needs a comparator");
  std::unique_ptr<TableReader> r(new TableReader(options, std::move(file), file_size));
  Status s = r->ReadMetaBlocks();
  if (!s.ok()) return r->Annotate(s);
  *reader = std::move(r);
  return Status::OK();
}

Status TableReader::ReadMetaBlocks() {
  const std::string& name = options_.file_name;
  if (file_size_ < Footer::kEncodedLength) {
    return Status::Corruption(
        fmt::format("{}: file is too short ({} bytes) to be a table", name, file_size_));
  }
  char footer_space[Footer::kEncodedLength];
  Slice footer_input;
  Status s = ReadRange(file_.get(), file_size_ - Footer::kEncodedLength, Footer::kEncodedLength,
                       &footer_input, footer_space);
  if (!s.ok()) return Status::IOError(name + ": reading the footer", s.ToString());
  if (footer_input.size() != Footer::kEncodedLength) {
    return Status::Corruption(name + ": footer truncated");
  }
  Footer footer;
  s = footer.DecodeFrom(footer_input);
  if (!s.ok()) {
    return s.IsCorruption() ? Status::Corruption(fmt::format("{}: footer at offset {}", name,
                                                             file_size_ - Footer::kEncodedLength),
                                                 s.ToString())
                            : s;
  }

  // Metaindex → properties and filter handles.
  BlockContents meta_contents;
  s = ReadBlock(file_.get(), file_size_, name, footer.metaindex_handle, true, &meta_contents);
  if (!s.ok()) return s;
  Block metaindex(std::move(meta_contents));
  BlockIter meta;
  metaindex.InitIterator(BytewiseComparator(), &meta);
  BlockHandle properties_handle;
  bool have_properties = false;
  for (meta.SeekToFirst(); meta.Valid(); meta.Next()) {
    Slice v = meta.value();
    BlockHandle h;
    if (!h.DecodeFrom(&v).ok()) return Status::Corruption(name + ": bad metaindex entry");
    if (meta.key() == Slice("shale.properties")) {
      properties_handle = h;
      have_properties = true;
    } else if (meta.key() == Slice("shale.filter")) {
      filter_handle_ = h;
    }
  }
  if (!meta.status().ok())
    return Status::Corruption(name + ": metaindex", meta.status().ToString());
  if (!have_properties) return Status::Corruption(name + ": no properties block");

  BlockContents props_contents;
  s = ReadBlock(file_.get(), file_size_, name, properties_handle, true, &props_contents);
  if (!s.ok()) return s;
  s = properties_.Decode(props_contents.data);
  if (!s.ok()) return Status::Corruption(name, s.ToString());
  const char* want = options_.comparator->user_comparator()->Name();
  if (!properties_.comparator.empty() && properties_.comparator != want) {
    return Status::InvalidArgument(fmt::format("{}: written with comparator {}, opened with {}",
                                               name, properties_.comparator, want));
  }

  if (options_.check_merge_operator && properties_.num_merge_operands > 0) {
    const std::string have = options_.merge_operator_name ? options_.merge_operator_name : "";
    if (properties_.merge_operator != have) {
      return Status::InvalidArgument(
          fmt::format("{}: merge operands written with merge operator '{}', opened with '{}'", name,
                      properties_.merge_operator, have));
    }
  }

  BlockContents index_contents;
  s = ReadBlock(file_.get(), file_size_, name, footer.index_handle, true, &index_contents);
  if (!s.ok()) return s;
  CountBlockRead(footer.index_handle);
  PerfCount(&PerfContext::index_block_read_count);
  index_block_ = std::make_unique<Block>(std::move(index_contents));

  if (filter_handle_.size() > 0) {
    s = ReadBlock(file_.get(), file_size_, name, filter_handle_, true, &filter_contents_);
    if (!s.ok()) return s;
    CountBlockRead(filter_handle_);
    PerfCount(&PerfContext::filter_block_read_count);
    filter_ = std::make_unique<FilterBlockReader>(filter_contents_.data);
  }
  return Status::OK();
}

bool TableReader::KeyMayMatch(const Slice& user_key) const {
  return filter_ == nullptr || filter_->KeyMayMatch(user_key);
}

bool TableReader::LookupCachedBlock(const BlockHandle& handle, BlockRef* ref) const {
  Cache* cache = options_.block_cache.get();
  if (cache == nullptr) return false;
  char key[kCacheKeySize];
  CacheKey(handle, key);
  Cache::Handle* h = cache->Lookup(Slice(key, sizeof(key)));
  if (h == nullptr) {
    RecordTick(options_.statistics, BLOCK_CACHE_MISS);
    RecordTick(options_.statistics, BLOCK_CACHE_DATA_MISS);
    return false;
  }
  RecordTick(options_.statistics, BLOCK_CACHE_HIT);
  RecordTick(options_.statistics, BLOCK_CACHE_DATA_HIT);
  PerfCount(&PerfContext::block_cache_hit_count);
  ref->cache_ = cache;
  ref->handle_ = h;
  ref->block_ = static_cast<const Block*>(cache->Value(h));
  return true;
}

void TableReader::CacheKey(const BlockHandle& handle, char* key) const {
  EncodeFixed64(key, cache_id_);
  EncodeFixed64(key + 8, handle.offset());
}

void TableReader::InstallBlock(const ReadOptions& options, const BlockHandle& handle,
                               BlockContents contents, BlockRef* ref) const {
  auto block = std::make_unique<Block>(std::move(contents));
  Cache* cache = options_.block_cache.get();
  if (cache != nullptr && options.fill_cache) {
    char key[kCacheKeySize];
    CacheKey(handle, key);
    Block* raw = block.get();
    Cache::Handle* h = nullptr;
    if (cache->Insert(Slice(key, sizeof(key)), raw, raw->usable_size(), &DeleteCachedBlock, &h)
            .ok()) {
      block.release();  // the cache owns it now
      RecordTick(options_.statistics, BLOCK_CACHE_ADD);
      RecordTick(options_.statistics, BLOCK_CACHE_DATA_ADD);
      ref->cache_ = cache;
      ref->handle_ = h;
      ref->block_ = raw;
      return;
    }
    // A full strict cache: keep the block for this read only.
    RecordTick(options_.statistics, BLOCK_CACHE_ADD_FAILURES);
  }
  ref->block_ = block.get();
  ref->owned_ = std::move(block);
}

Status TableReader::GetDataBlock(const ReadOptions& options, const BlockHandle& handle,
                                 BlockRef* ref, ReadaheadBuffer* readahead) const {
  ref->Reset();
  if (LookupCachedBlock(handle, ref)) return Status::OK();
  const uint64_t start = options_.statistics != nullptr ? NowMicros() : 0;
  PerfTimer timer(&PerfContext::block_read_time);
  BlockContents contents;
  Status s = readahead != nullptr
                 ? readahead->ReadBlock(file_.get(), file_size_, options_.file_name, handle,
                                        options.verify_checksums, &contents)
                 : ReadBlock(file_.get(), file_size_, options_.file_name, handle,
                             options.verify_checksums, &contents);
  if (options_.statistics != nullptr) {
    options_.statistics->recordInHistogram(SST_READ_MICROS, NowMicros() - start);
  }
  timer.Stop();
  if (!s.ok()) return s;
  CountBlockRead(handle);
  InstallBlock(options, handle, std::move(contents), ref);
  return Status::OK();
}

Status TableReader::ScanBlock(const BlockRef& ref, const BlockHandle& handle,
                              const Slice& internal_key, GetContext* ctx, bool* matched,
                              bool* done) const {
  const Comparator* ucmp = options_.comparator->user_comparator();
  const Slice user_key = ExtractUserKey(internal_key);
  BlockIter it;
  ref.get()->InitIterator(options_.comparator, &it);
  const Pinner pinner =
      ref.cached() ? Pinner{&PinCachedBlock, const_cast<BlockRef*>(&ref), ref.get()} : Pinner{};
  for (it.Seek(internal_key); it.Valid(); it.Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(it.key(), &parsed)) {
      return Status::Corruption(fmt::format("{}: bad internal key in block at offset {}",
                                            options_.file_name, handle.offset()));
    }
    if (ucmp->Compare(parsed.user_key, user_key) != 0) {
      *done = true;
      break;
    }
    *matched = true;
    if (!ctx->SaveValue(parsed, it.value(), pinner)) {
      *done = true;
      break;
    }
  }
  if (!it.status().ok()) {
    return Status::Corruption(
        fmt::format("{}: data block at offset {}", options_.file_name, handle.offset()),
        it.status().ToString());
  }
  return Status::OK();
}

Status TableReader::GetFromIndex(const ReadOptions& options, BlockIter* index,
                                 const Slice& internal_key, GetContext* ctx, bool* matched) const {
  bool done = false;
  for (; index->Valid() && !done; index->Next()) {
    Slice v = index->value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&v).ok()) {
      return Status::Corruption(options_.file_name, "bad index entry");
    }
    BlockRef ref;
    Status s = GetDataBlock(options, handle, &ref);
    if (!s.ok()) return s;
    s = ScanBlock(ref, handle, internal_key, ctx, matched, &done);
    if (!s.ok()) return s;
  }
  if (!index->status().ok()) {
    return Status::Corruption(options_.file_name + ": index block", index->status().ToString());
  }
  return Status::OK();
}

Status TableReader::Get(const ReadOptions& options, const Slice& internal_key,
                        GetContext* ctx) const {
  if (filter_ != nullptr) {
    if (!filter_->KeyMayMatch(ExtractUserKey(internal_key))) {
      RecordTick(options_.statistics, BLOOM_FILTER_USEFUL);
      PerfCount(&PerfContext::bloom_sst_miss_count);
      return Status::OK();
    }
    RecordTick(options_.statistics, BLOOM_FILTER_FULL_POSITIVE);
    PerfCount(&PerfContext::bloom_sst_hit_count);
  }
  BlockIter index;
  index_block_->InitIterator(options_.comparator, &index);
  index.Seek(internal_key);
  bool matched = false;
  Status s = GetFromIndex(options, &index, internal_key, ctx, &matched);
  if (matched && filter_ != nullptr)
    RecordTick(options_.statistics, BLOOM_FILTER_FULL_TRUE_POSITIVE);
  return s;
}

// ---- MultiGet ----

// A data block some keys of a batch need and the cache did not have.
struct TableReader::MissedBlock {
  BlockHandle handle;
  std::vector<MultiGetKey*> keys;
  BlockReadRequest read;
  Status status;
};

void TableReader::ServeKeys(const ReadOptions& options, const BlockRef& ref,
                            const BlockHandle& handle, MultiGetKey* const* keys, size_t n) const {
  for (size_t i = 0; i < n; i++) {
    MultiGetKey* k = keys[i];
    const Slice ikey = k->lkey.internal_key();
    bool matched = false;
    bool done = false;
    Status s = ScanBlock(ref, handle, ikey, &k->ctx, &matched, &done);
    if (s.ok() && !done) {
      // The key's versions run past this block: continue with the blocks after it.
      BlockIter index;
      index_block_->InitIterator(options_.comparator, &index);
      index.Seek(ikey);
      if (index.Valid()) index.Next();
      s = GetFromIndex(options, &index, ikey, &k->ctx, &matched);
    }
    if (!s.ok()) k->status = s;
    if (matched && filter_ != nullptr) {
      RecordTick(options_.statistics, BLOOM_FILTER_FULL_TRUE_POSITIVE);
    }
  }
}

Task TableReader::ReadMissedBlock(ReadOptions options, MissedBlock block, AsyncIo* io) const {
  block.status = block.read.Prepare(file_.get(), file_size_, options_.file_name, block.handle);
  if (block.status.ok()) {
    ReadRequest* request = block.read.request();
    co_await io->ReadAll(file_.get(), &request, 1);
  }
  BlockContents contents;
  if (block.status.ok()) {
    block.status = block.read.Finish(options_.file_name, options.verify_checksums, &contents);
  }
  if (!block.status.ok()) {
    for (MultiGetKey* k : block.keys) k->status = block.status;
    co_return;
  }
  CountBlockRead(block.handle);
  PerfCount(&PerfContext::multiget_async_read_count);
  BlockRef ref;
  InstallBlock(options, block.handle, std::move(contents), &ref);
  ServeKeys(options, ref, block.handle, block.keys.data(), block.keys.size());
}

bool TableReader::FilterMayMatch(uint64_t hash) const {
  if (filter_ == nullptr) return true;
  if (!filter_->HashMayMatch(hash)) {
    RecordTick(options_.statistics, BLOOM_FILTER_USEFUL);
    PerfCount(&PerfContext::bloom_sst_miss_count);
    return false;
  }
  RecordTick(options_.statistics, BLOOM_FILTER_FULL_POSITIVE);
  PerfCount(&PerfContext::bloom_sst_hit_count);
  return true;
}

void TableReader::MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n,
                           AsyncIo* io, bool filter_checked) const {
  // The filter: prefetch every key's line, then probe.
  thread_local std::vector<MultiGetKey*> candidates;
  candidates.clear();
  if (filter_ != nullptr && !filter_checked) {
    for (size_t i = 0; i < n; i++) filter_->PrefetchHash(keys[i]->hash);
    for (size_t i = 0; i < n; i++) {
      if (FilterMayMatch(keys[i]->hash)) candidates.push_back(keys[i]);
    }
  } else {
    candidates.assign(keys, keys + n);
  }

  // The index: one seek per group of keys that share a data block.
  BlockIter index;
  index_block_->InitIterator(options_.comparator, &index);
  std::vector<MissedBlock> missed;
  const InternalKeyComparator* cmp = options_.comparator;
  size_t i = 0;
  while (i < candidates.size()) {
    const Slice ikey = candidates[i]->lkey.internal_key();
    if (!index.Valid() || cmp->Compare(ikey, index.key()) > 0) index.Seek(ikey);
    if (!index.Valid()) {
      if (!index.status().ok()) {
        const Status s =
            Status::Corruption(options_.file_name + ": index block", index.status().ToString());
        for (; i < candidates.size(); i++) candidates[i]->status = s;
      }
      break;  // past the last block: the rest of the batch is not in this file
    }
    Slice v = index.value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&v).ok()) {
      candidates[i++]->status = Status::Corruption(options_.file_name, "bad index entry");
      continue;
    }
    size_t j = i + 1;
    while (j < candidates.size() &&
           cmp->Compare(candidates[j]->lkey.internal_key(), index.key()) <= 0) {
      j++;
    }
    BlockRef ref;
    if (LookupCachedBlock(handle, &ref)) {
      ServeKeys(options, ref, handle, &candidates[i], j - i);
    } else if (io == nullptr) {
      BlockContents contents;
      Status s = ReadBlock(file_.get(), file_size_, options_.file_name, handle,
                           options.verify_checksums, &contents);
      if (s.ok()) {
        InstallBlock(options, handle, std::move(contents), &ref);
        ServeKeys(options, ref, handle, &candidates[i], j - i);
      } else {
        for (size_t k = i; k < j; k++) candidates[k]->status = s;
      }
    } else {
      MissedBlock& m = missed.emplace_back();
      m.handle = handle;
      m.keys.assign(&candidates[i], &candidates[j]);
    }
    i = j;
  }
  // One coroutine per missing block: each block is decoded and serves its keys as soon as
  // it arrives, while the file's other reads are still in flight.
  for (MissedBlock& m : missed) io->Spawn(ReadMissedBlock(options, std::move(m), io));
}

std::unique_ptr<InternalIterator> TableReader::NewIndexIterator() const {
  return index_block_->NewIterator(options_.comparator);
}

std::unique_ptr<InternalIterator> TableReader::NewIterator(const ReadOptions& options) const {
  return std::make_unique<TableIterator>(this, options, options_.comparator, NewIndexIterator());
}

Status TableReader::VerifyChecksum() const {
  ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  auto index = NewIndexIterator();
  std::string prev;
  bool first = true;
  for (index->SeekToFirst(); index->Valid(); index->Next()) {
    Slice v = index->value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&v).ok())
      return Status::Corruption(options_.file_name, "bad index entry");
    BlockContents contents;
    // Bypass the cache: the point is to read the bytes on disk.
    Status s = ReadBlock(file_.get(), file_size_, options_.file_name, handle, true, &contents);
    if (!s.ok()) return s;
    Block block(std::move(contents));
    BlockIter it;
    block.InitIterator(options_.comparator, &it);
    for (it.SeekToFirst(); it.Valid(); it.Next()) {
      ParsedInternalKey parsed;
      if (!ParseInternalKey(it.key(), &parsed)) {
        return Status::Corruption(fmt::format("{}: bad internal key in block at offset {}",
                                              options_.file_name, handle.offset()));
      }
      if (!first && options_.comparator->Compare(prev, it.key()) >= 0) {
        return Status::Corruption(fmt::format("{}: keys out of order in block at offset {}",
                                              options_.file_name, handle.offset()));
      }
      if (options_.comparator->Compare(it.key(), index->key()) > 0) {
        return Status::Corruption(fmt::format("{}: key beyond its index separator at offset {}",
                                              options_.file_name, handle.offset()));
      }
      prev.assign(it.key().data(), it.key().size());
      first = false;
    }
    if (!it.status().ok()) {
      return Status::Corruption(
          fmt::format("{}: data block at offset {}", options_.file_name, handle.offset()),
          it.status().ToString());
    }
  }
  if (!index->status().ok()) {
    return Status::Corruption(options_.file_name + ": index block", index->status().ToString());
  }
  return Status::OK();
}

}  // namespace shale
