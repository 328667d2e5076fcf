// BlockBuilder: encodes sorted key/value pairs into one block.
//
//   block   := entry* restart:fixed32[num_restarts] num_restarts:fixed32
//   entry   := shared:varint32 unshared:varint32 value_length:varint32
//              key_delta[unshared] value[value_length]             (BlockValueFormat::kSized)
//            | shared:varint32 unshared:varint32
//              key_delta[unshared] offset:varint64 size:varint64   (BlockValueFormat::kHandle)
// The second form is the index block of table format 3 (table/format.h): every value is a
// BlockHandle, whose two varints end themselves, so no value length is stored.
// Each key is stored as the number of bytes it shares with the previous key plus the rest.
// Every restart_interval entries the full key is stored (shared = 0) and its offset is added to
// the restart array, so a reader can binary-search the restarts and scan forward from one.
// The first entry is always a restart. num_restarts ≥ 1.
//
// Thread safety: none. Ownership: owns its buffer; Finish's result lives until Reset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale {

// How a block's entries hold their values (the grammar above).
enum class BlockValueFormat : uint8_t { kSized, kHandle };

class BlockBuilder {
 public:
  // REQUIRES: restart_interval >= 1.
  explicit BlockBuilder(int restart_interval, BlockValueFormat values = BlockValueFormat::kSized);
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // REQUIRES: key sorts after every key added since Reset (the caller's comparator), and
  // Finish has not been called; with kHandle, value is exactly an encoded BlockHandle.
  void Add(const Slice& key, const Slice& value);
  // The finished block; valid until Reset.
  Slice Finish();
  void Reset();

  // Bytes the block would take if finished now.
  size_t CurrentSizeEstimate() const {
    return buffer_.size() + (restarts_.size() + 1) * sizeof(uint32_t);
  }
  bool empty() const { return buffer_.empty(); }
  uint64_t num_entries() const { return num_entries_; }
  // The last key added (empty before the first Add).
  Slice last_key() const { return last_key_; }

 private:
  const int restart_interval_;
  const BlockValueFormat values_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  int counter_ = 0;  // entries since the last restart
  uint64_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace shale
