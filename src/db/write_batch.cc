// WriteBatch encoding (also the WAL record payload):
//   batch     := sequence:fixed64 count:fixed32 record*
//   record    := kTypeValue:u8    varstring(key) varstring(value)
//              | kTypeDeletion:u8 varstring(key)
//              | kTypeMerge:u8    varstring(key) varstring(operand)
//              | kTypeSingleDeletion:u8 varstring(key)
//              | 0x5:u8 family:varint32 varstring(key) varstring(value)     (a family's value)
//              | 0x4:u8 family:varint32 varstring(key)                      (its deletion)
//              | 0x6:u8 family:varint32 varstring(key) varstring(operand)   (its merge)
//              | 0x8:u8 family:varint32 varstring(key)                      (its single deletion)
//              | kTypeRangeDeletion (0xF):u8 varstring(begin) varstring(end)
//              | 0xE:u8 family:varint32 varstring(begin) varstring(end)     (its range deletion)
//   varstring := length:varint32 bytes
// The default family's type bytes are the ValueType values of src/base/dbformat.h; the family
// forms are RocksDB's bytes. The default family (id 0) is always written without an id. Record i of
// a batch written at sequence s gets sequence s + i.
#include "shale/write_batch.h"

#include <functional>

#include "memtable/memtable.h"
#include "shale/column_family.h"
#include "shale/db.h"
#include "src/db/write_batch_internal.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

// Batch type bytes of records that carry a column family id.
constexpr uint8_t kBatchFamilyDeletion = 0x4;
constexpr uint8_t kBatchFamilyValue = 0x5;
constexpr uint8_t kBatchFamilyMerge = 0x6;
constexpr uint8_t kBatchFamilySingleDeletion = 0x8;
constexpr uint8_t kBatchFamilyRangeDeletion = 0xE;

Status UnknownFamily(uint32_t id) {
  return Status::InvalidArgument("column family " + std::to_string(id) + " does not exist");
}

uint32_t FamilyId(ColumnFamilyHandle* column_family) {
  return column_family == nullptr ? 0 : column_family->GetID();
}

Status CheckSizes(const Slice& key, const Slice* value) {
  if (key.size() > DB::kMaxKeySize) {
    return Status::InvalidArgument("key too large", std::to_string(key.size()) + " bytes");
  }
  if (value != nullptr && value->size() > DB::kMaxValueSize) {
    return Status::InvalidArgument("value too large", std::to_string(value->size()) + " bytes");
  }
  return Status::OK();
}

// Decodes one record from *input. Corruption on malformed bytes.
Status ReadRecord(Slice* input, ValueType* type, uint32_t* family, Slice* key, Slice* value) {
  if (input->empty()) return Status::Corruption("write batch: truncated record");
  uint8_t t = static_cast<uint8_t>((*input)[0]);
  input->remove_prefix(1);
  *family = 0;
  switch (t) {
    case kBatchFamilyValue:
    case kBatchFamilyDeletion:
    case kBatchFamilyMerge:
    case kBatchFamilySingleDeletion:
    case kBatchFamilyRangeDeletion:
      if (!GetVarint32(input, family)) {
        return Status::Corruption("write batch: bad column family id");
      }
      t = t == kBatchFamilyValue           ? kTypeValue
          : t == kBatchFamilyDeletion      ? kTypeDeletion
          : t == kBatchFamilyMerge         ? kTypeMerge
          : t == kBatchFamilyRangeDeletion ? kTypeRangeDeletion
                                           : kTypeSingleDeletion;
      break;
    default:
      break;
  }
  switch (t) {
    case kTypeValue:
    case kTypeMerge:
      if (!GetLengthPrefixedSlice(input, key) || !GetLengthPrefixedSlice(input, value)) {
        return Status::Corruption("write batch: bad put/merge record");
      }
      break;
    case kTypeRangeDeletion:
      if (!GetLengthPrefixedSlice(input, key) || !GetLengthPrefixedSlice(input, value)) {
        return Status::Corruption("write batch: bad range deletion record");
      }
      break;
    case kTypeDeletion:
    case kTypeSingleDeletion:
      if (!GetLengthPrefixedSlice(input, key)) {
        return Status::Corruption("write batch: bad delete record");
      }
      *value = Slice();
      break;
    default:
      return Status::Corruption("write batch: unknown record type", std::to_string(t));
  }
  *type = static_cast<ValueType>(t);
  return Status::OK();
}

}  // namespace

WriteBatch::WriteBatch() { Clear(); }

