// WriteBatchInternal: the parts of WriteBatch the DB needs and users must not touch: the
// header fields, raw contents, concatenation for group commit and memtable insertion.
// Thread safety: as WriteBatch (one thread per batch).
#pragma once

#include <cstdint>

#include "shale/slice.h"
#include "shale/status.h"
#include "shale/write_batch.h"
#include "src/base/dbformat.h"

namespace shale {

class MemTable;

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

  // True if a record of the batch may name a family other than the default one: one added
  // through the API does, or the contents were set from bytes (SetContents).
  static bool HasColumnFamilyRecords(const WriteBatch* batch) {
    return batch->has_column_family_records_;
  }

  // True if the batch holds a Merge record (on a malformed batch: one before the damage).
  static bool HasMerge(const WriteBatch* batch);

  // Inserts the records into mem with sequence numbers first_seq, first_seq + 1, ...
  // REQUIRES: the batch is valid (built through the API, or Validate()d).
  static Status InsertInto(const WriteBatch* batch, SequenceNumber first_seq, MemTable* mem);
};

}  // namespace shale
