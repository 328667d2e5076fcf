// WriteBatchInternal: the parts of WriteBatch the DB needs and users must not touch: the
// header fields, raw contents, concatenation for group commit and memtable insertion.
// Thread safety: as WriteBatch (one thread per batch).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "shale/slice.h"
#include "shale/status.h"
#include "shale/write_batch.h"
#include "src/base/dbformat.h"

namespace shale {

class MemTable;

// A WriteBatch::Handler that sees every record, of any family, as one call: Record(family id,
// type, key, value), value null for a deletion.
class RecordHandler : public WriteBatch::Handler {
 public:
  virtual Status Record(uint32_t id, ValueType type, const Slice& key, const Slice* value) = 0;

  Status Put(const Slice& key, const Slice& value) final {
    return Record(0, kTypeValue, key, &value);
  }
  Status Delete(const Slice& key) final { return Record(0, kTypeDeletion, key, nullptr); }
  Status Merge(const Slice& key, const Slice& operand) final {
    return Record(0, kTypeMerge, key, &operand);
  }
  Status PutCF(uint32_t id, const Slice& key, const Slice& value) final {
    return Record(id, kTypeValue, key, &value);
  }
  Status DeleteCF(uint32_t id, const Slice& key) final {
    return Record(id, kTypeDeletion, key, nullptr);
  }
  Status MergeCF(uint32_t id, const Slice& key, const Slice& operand) final {
    return Record(id, kTypeMerge, key, &operand);
  }
  Status SingleDelete(const Slice& key) final {
    return Record(0, kTypeSingleDeletion, key, nullptr);
  }
  Status SingleDeleteCF(uint32_t id, const Slice& key) final {
    return Record(id, kTypeSingleDeletion, key, nullptr);
  }
  // A range deletion: key is its begin, *value its end.
  Status DeleteRange(const Slice& begin_key, const Slice& end_key) final {
    return Record(0, kTypeRangeDeletion, begin_key, &end_key);
  }
  Status DeleteRangeCF(uint32_t id, const Slice& begin_key, const Slice& end_key) final {
    return Record(id, kTypeRangeDeletion, begin_key, &end_key);
  }
};

class WriteBatchInternal {
 public:
  static constexpr size_t kHeader = 12;  // sequence:fixed64 count:fixed32

  static uint32_t Count(const WriteBatch* batch);
  static void SetCount(WriteBatch* batch, uint32_t n);
  static SequenceNumber Sequence(const WriteBatch* batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber seq);

  static Slice Contents(const WriteBatch* batch) { return Slice(batch->rep_); }
  static size_t ByteSize(const WriteBatch* batch) { return batch->rep_.size(); }
  // Replaces the contents with bytes read from a WAL. Corruption if shorter than the header.
  static Status SetContents(WriteBatch* batch, const Slice& contents);

  // Appends src's records to dst (dst's sequence is kept, counts add).
  static void Append(WriteBatch* dst, const WriteBatch* src);

  // Checks the encoding fully: every record well formed, known type, and the record count
  // equal to the header's (Corruption otherwise), and that every record is of the default
  // family (InvalidArgument naming the first other family otherwise).
  static Status Validate(const WriteBatch* batch);
  // As Validate, but a record may name any family known(id) accepts.
  static Status Validate(const WriteBatch* batch, const std::function<bool(uint32_t)>& known);

  // True if a record of the batch may name a family other than the default one: one added
  // through the API does, or the contents were set from bytes (SetContents).
  static bool HasColumnFamilyRecords(const WriteBatch* batch) {
    return batch->has_column_family_records_;
  }
  // True if the batch may hold a range deletion (as above).
  static bool HasRangeDeletions(const WriteBatch* batch) { return batch->has_range_deletions_; }

  // Appends a record of type (kTypeValue, kTypeDeletion, kTypeMerge, kTypeSingleDeletion,
  // kTypeRangeDeletion with the end key as value; value null for a deletion) to family id.
  static Status Add(WriteBatch* batch, ValueType type, uint32_t id, const Slice& key,
                    const Slice* value) {
    return batch->Add(static_cast<uint8_t>(type), id, key, value);
  }
  // The records of batch (written at first_seq) whose family keep(id) accepts, as batches of
  // consecutive sequence numbers, in order: a record left out ends a run.
  static std::vector<WriteBatch> KeptRuns(const WriteBatch* batch, SequenceNumber first_seq,
                                          const std::function<bool(uint32_t)>& keep);

  // True if the batch holds a Merge record (on a malformed batch: one before the damage).
  static bool HasMerge(const WriteBatch* batch);

  // Inserts the records into mem with sequence numbers first_seq, first_seq + 1, ...
  // REQUIRES: the batch is valid (built through the API, or Validate()d).
  static Status InsertInto(const WriteBatch* batch, SequenceNumber first_seq, MemTable* mem);
  // Inserts each record into the memtable of its family, mem_of(id), with sequence numbers as
  // above; a record whose family has none (mem_of returns null: the family was dropped) is
  // skipped, its sequence number spent. REQUIRES: as above.
  static Status InsertInto(const WriteBatch* batch, SequenceNumber first_seq,
                           const std::function<MemTable*(uint32_t)>& mem_of);
};

}  // namespace shale