WriteBatch::WriteBatch(WriteBatch&& other) noexcept
    : rep_(std::move(other.rep_)),
      has_column_family_records_(other.has_column_family_records_),
      has_range_deletions_(other.has_range_deletions_) {
  other.Clear();  // the header fits the string's inline buffer: no allocation
}

WriteBatch& WriteBatch::operator=(WriteBatch&& other) noexcept {
  if (this != &other) {
    rep_ = std::move(other.rep_);
    has_column_family_records_ = other.has_column_family_records_;
    has_range_deletions_ = other.has_range_deletions_;
    other.Clear();
  }
  return *this;
}

void WriteBatch::Clear() {
  rep_.clear();
  rep_.resize(WriteBatchInternal::kHeader, '\0');
  has_column_family_records_ = false;
  has_range_deletions_ = false;
}

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

Status WriteBatch::Add(uint8_t type, uint32_t column_family_id, const Slice& key,
                       const Slice* value) {
  // A range deletion's value is its end key.
  Status s = type == kTypeRangeDeletion ? CheckSizes(*value, nullptr) : Status::OK();
  if (s.ok()) s = CheckSizes(key, type == kTypeRangeDeletion ? nullptr : value);
  if (!s.ok()) return s;
  WriteBatchInternal::SetCount(this, Count() + 1);
  if (type == kTypeRangeDeletion) has_range_deletions_ = true;
  if (column_family_id == 0) {
    rep_.push_back(static_cast<char>(type));
  } else {
    rep_.push_back(static_cast<char>(type == kTypeValue           ? kBatchFamilyValue
                                     : type == kTypeDeletion      ? kBatchFamilyDeletion
                                     : type == kTypeMerge         ? kBatchFamilyMerge
                                     : type == kTypeRangeDeletion ? kBatchFamilyRangeDeletion
                                                                  : kBatchFamilySingleDeletion));
    PutVarint32(&rep_, column_family_id);
    has_column_family_records_ = true;
  }
  PutLengthPrefixedSlice(&rep_, key);
  if (value != nullptr) PutLengthPrefixedSlice(&rep_, *value);
  return Status::OK();
}

Status WriteBatch::Put(const Slice& key, const Slice& value) {
  return Add(kTypeValue, 0, key, &value);
}

Status WriteBatch::Delete(const Slice& key) { return Add(kTypeDeletion, 0, key, nullptr); }

Status WriteBatch::Merge(const Slice& key, const Slice& operand) {
  return Add(kTypeMerge, 0, key, &operand);
}

Status WriteBatch::SingleDelete(const Slice& key) {
  return Add(kTypeSingleDeletion, 0, key, nullptr);
}

Status WriteBatch::SingleDelete(ColumnFamilyHandle* column_family, const Slice& key) {
  return Add(kTypeSingleDeletion, FamilyId(column_family), key, nullptr);
}

Status WriteBatch::DeleteRange(const Slice& begin_key, const Slice& end_key) {
  return Add(kTypeRangeDeletion, 0, begin_key, &end_key);
}

Status WriteBatch::DeleteRange(ColumnFamilyHandle* column_family, const Slice& begin_key,
                               const Slice& end_key) {
  return Add(kTypeRangeDeletion, FamilyId(column_family), begin_key, &end_key);
}

Status WriteBatch::Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value) {
  return Add(kTypeValue, FamilyId(column_family), key, &value);
}

Status WriteBatch::Delete(ColumnFamilyHandle* column_family, const Slice& key) {
  return Add(kTypeDeletion, FamilyId(column_family), key, nullptr);
}

Status WriteBatch::Merge(ColumnFamilyHandle* column_family, const Slice& key,
                         const Slice& operand) {
  return Add(kTypeMerge, FamilyId(column_family), key, &operand);
}

Status WriteBatch::Handler::PutCF(uint32_t column_family_id, const Slice& key, const Slice& value) {
  if (column_family_id != 0) return UnknownFamily(column_family_id);
  return Put(key, value);
}

Status WriteBatch::Handler::DeleteCF(uint32_t column_family_id, const Slice& key) {
  if (column_family_id != 0) return UnknownFamily(column_family_id);
  return Delete(key);
}

Status WriteBatch::Handler::MergeCF(uint32_t column_family_id, const Slice& key,
                                    const Slice& operand) {
  if (column_family_id != 0) return UnknownFamily(column_family_id);
  return Merge(key, operand);
}

Status WriteBatch::Handler::SingleDelete(const Slice&) {
  return Status::NotSupported("this WriteBatch::Handler does not handle SingleDelete records");
}

Status WriteBatch::Handler::SingleDeleteCF(uint32_t column_family_id, const Slice& key) {
  if (column_family_id != 0) return UnknownFamily(column_family_id);
  return SingleDelete(key);
}

