// TableBuilder: writes a block-based table file (layout in table/format.h) from internal keys
// added in sorted order.
//
// Data blocks are cut once they reach block_size; the index entry for a finished block is
// added when the next key arrives, as the shortest separator between the block's last key
// and that key (so index keys stay short). Blocks are zstd-compressed when asked and when it
// saves at least 1/8. The filter covers every distinct user key. Range tombstones, added
// apart from the point entries, go to the range-deletion block.
//
// Ownership: writes to a WritableFile it borrows; the caller syncs and closes it after Finish.
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/file_system.h"
#include "shale/options.h"
#include "shale/slice_transform.h"
#include "shale/status.h"
#include "src/base/dbformat.h"
#include "table/block_builder.h"
#include "table/filter_block.h"
#include "table/format.h"
#include "table/table_properties.h"

namespace shale {

struct TableBuilderOptions {
  const InternalKeyComparator* comparator = nullptr;  // required; must outlive the builder
  size_t block_size = 4096;
  int block_restart_interval = 16;
  double bloom_bits_per_key = 10;  // 0: no filter
  CompressionType compression = CompressionType::kNoCompression;
  std::string merge_operator_name;  // recorded in the properties
  // With a filter: the prefixes of keys in the extractor's domain go into it too (null: none),
  // and the whole keys unless whole_key_filtering is false. Both are recorded in the
  // properties. The extractor must outlive the builder.
  const SliceTransform* prefix_extractor = nullptr;
  bool whole_key_filtering = true;
  // kTableFormatVersionCompactIndex (3), or kTableFormatVersion (1: readable by shale
  // releases before format 3; a table with range deletions is then format 2).
  uint32_t format_version = kTableFormatVersionCompactIndex;
};

class TableBuilder {
 public:
  TableBuilder(const TableBuilderOptions& options, WritableFile* file);
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  // Adds an entry. key must be a valid internal key sorting after every key added so far;
  // otherwise InvalidArgument and the builder refuses further work. Also returns the first
  // write error.
  [[nodiscard]] Status Add(const Slice& key, const Slice& value);
  // Adds a range tombstone [start, end) at seq to the range-deletion block. Tombstones arrive
  // fragmented (src/base/range_tombstone.h) and in internal-key order of (start, seq);
  // otherwise, or when start >= end, InvalidArgument and the builder refuses further work.
  // They may come before, between or after the point entries.
  [[nodiscard]] Status AddRangeTombstone(const Slice& start, const Slice& end, SequenceNumber seq);
  // Writes the remaining blocks and the footer. No Add after it.
  [[nodiscard]] Status Finish();
  // Gives up on the file (the caller deletes it).
  void Abandon() { closed_ = true; }

  uint64_t NumEntries() const { return props_.num_entries; }
  // Bytes written so far (the file size after Finish).
  uint64_t FileSize() const { return offset_; }
  const TableProperties& properties() const { return props_; }
  Status status() const { return status_; }

 private:
  void FlushDataBlock();
  // Adds the pending index entry, for the block ending at last_key_: separator is its key.
  void AddIndexEntry(const std::string& separator);
  // Adds user_key (its versions arrive in a row) and its prefix to the filter.
  void AddToFilter(const Slice& user_key);
  // Writes contents (maybe compressed) and its trailer; *handle says where.
  void WriteBlock(const Slice& raw, bool compress, BlockHandle* handle);
  void WriteRaw(const Slice& data);

  const TableBuilderOptions options_;
  WritableFile* const file_;
  uint64_t offset_ = 0;
  Status status_;
  bool closed_ = false;

  BlockBuilder data_block_;
  // The index with internal-key separators, and in format 3, while no user key has entries in
  // two data blocks, the same index with user-key separators, which Finish then writes.
  BlockBuilder index_block_;
  BlockBuilder user_key_index_block_;
  bool index_user_keys_;
  BlockBuilder range_del_block_;
  std::string last_range_del_key_;  // internal key of the last tombstone added
  std::unique_ptr<FilterBlockBuilder> filter_;
  std::string last_key_;
  // The last user key and prefix given to the filter: each goes in once.
  std::string last_filter_key_;
  std::string last_filter_prefix_;
  bool has_filter_prefix_ = false;
  // A finished data block whose index entry waits for the next key.
  bool pending_index_entry_ = false;
  BlockHandle pending_handle_;
  std::string compressed_;  // scratch
  std::string handle_encoding_;
  TableProperties props_;
};

}  // namespace shale
