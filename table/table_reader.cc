#include "table/table_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "src/monitoring/perf_context_imp.h"
#include "src/util/clock.h"
#include "src/util/coding.h"
#include "src/util/hash.h"
#include "src/util/invariants.h"
#include "table/table_iterator.h"
#include "table/table_reader_internal.h"

namespace shale {

using table_internal::BadIndexEntry;
using table_internal::BadInternalKey;
using table_internal::BlockWithinFile;
using table_internal::CountBlockRead;
using table_internal::DataBlockCorruption;
using table_internal::IndexBlockCorruption;
using table_internal::RecordTick;

namespace {

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

void BlockRef::CheckState() const {
  if (handle_ != nullptr) {
    SHALE_ASSERT(cache_ != nullptr && owned_ == nullptr);
    SHALE_ASSERT(block_ == cache_->Value(handle_));
  } else {
    SHALE_ASSERT(cache_ == nullptr);
    SHALE_ASSERT(block_ == owned_.get());
  }
}

void BlockRef::Reset() {
  CheckState();
  if (handle_ != nullptr) cache_->Release(handle_);
  handle_ = nullptr;
  cache_ = nullptr;
  owned_.reset();
  block_ = nullptr;
}

void BlockRef::TakeFrom(BlockRef* other) {
  Reset();
  other->CheckState();
  block_ = std::exchange(other->block_, nullptr);
  cache_ = std::exchange(other->cache_, nullptr);
  handle_ = std::exchange(other->handle_, nullptr);
  owned_ = std::move(other->owned_);
}

void BlockRef::PinInto(Cleanable* target) const {
  SHALE_ASSERT(cached());
  CheckState();
  cache_->Ref(handle_);
  target->RegisterCleanup(&ReleaseCacheHandle, cache_, handle_);
}

void BlockRef::TransferTo(Cleanable* target) {
  CheckState();
  if (handle_ != nullptr) {
    target->RegisterCleanup(&ReleaseCacheHandle, cache_, handle_);
  } else if (owned_ != nullptr) {
    target->RegisterCleanup(&DeleteOwnedBlock, owned_.release(), nullptr);
  }
  handle_ = nullptr;
  cache_ = nullptr;
  block_ = nullptr;
}

// ---- TableReader: opening ----

TableReader::TableReader(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile> file,
                         uint64_t file_size)
    : options_(options),
      file_(std::move(file)),
      file_size_(file_size),
      bytewise_(options.comparator->user_comparator()->IsBytewise()) {
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
  Footer footer;
  Status s = ReadFooter(&footer);
  if (!s.ok()) return s;
  BlockHandle properties_handle;
  s = ReadMetaindex(footer.metaindex_handle, &properties_handle);
  if (!s.ok()) return s;
  s = ReadProperties(properties_handle);
  if (!s.ok()) return s;
  s = ReadRangeDeletions(footer.format_version);
  if (!s.ok()) return s;
  s = ReadIndex(footer.index_handle, footer.format_version);
  if (!s.ok()) return s;
  s = ReadFilter();
  if (!s.ok()) return s;
  // What every later read relies on, whatever the file held.
  SHALE_ASSERT(index_block_ != nullptr);
  SHALE_ASSERT((filter_ != nullptr) == (filter_handle_.size() > 0));
  return Status::OK();
}

Status TableReader::ReadFooter(Footer* footer) const {
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
  s = footer->DecodeFrom(footer_input);
  if (!s.ok()) {
    return s.IsCorruption() ? Status::Corruption(fmt::format("{}: footer at offset {}", name,
                                                             file_size_ - Footer::kEncodedLength),
                                                 s.ToString())
                            : s;
  }
  return Status::OK();
}

Status TableReader::ReadMetaindex(const BlockHandle& metaindex_handle,
                                  BlockHandle* properties_handle) {
  const std::string& name = options_.file_name;
  BlockContents meta_contents;
  Status s = ReadBlock(file_.get(), file_size_, name, metaindex_handle, true, &meta_contents);
  if (!s.ok()) return s;
  Block metaindex(std::move(meta_contents));
  BlockIter meta;
  metaindex.InitIterator(BytewiseComparator(), &meta);
  bool have_properties = false;
  for (meta.SeekToFirst(); meta.Valid(); meta.Next()) {
    Slice v = meta.value();
    BlockHandle h;
    if (!h.DecodeFrom(&v).ok()) return Status::Corruption(name + ": bad metaindex entry");
    if (meta.key() == Slice("shale.properties")) {
      *properties_handle = h;
      have_properties = true;
    } else if (meta.key() == Slice("shale.filter")) {
      filter_handle_ = h;
    } else if (meta.key() == Slice("shale.range_del")) {
      range_del_handle_ = h;
    }
  }
  if (!meta.status().ok())
    return Status::Corruption(name + ": metaindex", meta.status().ToString());
  if (!have_properties) return Status::Corruption(name + ": no properties block");
  return Status::OK();
}

Status TableReader::ReadProperties(const BlockHandle& properties_handle) {
  const std::string& name = options_.file_name;
  BlockContents props_contents;
  Status s = ReadBlock(file_.get(), file_size_, name, properties_handle, true, &props_contents);
  if (!s.ok()) return s;
  s = properties_.Decode(props_contents.data);
  if (!s.ok()) return Status::Corruption(name, s.ToString());
  return CheckWrittenCompatibly();
}

Status TableReader::CheckWrittenCompatibly() const {
  const std::string& name = options_.file_name;
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
  return Status::OK();
}

Status TableReader::ReadIndex(const BlockHandle& index_handle, uint32_t format_version) {
  const std::string& name = options_.file_name;
  const bool compact = format_version == kTableFormatVersionCompactIndex;
  if (properties_.format_version != format_version) {
    return Status::Corruption(fmt::format("{}: footer says format version {}, properties {}", name,
                                          format_version, properties_.format_version));
  }
  if (properties_.index_key_is_user_key > (compact ? 1u : 0u)) {
    return Status::Corruption(fmt::format("{}: index key kind {} in format version {}", name,
                                          properties_.index_key_is_user_key, format_version));
  }
  index_user_keys_ = properties_.index_key_is_user_key == 1;
  index_comparator_ = index_user_keys_ ? options_.comparator->user_comparator()
                                       : static_cast<const Comparator*>(options_.comparator);
  BlockContents index_contents;
  Status s = ReadBlock(file_.get(), file_size_, name, index_handle, true, &index_contents);
  if (!s.ok()) return s;
  CountBlockRead(index_handle);
  PerfCount(&PerfContext::index_block_read_count);
  index_block_ = std::make_unique<Block>(
      std::move(index_contents), compact ? BlockValueFormat::kHandle : BlockValueFormat::kSized);
  // Numbers taken from the separators' bytes order them only under a bytewise user comparator.
  if (bytewise_) {
    index_block_->BuildRestartPrefixIndex(index_user_keys_);
  }
  return Status::OK();
}

Status TableReader::ReadRangeDeletions(uint32_t format_version) {
  const std::string& name = options_.file_name;
  // Format 1 has no range-deletion block and 2 one; in 3 the properties tell.
  const bool expected = format_version == kTableFormatVersionCompactIndex
                            ? properties_.num_range_deletions > 0
                            : format_version == kTableFormatVersionWithRangeDeletions;
  if (expected != (range_del_handle_.size() > 0)) {
    return Status::Corruption(fmt::format("{}: format version {} {} a range-deletion block", name,
                                          format_version, expected ? "without" : "with"));
  }
  if (!expected) {
    if (properties_.num_range_deletions != 0) {
      return Status::Corruption(name + ": range deletions counted but no block holds them");
    }
    return Status::OK();
  }
  BlockContents contents;
  Status s = ReadBlock(file_.get(), file_size_, name, range_del_handle_, true, &contents);
  if (!s.ok()) return s;
  return DecodeRangeDeletions(std::move(contents), &range_tombstones_);
}

Status TableReader::DecodeRangeDeletions(
    BlockContents contents, std::shared_ptr<const FragmentedRangeTombstoneList>* out) const {
  const std::string& name = options_.file_name;
  const auto bad = [&](const char* what) {
    return Status::Corruption(fmt::format("{}: range-deletion block at offset {}: {}", name,
                                          range_del_handle_.offset(), what));
  };
  const Comparator* ucmp = options_.comparator->user_comparator();
  Block block(std::move(contents));
  BlockIter it;
  block.InitIterator(options_.comparator, &it);
  std::vector<RangeTombstone> tombstones;
  std::string prev;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const Slice key = it.key();
    if (key.size() < 8) return bad("short key");
    const uint64_t tag = ExtractTag(key);
    if ((tag & 0xff) != kTypeRangeDeletion) return bad("entry of another type");
    RangeTombstone t;
    t.start = ExtractUserKey(key).ToString();
    t.end = it.value().ToString();
    t.seq = tag >> 8;
    if (ucmp->Compare(t.start, t.end) >= 0) return bad("empty range");
    if (t.seq < properties_.smallest_seqno || t.seq > properties_.largest_seqno) {
      return bad("sequence number outside the table's");
    }
    if (!tombstones.empty() && options_.comparator->Compare(prev, key) >= 0) {
      return bad("entries out of order");
    }
    prev.assign(key.data(), key.size());
    tombstones.push_back(std::move(t));
  }
  if (!it.status().ok()) return bad(it.status().ToString().c_str());
  if (tombstones.size() != properties_.num_range_deletions || tombstones.empty()) {
    return bad("entry count differs from the properties");
  }
  if (out != nullptr) {
    *out = std::make_shared<const FragmentedRangeTombstoneList>(ucmp, std::move(tombstones));
  }
  return Status::OK();
}

Status TableReader::ReadFilter() {
  if (filter_handle_.size() == 0) return Status::OK();
  Status s = ReadBlock(file_.get(), file_size_, options_.file_name, filter_handle_, true,
                       &filter_contents_);
  if (!s.ok()) return s;
  CountBlockRead(filter_handle_);
  PerfCount(&PerfContext::filter_block_read_count);
  filter_ = std::make_unique<FilterBlockReader>(filter_contents_.data);
  // A prefix-only filter says so in its own kind byte, which older readers do not take for a
  // key filter; the properties say the same.
  whole_key_filter_ =
      filter_->kind() == kCacheLocalBloomKind && properties_.whole_key_filtering != 0;
  const SliceTransform* extractor = options_.prefix_extractor;
  prefix_filter_ = extractor != nullptr && !properties_.prefix_extractor.empty() &&
                   properties_.prefix_extractor == extractor->Name();
  return Status::OK();
}

bool TableReader::KeyMayMatch(const Slice& user_key) const {
  if (filter_ == nullptr) return true;
  if (whole_key_filter_) return filter_->KeyMayMatch(user_key);
  if (prefix_filter_ && options_.prefix_extractor->InDomain(user_key)) {
    return filter_->KeyMayMatch(options_.prefix_extractor->Transform(user_key));
  }
  return true;
}

bool TableReader::PrefixMayMatch(const Slice& prefix) const {
  if (!prefix_filter_) return true;
  RecordTick(options_.statistics, BLOOM_FILTER_PREFIX_CHECKED);
  if (filter_->KeyMayMatch(prefix)) return true;
  RecordTick(options_.statistics, BLOOM_FILTER_PREFIX_USEFUL);
  return false;
}

// ---- TableReader: the block cache ----

bool TableReader::LookupCachedBlock(const BlockHandle& handle, BlockRef* ref) const {
  SHALE_ASSERT(ref->get() == nullptr);  // an empty ref: nothing it held can leak
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

void TableReader::PrefetchCachedBlock(const BlockHandle& handle) const {
  Cache* cache = options_.block_cache.get();
  if (cache == nullptr) return;
  char key[kCacheKeySize];
  CacheKey(handle, key);
  cache->Prefetch(Slice(key, sizeof(key)));
}

void TableReader::CacheKey(const BlockHandle& handle, char* key) const {
  EncodeFixed64(key, cache_id_);
  EncodeFixed64(key + 8, handle.offset());
}

void TableReader::InstallBlock(const ReadOptions& options, const BlockHandle& handle,
                               BlockContents contents, BlockRef* ref) const {
  SHALE_ASSERT(ref->get() == nullptr);  // an empty ref: nothing it held can leak
  // contents were read from handle, which the read checked against the file's size: the
  // cache key (this file's id, the block's offset) names bytes of this file.
  SHALE_ASSERT(BlockWithinFile(handle, file_size_));
  auto block = std::make_unique<Block>(std::move(contents));
  Cache* cache = options_.block_cache.get();
  if (cache != nullptr && options.fill_cache) {
    // A cached block is searched again and again: give it the index its seeks search (data
    // keys are internal keys, ordered by their bytes under a bytewise user comparator).
    if (bytewise_) block->BuildRestartPrefixIndex();
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
  return ReadDataBlock(options, handle, ref, readahead);
}

void TableReader::RequestReadRate(const ReadOptions& options, const BlockHandle& handle) const {
  if (options.rate_limiter_priority != IOPriority::kTotal && options_.rate_limiter != nullptr &&
      options_.rate_limiter->IsRateLimited(RateLimiter::OpType::kRead)) {
    options_.rate_limiter->Request(static_cast<int64_t>(handle.size() + kBlockTrailerSize),
                                   options.rate_limiter_priority, options_.statistics);
  }
}

Status TableReader::ReadDataBlock(const ReadOptions& options, const BlockHandle& handle,
                                  BlockRef* ref, ReadaheadBuffer* readahead) const {
  SHALE_ASSERT(ref->get() == nullptr);
  RequestReadRate(options, handle);
  const uint64_t start = ReadStart();
  PerfTimer timer(&PerfContext::block_read_time);
  BlockContents contents;
  Status s = readahead != nullptr
                 ? readahead->ReadBlock(file_.get(), file_size_, options_.file_name, handle,
                                        options.verify_checksums, &contents)
                 : ReadBlock(file_.get(), file_size_, options_.file_name, handle,
                             options.verify_checksums, &contents);
  RecordReadMicros(start);
  timer.Stop();
  if (!s.ok()) return s;
  CountBlockRead(handle);
  InstallBlock(options, handle, std::move(contents), ref);
  return Status::OK();
}

uint64_t TableReader::ReadStart() const { return options_.statistics != nullptr ? NowMicros() : 0; }

void TableReader::RecordReadMicros(uint64_t start) const {
  if (options_.statistics != nullptr) {
    options_.statistics->recordInHistogram(SST_READ_MICROS, NowMicros() - start);
  }
}

Status TableReader::CompleteBlockRead(const ReadOptions& options, const BlockHandle& handle,
                                      BlockReadRequest* read, uint64_t start,
                                      uint64_t PerfContext::*async_counter, BlockRef* ref) const {
  RecordReadMicros(start);
  BlockContents contents;
  Status s = read->Finish(options_.file_name, options.verify_checksums, &contents);
  if (!s.ok()) return s;
  CountBlockRead(handle);
  PerfCount(async_counter);
  InstallBlock(options, handle, std::move(contents), ref);
  return Status::OK();
}

Task TableReader::ReadDataBlockAsync(ReadOptions options, BlockHandle handle, BlockRef* ref,
                                     Status* status, AsyncIo* io) const {
  SHALE_ASSERT(ref->get() == nullptr);
  RequestReadRate(options, handle);
  BlockReadRequest read;
  *status = read.Prepare(file_.get(), file_size_, options_.file_name, handle);
  if (!status->ok()) co_return;
  ReadRequest* request = read.request();
  const uint64_t start = ReadStart();
  co_await io->ReadAll(file_.get(), &request, 1);
  *status =
      CompleteBlockRead(options, handle, &read, start, &PerfContext::iter_async_read_count, ref);
}

// ---- TableReader: point lookups ----

Status TableReader::ScanBlock(const BlockRef& ref, const BlockHandle& handle,
                              const Slice& internal_key, GetContext* ctx, bool* matched,
                              bool* done) const {
  SHALE_ASSERT(ref.get() != nullptr);
  const Comparator* ucmp = options_.comparator->user_comparator();
  const Slice user_key = ExtractUserKey(internal_key);
  BlockIter it;
  ref.get()->InitIterator(options_.comparator, &it);
  const Pinner pinner =
      ref.cached() ? Pinner{&PinCachedBlock, const_cast<BlockRef*>(&ref), ref.get()} : Pinner{};
  for (it.Seek(internal_key); it.Valid(); it.Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(it.key(), &parsed)) {
      return BadInternalKey(options_.file_name, handle.offset());
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
    return DataBlockCorruption(options_.file_name, handle.offset(), it.status());
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
      return BadIndexEntry(options_.file_name);
    }
    BlockRef ref;
    Status s = GetDataBlock(options, handle, &ref);
    if (!s.ok()) return s;
    s = ScanBlock(ref, handle, internal_key, ctx, matched, &done);
    if (!s.ok()) return s;
  }
  if (!index->status().ok()) {
    return IndexBlockCorruption(options_.file_name, index->status());
  }
  return Status::OK();
}

Status TableReader::Get(const ReadOptions& options, const Slice& internal_key,
                        GetContext* ctx) const {
  return Get(options, internal_key, whole_key_filter_ ? Hash64(ExtractUserKey(internal_key)) : 0,
             ctx);
}

Status TableReader::Get(const ReadOptions& options, const Slice& internal_key, uint64_t hash,
                        GetContext* ctx) const {
  // Before the filter: a key it rules out may still be covered.
  ApplyRangeTombstones(internal_key, ctx);
  if (!FilterMayMatch(ExtractUserKey(internal_key), hash)) {
    ctx->EndIfCovered();
    return Status::OK();
  }
  BlockIter index;
  InitIndexIterator(&index);
  index.Seek(IndexTarget(internal_key));
  bool matched = false;
  Status s = GetFromIndex(options, &index, internal_key, ctx, &matched);
  if (matched && filter_ != nullptr)
    RecordTick(options_.statistics, BLOOM_FILTER_FULL_TRUE_POSITIVE);
  if (s.ok()) ctx->EndIfCovered();
  return s;
}

// ---- TableReader: iterators and verification ----

std::unique_ptr<InternalIterator> TableReader::NewIndexIterator() const {
  return index_block_->NewIterator(index_comparator_);
}

uint64_t TableReader::ApproximateOffsetOf(const Slice& internal_key) const {
  auto index = NewIndexIterator();
  index->Seek(IndexTarget(internal_key));
  if (index->Valid()) {
    Slice v = index->value();
    BlockHandle handle;
    if (handle.DecodeFrom(&v).ok()) return handle.offset();
  }
  // Past the last block (or an index entry that does not decode): the end of the data.
  return std::min(properties_.data_size, file_size_);
}

Status TableReader::ApproximateKeyAnchors(size_t max_anchors,
                                          std::vector<KeyAnchor>* anchors) const {
  SHALE_ASSERT(max_anchors > 0);
  anchors->clear();
  auto index = NewIndexIterator();
  size_t blocks = 0;
  for (index->SeekToFirst(); index->Valid(); index->Next()) blocks++;
  if (!index->status().ok()) return Annotate(index->status());
  const size_t per_anchor = std::max<size_t>(1, (blocks + max_anchors - 1) / max_anchors);
  uint64_t bytes = 0;
  size_t i = 0;
  for (index->SeekToFirst(); index->Valid(); index->Next(), i++) {
    Slice v = index->value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&v).ok()) {
      return Status::Corruption(options_.file_name + ": bad index entry");
    }
    bytes += handle.size();
    if ((i + 1) % per_anchor == 0 || i + 1 == blocks) {
      Slice user_key;
      if (!IndexUserKey(index->key(), &user_key)) return BadIndexEntry(options_.file_name);
      anchors->push_back(KeyAnchor{user_key.ToString(), bytes});
      bytes = 0;
    }
  }
  return Annotate(index->status());
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
  // The separator before the block's: the block's first key is above it (and the keys after
  // it above that one).
  std::string prev_separator;
  bool have_prev_separator = false;
  bool first = true;
  for (index->SeekToFirst(); index->Valid(); index->Next()) {
    Slice v = index->value();
    BlockHandle handle;
    if (!handle.DecodeFrom(&v).ok()) return BadIndexEntry(options_.file_name);
    const Slice separator = index->key();
    BlockContents contents;
    // Bypass the cache: the point is to read the bytes on disk.
    Status s = ReadBlock(file_.get(), file_size_, options_.file_name, handle, true, &contents);
    if (!s.ok()) return s;
    Block block(std::move(contents));
    BlockIter it;
    block.InitIterator(options_.comparator, &it);
    bool block_start = true;
    for (it.SeekToFirst(); it.Valid(); it.Next()) {
      ParsedInternalKey parsed;
      if (!ParseInternalKey(it.key(), &parsed)) {
        return BadInternalKey(options_.file_name, handle.offset());
      }
      if (!first && options_.comparator->Compare(prev, it.key()) >= 0) {
        return Status::Corruption(fmt::format("{}: keys out of order in block at offset {}",
                                              options_.file_name, handle.offset()));
      }
      const Slice target = IndexTarget(it.key());
      if (index_comparator_->Compare(target, separator) > 0) {
        return Status::Corruption(fmt::format("{}: key beyond its index separator at offset {}",
                                              options_.file_name, handle.offset()));
      }
      if (block_start && have_prev_separator &&
          index_comparator_->Compare(target, prev_separator) <= 0) {
        return Status::Corruption(
            fmt::format("{}: key not above the previous index separator at offset {}",
                        options_.file_name, handle.offset()));
      }
      prev.assign(it.key().data(), it.key().size());
      first = false;
      block_start = false;
    }
    prev_separator.assign(separator.data(), separator.size());
    have_prev_separator = true;
    if (!it.status().ok()) {
      return DataBlockCorruption(options_.file_name, handle.offset(), it.status());
    }
  }
  if (!index->status().ok()) {
    return IndexBlockCorruption(options_.file_name, index->status());
  }
  if (range_del_handle_.size() > 0) {
    BlockContents contents;
    Status s =
        ReadBlock(file_.get(), file_size_, options_.file_name, range_del_handle_, true, &contents);
    if (!s.ok()) return s;
    s = DecodeRangeDeletions(std::move(contents), nullptr);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace shale
