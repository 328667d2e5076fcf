// WriteBatch: a group of updates applied atomically, in order.
//
// Format (also the WAL record payload; see src/db/write_batch.cc):
//   batch  := sequence:fixed64 count:fixed32 record*
//   record := kTypeValue    varstring(key) varstring(value)
//           | kTypeDeletion varstring(key)
//           | kTypeMerge    varstring(key) varstring(operand)
//           | kTypeSingleDeletion (0x7) varstring(key)
//           | kTypeRangeDeletion (0xF) varstring(begin) varstring(end)
//           | the same five with a column family id: 0x5 (value), 0x4 (deletion),
//             0x6 (merge), 0x8 (single deletion) or 0xE (range deletion), then
//             family:varint32, then the fields above
//   varstring := length:varint32 bytes
// Records of the default family (id 0) are written without an id.
//
// Thread safety: none; a batch belongs to one thread at a time. DB::Write does not modify it.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class ColumnFamilyHandle;

class WriteBatch {
 public:
  // Visits the records of a batch in order.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status Put(const Slice& key, const Slice& value) = 0;
    virtual Status Delete(const Slice& key) = 0;
    virtual Status Merge(const Slice& key, const Slice& operand) = 0;
    // Every record goes through these, with its family id (0: the default family). By default
    // the default family's records go to the three above and any other family's are refused
    // with InvalidArgument, which stops the iteration.
    virtual Status PutCF(uint32_t column_family_id, const Slice& key, const Slice& value);
    virtual Status DeleteCF(uint32_t column_family_id, const Slice& key);
    virtual Status MergeCF(uint32_t column_family_id, const Slice& key, const Slice& operand);
    // SingleDelete records. By default SingleDelete returns NotSupported (a handler written
    // before them stops instead of dropping one), and SingleDeleteCF acts as the others.
    virtual Status SingleDelete(const Slice& key);
    virtual Status SingleDeleteCF(uint32_t column_family_id, const Slice& key);
    // DeleteRange records, likewise: DeleteRange returns NotSupported by default.
    virtual Status DeleteRange(const Slice& begin_key, const Slice& end_key);
    virtual Status DeleteRangeCF(uint32_t column_family_id, const Slice& begin_key,
                                 const Slice& end_key);
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
  // The same in a family (null: the default family).
  Status Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value);
  Status Delete(ColumnFamilyHandle* column_family, const Slice& key);
  Status Merge(ColumnFamilyHandle* column_family, const Slice& key, const Slice& operand);
  // Deletes the value written to key by the one Put since its last SingleDelete (see
  // DB::SingleDelete for the contract).
  Status SingleDelete(const Slice& key);
  Status SingleDelete(ColumnFamilyHandle* column_family, const Slice& key);
  // Deletes every key in [begin_key, end_key) (see DB::DeleteRange). Both keys are checked
  // against DB::kMaxKeySize; their order is checked by DB::Write, with the family's comparator.
  Status DeleteRange(const Slice& begin_key, const Slice& end_key);
  Status DeleteRange(ColumnFamilyHandle* column_family, const Slice& begin_key,
                     const Slice& end_key);

  void Clear();
  // Number of records.
  uint32_t Count() const;
  // Encoded size in bytes.
  size_t GetDataSize() const { return rep_.size(); }
  // The encoded batch (see the format above).
  const std::string& Data() const { return rep_; }

  // Calls handler for each record in order; Corruption if the encoding is malformed. Stops at
  // the first error a handler returns and returns it (the default PutCF, DeleteCF and MergeCF
  // return InvalidArgument for a family other than the default one).
  Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;
  // Appends one record of family id (after the size checks). type: kTypeValue, kTypeDeletion,
  // kTypeMerge or kTypeSingleDeletion.
  Status Add(uint8_t type, uint32_t column_family_id, const Slice& key, const Slice* value);

  std::string rep_;
  // Some record names a family other than the default one.
  bool has_column_family_records_ = false;
  // Some record is a range deletion.
  bool has_range_deletions_ = false;
};

}  // namespace shale