Status WriteBatch::Handler::DeleteRange(const Slice&, const Slice&) {
  return Status::NotSupported("this WriteBatch::Handler does not handle DeleteRange records");
}

Status WriteBatch::Handler::DeleteRangeCF(uint32_t column_family_id, const Slice& begin_key,
                                          const Slice& end_key) {
  if (column_family_id != 0) return UnknownFamily(column_family_id);
  return DeleteRange(begin_key, end_key);
}

Status WriteBatch::Iterate(Handler* handler) const {
  if (rep_.size() < WriteBatchInternal::kHeader) {
    return Status::Corruption("write batch: shorter than its header");
  }
  Slice input(rep_);
  input.remove_prefix(WriteBatchInternal::kHeader);
  uint32_t found = 0;
  while (!input.empty()) {
    ValueType type = kTypeValue;
    uint32_t family = 0;
    Slice key;
    Slice value;
    Status s = ReadRecord(&input, &type, &family, &key, &value);
    if (!s.ok()) return s;
    found++;
    switch (type) {
      case kTypeValue:
        s = handler->PutCF(family, key, value);
        break;
      case kTypeDeletion:
        s = handler->DeleteCF(family, key);
        break;
      case kTypeMerge:
        s = handler->MergeCF(family, key, value);
        break;
      case kTypeSingleDeletion:
        s = handler->SingleDeleteCF(family, key);
        break;
      case kTypeRangeDeletion:
        s = handler->DeleteRangeCF(family, key, value);
        break;
    }
    if (!s.ok()) return s;
  }
  if (found != Count()) {
    return Status::Corruption(
        "write batch: count mismatch",
        std::to_string(Count()) + " in header, " + std::to_string(found) + " records");
  }
  return Status::OK();
}

uint32_t WriteBatchInternal::Count(const WriteBatch* batch) {
  return DecodeFixed32(batch->rep_.data() + 8);
}

void WriteBatchInternal::SetCount(WriteBatch* batch, uint32_t n) {
  EncodeFixed32(batch->rep_.data() + 8, n);
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch* batch) {
  return DecodeFixed64(batch->rep_.data());
}

void WriteBatchInternal::SetSequence(WriteBatch* batch, SequenceNumber seq) {
  EncodeFixed64(batch->rep_.data(), seq);
}

Status WriteBatchInternal::SetContents(WriteBatch* batch, const Slice& contents) {
  if (contents.size() < kHeader) return Status::Corruption("write batch: shorter than its header");
  batch->rep_.assign(contents.data(), contents.size());
  // Unknown until the records are read: DB::Write validates such a batch whole.
  batch->has_column_family_records_ = true;
  batch->has_range_deletions_ = true;
  return Status::OK();
}

void WriteBatchInternal::Append(WriteBatch* dst, const WriteBatch* src) {
  SetCount(dst, Count(dst) + Count(src));
  dst->has_column_family_records_ |= src->has_column_family_records_;
  dst->has_range_deletions_ |= src->has_range_deletions_;
  dst->rep_.append(src->rep_.data() + kHeader, src->rep_.size() - kHeader);
}

Status WriteBatchInternal::Validate(const WriteBatch* batch) {
  // Iterate checks every record and the count.
  class Nop : public WriteBatch::Handler {
   public:
    Status Put(const Slice&, const Slice&) override { return Status::OK(); }
    Status Delete(const Slice&) override { return Status::OK(); }
    Status Merge(const Slice&, const Slice&) override { return Status::OK(); }
    Status SingleDelete(const Slice&) override { return Status::OK(); }
    Status DeleteRange(const Slice&, const Slice&) override { return Status::OK(); }
  } nop;
  return batch->Iterate(&nop);
}

Status WriteBatchInternal::Validate(const WriteBatch* batch,
                                    const std::function<bool(uint32_t)>& known) {
  class Checker : public RecordHandler {
   public:
    explicit Checker(const std::function<bool(uint32_t)>& known) : known_(known) {}
    Status Record(uint32_t id, ValueType, const Slice&, const Slice*) override {
      if (id == 0 || known_(id)) return Status::OK();
      return Status::InvalidArgument("column family " + std::to_string(id) + " does not exist");
    }

   private:
    const std::function<bool(uint32_t)>& known_;
  } checker(known);
  return batch->Iterate(&checker);
}

