// TableProperties: what a table file says about itself, stored in its properties block.
//
//   properties_block := a block (BlockBuilder, restart interval 1) of name → value entries,
//                       names sorted bytewise; integers are varint64, strings raw bytes.
// Names are "shale.<field>" (see table_properties.cc); unknown names are ignored on read, so
// later versions can add fields.
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

struct TableProperties {
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
  uint64_t num_merge_operands = 0;
  // Entries of the range-deletion block (not counted in num_entries).
  uint64_t num_range_deletions = 0;
  uint64_t raw_key_size = 0;  // internal keys, before prefix compression
  uint64_t raw_value_size = 0;
  uint64_t num_data_blocks = 0;
  uint64_t data_size = 0;  // data blocks on disk, trailers included
  uint64_t index_size = 0;
  uint64_t filter_size = 0;
  // "cachelocalbloom" (whole keys, maybe prefixes), "prefixbloom" (prefixes only) or empty
  // for no filter.
  std::string filter_kind;
  uint64_t bloom_millibits_per_key = 0;
  // What the filter holds: whole user keys (1; absent in older tables: 1) and / or the
  // prefixes this extractor gives (its Name(); empty: none).
  uint64_t whole_key_filtering = 1;
  std::string prefix_extractor;
  uint64_t smallest_seqno = 0;
  uint64_t largest_seqno = 0;
  std::string compression;     // "NoCompression" or "ZSTD" (what the builder was asked for)
  std::string comparator;      // the user comparator's name
  std::string merge_operator;  // the merge operator's name ("" when none was set)
  std::string smallest_key;    // internal keys
  std::string largest_key;
  uint64_t format_version = 0;
  // Format 3: 1 when the index block's separators are user keys (table/format.h).
  uint64_t index_key_is_user_key = 0;

  // The properties block contents.
  std::string Encode() const;
  // Parses a properties block; Corruption if it is malformed.
  [[nodiscard]] Status Decode(const Slice& block);
  // "name: value" lines, for tools.
  std::string ToString() const;
};

}  // namespace shale
