#include "table/table_builder.h"

#include <cmath>

#include "src/util/invariants.h"

namespace shale {

TableBuilder::TableBuilder(const TableBuilderOptions& options, WritableFile* file)
    : options_(options),
      file_(file),
      data_block_(options.block_restart_interval),
      index_block_(1, options.format_version == kTableFormatVersionCompactIndex
                          ? BlockValueFormat::kHandle
                          : BlockValueFormat::kSized),
      user_key_index_block_(1, BlockValueFormat::kHandle),
      index_user_keys_(options.format_version == kTableFormatVersionCompactIndex),
      range_del_block_(1) {
  SHALE_ASSERT(options_.comparator != nullptr);
  SHALE_ASSERT(options_.format_version == kTableFormatVersion ||
               options_.format_version == kTableFormatVersionCompactIndex);
  // Without whole keys and without an extractor a filter would hold nothing.
  if (options_.bloom_bits_per_key > 0 &&
      (options_.whole_key_filtering || options_.prefix_extractor != nullptr)) {
    filter_ = std::make_unique<FilterBlockBuilder>(
        options_.bloom_bits_per_key,
        options_.whole_key_filtering ? kCacheLocalBloomKind : kPrefixOnlyBloomKind);
    props_.filter_kind = options_.whole_key_filtering ? "cachelocalbloom" : "prefixbloom";
    props_.bloom_millibits_per_key =
        static_cast<uint64_t>(std::llround(options_.bloom_bits_per_key * 1000));
    props_.whole_key_filtering = options_.whole_key_filtering ? 1 : 0;
    if (options_.prefix_extractor != nullptr) {
      props_.prefix_extractor = options_.prefix_extractor->Name();
    }
  }
  props_.compression = options_.compression == CompressionType::kZSTD ? "ZSTD" : "NoCompression";
  props_.comparator = options_.comparator->user_comparator()->Name();
  props_.merge_operator = options_.merge_operator_name;
  props_.format_version = options_.format_version;
  props_.smallest_seqno = UINT64_MAX;
}

void TableBuilder::AddToFilter(const Slice& user_key) {
  if (props_.num_entries > 0 && user_key == Slice(last_filter_key_)) return;
  last_filter_key_.assign(user_key.data(), user_key.size());
  if (options_.whole_key_filtering) filter_->AddKey(user_key);
  const SliceTransform* extractor = options_.prefix_extractor;
  if (extractor == nullptr || !extractor->InDomain(user_key)) return;
  const Slice prefix = extractor->Transform(user_key);
  if (has_filter_prefix_ && prefix == Slice(last_filter_prefix_)) return;
  // Keys of one prefix are adjacent, so each prefix goes in once.
  filter_->AddKey(prefix);
  last_filter_prefix_.assign(prefix.data(), prefix.size());
  has_filter_prefix_ = true;
}

Status TableBuilder::Add(const Slice& key, const Slice& value) {
  if (!status_.ok()) return status_;
  if (closed_) return status_ = Status::InvalidArgument("TableBuilder::Add after Finish");
  ParsedInternalKey parsed;
  if (!ParseInternalKey(key, &parsed)) {
    return status_ = Status::InvalidArgument("TableBuilder::Add: not an internal key");
  }
  if (props_.num_entries > 0 && options_.comparator->Compare(key, last_key_) <= 0) {
    return status_ = Status::InvalidArgument("TableBuilder::Add: keys out of order");
  }

  if (pending_index_entry_) {
    // The separator lies in [last key of the previous block, this key). Its user key lies
    // below this key's, and an index of user keys can send this key's reads to the next block,
    // unless both blocks hold entries of one user key (the separator then keeps it) or a user
    // comparator gives a shortened key not below this one (as an internal key with the largest
    // tag, still a valid separator): only internal keys tell the blocks apart then.
    options_.comparator->FindShortestSeparator(&last_key_, key);
    if (index_user_keys_ && options_.comparator->user_comparator()->Compare(
                                ExtractUserKey(last_key_), parsed.user_key) >= 0) {
      index_user_keys_ = false;
      user_key_index_block_.Reset();
    }
    AddIndexEntry(last_key_);
  }
  if (filter_ != nullptr) AddToFilter(parsed.user_key);

  if (props_.num_entries == 0) props_.smallest_key.assign(key.data(), key.size());
  last_key_.assign(key.data(), key.size());
  props_.num_entries++;
  props_.raw_key_size += key.size();
  props_.raw_value_size += value.size();
  if (IsDeletion(parsed.type)) props_.num_deletions++;
  if (parsed.type == kTypeMerge) props_.num_merge_operands++;
  props_.smallest_seqno = std::min(props_.smallest_seqno, parsed.sequence);
  props_.largest_seqno = std::max(props_.largest_seqno, parsed.sequence);

  data_block_.Add(key, value);
  if (data_block_.CurrentSizeEstimate() >= options_.block_size) FlushDataBlock();
  return status_;
}

Status TableBuilder::AddRangeTombstone(const Slice& start, const Slice& end, SequenceNumber seq) {
  if (!status_.ok()) return status_;
  if (closed_)
    return status_ = Status::InvalidArgument("TableBuilder::AddRangeTombstone after Finish");
  const Comparator* ucmp = options_.comparator->user_comparator();
  if (seq > kMaxSequenceNumber || ucmp->Compare(start, end) >= 0) {
    return status_ = Status::InvalidArgument("TableBuilder::AddRangeTombstone: empty range");
  }
  std::string key;
  AppendInternalKey(&key, start, seq, kTypeRangeDeletion);
  if (props_.num_range_deletions > 0 &&
      options_.comparator->Compare(key, last_range_del_key_) <= 0) {
    return status_ =
               Status::InvalidArgument("TableBuilder::AddRangeTombstone: tombstones out of order");
  }
  range_del_block_.Add(key, end);
  last_range_del_key_ = std::move(key);
  props_.num_range_deletions++;
  props_.smallest_seqno = std::min(props_.smallest_seqno, seq);
  props_.largest_seqno = std::max(props_.largest_seqno, seq);
  return status_;
}

void TableBuilder::AddIndexEntry(const std::string& separator) {
  handle_encoding_.clear();
  pending_handle_.EncodeTo(&handle_encoding_);
  index_block_.Add(separator, handle_encoding_);
  if (index_user_keys_) user_key_index_block_.Add(ExtractUserKey(separator), handle_encoding_);
  pending_index_entry_ = false;
}

void TableBuilder::FlushDataBlock() {
  if (data_block_.empty() || !status_.ok()) return;
  const uint64_t start = offset_;
  WriteBlock(data_block_.Finish(), /*compress=*/true, &pending_handle_);
  data_block_.Reset();
  if (!status_.ok()) return;
  pending_index_entry_ = true;
  props_.num_data_blocks++;
  props_.data_size += offset_ - start;
}

void TableBuilder::WriteBlock(const Slice& raw, bool compress, BlockHandle* handle) {
  Slice contents = raw;
  CompressionType type = CompressionType::kNoCompression;
  if (compress) {
    type = CompressBlock(raw, options_.compression, &compressed_);
    if (type != CompressionType::kNoCompression) contents = compressed_;
  }
  *handle = BlockHandle(offset_, contents.size());
  std::string trailer;
  AppendBlockTrailer(&trailer, contents, type);
  WriteRaw(contents);
  WriteRaw(trailer);
}

void TableBuilder::WriteRaw(const Slice& data) {
  if (!status_.ok()) return;
  status_ = file_->Append(data);
  if (status_.ok()) offset_ += data.size();
}

Status TableBuilder::Finish() {
  if (!status_.ok()) return status_;
  if (closed_) return Status::InvalidArgument("TableBuilder::Finish called twice");
  FlushDataBlock();
  closed_ = true;
  if (props_.num_entries == 0 && props_.num_range_deletions == 0) props_.smallest_seqno = 0;
  const bool has_range_dels = props_.num_range_deletions > 0;
  if (has_range_dels && props_.format_version == kTableFormatVersion) {
    props_.format_version = kTableFormatVersionWithRangeDeletions;
  }
  props_.largest_key = last_key_;

  if (pending_index_entry_) {
    // The last block's separator only has to be ≥ its last key: shorten it upwards.
    options_.comparator->FindShortSuccessor(&last_key_);
    AddIndexEntry(last_key_);
  }
  props_.index_key_is_user_key = index_user_keys_ ? 1 : 0;

  BlockHandle filter_handle, properties_handle, metaindex_handle, index_handle, range_del_handle;
  if (filter_ != nullptr) {
    const std::string filter = filter_->Finish();
    WriteBlock(filter, /*compress=*/false, &filter_handle);
    props_.filter_size = filter_handle.size() + kBlockTrailerSize;
  }
  if (has_range_dels) WriteBlock(range_del_block_.Finish(), /*compress=*/false, &range_del_handle);
  // The index is written after the properties, so its size is known from the index builder.
  const Slice index_contents =
      index_user_keys_ ? user_key_index_block_.Finish() : index_block_.Finish();
  props_.index_size = index_contents.size() + kBlockTrailerSize;
  WriteBlock(props_.Encode(), /*compress=*/false, &properties_handle);

  BlockBuilder metaindex(1);
  std::string enc;
  if (filter_ != nullptr) {
    filter_handle.EncodeTo(&enc);
    metaindex.Add("shale.filter", enc);
    enc.clear();
  }
  properties_handle.EncodeTo(&enc);
  metaindex.Add("shale.properties", enc);
  if (has_range_dels) {
    enc.clear();
    range_del_handle.EncodeTo(&enc);
    metaindex.Add("shale.range_del", enc);
  }
  WriteBlock(metaindex.Finish(), /*compress=*/false, &metaindex_handle);
  WriteBlock(index_contents, /*compress=*/false, &index_handle);

  Footer footer;
  footer.metaindex_handle = metaindex_handle;
  footer.index_handle = index_handle;
  footer.format_version = static_cast<uint32_t>(props_.format_version);
  std::string footer_encoding;
  footer.EncodeTo(&footer_encoding);
  WriteRaw(footer_encoding);
  if (status_.ok()) status_ = file_->Flush();
  return status_;
}

}  // namespace shale