std::vector<WriteBatch> WriteBatchInternal::KeptRuns(const WriteBatch* batch,
                                                     SequenceNumber first_seq,
                                                     const std::function<bool(uint32_t)>& keep) {
  class Splitter : public RecordHandler {
   public:
    Splitter(const std::function<bool(uint32_t)>& keep, SequenceNumber seq)
        : keep_(keep), seq_(seq) {}
    Status Record(uint32_t id, ValueType type, const Slice& key, const Slice* value) override {
      const SequenceNumber seq = seq_++;
      if (!keep_(id)) {
        in_run_ = false;
        return Status::OK();
      }
      if (!in_run_) {
        runs.emplace_back();
        SetSequence(&runs.back(), seq);
        in_run_ = true;
      }
      return Add(&runs.back(), type, id, key, value);
    }
    std::vector<WriteBatch> runs;

   private:
    const std::function<bool(uint32_t)>& keep_;
    SequenceNumber seq_;
    bool in_run_ = false;
  } splitter(keep, first_seq);
  Status s = batch->Iterate(&splitter);
  SHALE_ASSERT(s.ok());  // REQUIRES: a valid batch; re-adding its records cannot fail
  s.PermitUncheckedError();
  return std::move(splitter.runs);
}

bool WriteBatchInternal::HasMerge(const WriteBatch* batch) {
  class MergeFinder : public WriteBatch::Handler {
   public:
    Status Put(const Slice&, const Slice&) override { return Status::OK(); }
    Status Delete(const Slice&) override { return Status::OK(); }
    Status Merge(const Slice&, const Slice&) override { return Status::Aborted("found"); }
    Status PutCF(uint32_t, const Slice&, const Slice&) override { return Status::OK(); }
    Status DeleteCF(uint32_t, const Slice&) override { return Status::OK(); }
    Status MergeCF(uint32_t, const Slice&, const Slice&) override {
      return Status::Aborted("found");
    }
    Status SingleDeleteCF(uint32_t, const Slice&) override { return Status::OK(); }
    Status DeleteRangeCF(uint32_t, const Slice&, const Slice&) override { return Status::OK(); }
  } finder;
  return batch->Iterate(&finder).IsAborted();
}

Status WriteBatchInternal::InsertInto(const WriteBatch* batch, SequenceNumber first_seq,
                                      const std::function<MemTable*(uint32_t)>& mem_of) {
  class Inserter : public RecordHandler {
   public:
    Inserter(const std::function<MemTable*(uint32_t)>& mem_of, SequenceNumber seq)
        : mem_of_(mem_of), seq_(seq) {}
    Status Record(uint32_t id, ValueType type, const Slice& key, const Slice* value) override {
      if (id != last_id_ || last_mem_ == nullptr) {
        last_id_ = id;
        last_mem_ = mem_of_(id);
      }
      const SequenceNumber seq = seq_++;  // spent also by a skipped record
      if (last_mem_ == nullptr) return Status::OK();
      if (type == kTypeRangeDeletion) {
        last_mem_->AddRangeDeletion(seq, key, *value);
      } else {
        last_mem_->Add(seq, type, key, value ? *value : Slice());
      }
      return Status::OK();
    }

   private:
    const std::function<MemTable*(uint32_t)>& mem_of_;
    SequenceNumber seq_;
    uint32_t last_id_ = 0;
    MemTable* last_mem_ = nullptr;
  } inserter(mem_of, first_seq);
  return batch->Iterate(&inserter);
}

Status WriteBatchInternal::InsertInto(const WriteBatch* batch, SequenceNumber first_seq,
                                      MemTable* mem) {
  class Inserter : public WriteBatch::Handler {
   public:
    Inserter(MemTable* mem, SequenceNumber seq) : mem_(mem), seq_(seq) {}
    Status Put(const Slice& key, const Slice& value) override {
      mem_->Add(seq_++, kTypeValue, key, value);
      return Status::OK();
    }
    Status Delete(const Slice& key) override {
      mem_->Add(seq_++, kTypeDeletion, key, Slice());
      return Status::OK();
    }
    Status Merge(const Slice& key, const Slice& operand) override {
      mem_->Add(seq_++, kTypeMerge, key, operand);
      return Status::OK();
    }
    Status SingleDelete(const Slice& key) override {
      mem_->Add(seq_++, kTypeSingleDeletion, key, Slice());
      return Status::OK();
    }
    Status DeleteRange(const Slice& begin_key, const Slice& end_key) override {
      mem_->AddRangeDeletion(seq_++, begin_key, end_key);
      return Status::OK();
    }

   private:
    MemTable* mem_;
    SequenceNumber seq_;
  } inserter(mem, first_seq);
  return batch->Iterate(&inserter);
}

}  // namespace shale
