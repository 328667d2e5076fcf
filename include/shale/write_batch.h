// WriteBatch: a group of updates applied atomically, in order.
//
// Format (also the WAL record payload; see src/db/write_batch.cc):
//   batch  := sequence:fixed64 count:fixed32 record*
//   record := kTypeValue    varstring(key) varstring(value)
//           | kTypeDeletion varstring(key)
//           | kTypeMerge    varstring(key) varstring(operand)
//   varstring := length:varint32 bytes
//
// Thread safety: none; a batch belongs to one thread at a time. DB::Write does not modify it.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class WriteBatch {
 public:
  // Visits the records of a batch in order.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status Put(const Slice& key, const Slice& value) = 0;
    virtual Status Delete(const Slice& key) = 0;
    virtual Status Merge(const Slice& key, const Slice& operand) = 0;
  };

  WriteBatch();
  WriteBatch(const WriteBatch&) = default;
  WriteBatch& operator=(const WriteBatch&) = default;
  // A moved-from batch is empty and usable.
  WriteBatch(WriteBatch&& other) noexcept;
  WriteBatch& operator=(WriteBatch&& other) noexcept;

  // Each returns InvalidArgument if the key or value is over the size limits (DB::kMaxKeySize,
  // DB::kMaxValueSize) and leaves the batch unchanged then.
  Status Put(const Slice& key, const Slice& value);
  Status Delete(const Slice& key);
  Status Merge(const Slice& key, const Slice& operand);

  void Clear();
  // Number of records.
  uint32_t Count() const;
  // Encoded size in bytes.
  size_t GetDataSize() const { return rep_.size(); }
  // The encoded batch (see the format above).
  const std::string& Data() const { return rep_; }

  // Calls handler for each record in order; Corruption if the encoding is malformed.
  Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;
  std::string rep_;
};

}  // namespace shale
