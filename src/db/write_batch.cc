// WriteBatch encoding (also the WAL record payload):
//   batch     := sequence:fixed64 count:fixed32 record*
//   record    := kTypeValue:u8    varstring(key) varstring(value)
//              | kTypeDeletion:u8 varstring(key)
//              | kTypeMerge:u8    varstring(key) varstring(operand)
//   varstring := length:varint32 bytes
// The type bytes are the ValueType values of src/base/dbformat.h. Record i of a batch written at
// sequence s gets sequence s + i.
#include "shale/write_batch.h"

#include "memtable/memtable.h"
#include "shale/db.h"
#include "src/db/write_batch_internal.h"
#include "src/util/coding.h"

namespace shale {
namespace {

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
Status ReadRecord(Slice* input, ValueType* type, Slice* key, Slice* value) {
  if (input->empty()) return Status::Corruption("write batch: truncated record");
  uint8_t t = static_cast<uint8_t>((*input)[0]);
  input->remove_prefix(1);
  switch (t) {
    case kTypeValue:
    case kTypeMerge:
      if (!GetLengthPrefixedSlice(input, key) || !GetLengthPrefixedSlice(input, value)) {
        return Status::Corruption("write batch: bad put/merge record");
      }
      break;
    case kTypeDeletion:
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

WriteBatch::WriteBatch(WriteBatch&& other) noexcept : rep_(std::move(other.rep_)) {
  other.Clear();  // the header fits the string's inline buffer: no allocation
}

WriteBatch& WriteBatch::operator=(WriteBatch&& other) noexcept {
  if (this != &other) {
    rep_ = std::move(other.rep_);
    other.Clear();
  }
  return *this;
}

void WriteBatch::Clear() {
  rep_.clear();
  rep_.resize(WriteBatchInternal::kHeader, '\0');
}

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

Status WriteBatch::Put(const Slice& key, const Slice& value) {
  Status s = CheckSizes(key, &value);
  if (!s.ok()) return s;
  WriteBatchInternal::SetCount(this, Count() + 1);
  rep_.push_back(static_cast<char>(kTypeValue));
  PutLengthPrefixedSlice(&rep_, key);
  PutLengthPrefixedSlice(&rep_, value);
  return Status::OK();
}

Status WriteBatch::Delete(const Slice& key) {
  Status s = CheckSizes(key, nullptr);
  if (!s.ok()) return s;
  WriteBatchInternal::SetCount(this, Count() + 1);
  rep_.push_back(static_cast<char>(kTypeDeletion));
  PutLengthPrefixedSlice(&rep_, key);
  return Status::OK();
}

Status WriteBatch::Merge(const Slice& key, const Slice& operand) {
  Status s = CheckSizes(key, &operand);
  if (!s.ok()) return s;
  WriteBatchInternal::SetCount(this, Count() + 1);
  rep_.push_back(static_cast<char>(kTypeMerge));
  PutLengthPrefixedSlice(&rep_, key);
  PutLengthPrefixedSlice(&rep_, operand);
  return Status::OK();
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
    Slice key;
    Slice value;
    Status s = ReadRecord(&input, &type, &key, &value);
    if (!s.ok()) return s;
    found++;
    switch (type) {
      case kTypeValue:
        s = handler->Put(key, value);
        break;
      case kTypeDeletion:
        s = handler->Delete(key);
        break;
      case kTypeMerge:
        s = handler->Merge(key, value);
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
  return Status::OK();
}

void WriteBatchInternal::Append(WriteBatch* dst, const WriteBatch* src) {
  SetCount(dst, Count(dst) + Count(src));
  dst->rep_.append(src->rep_.data() + kHeader, src->rep_.size() - kHeader);
}

Status WriteBatchInternal::Validate(const WriteBatch* batch) {
  // Iterate checks every record and the count.
  class Nop : public WriteBatch::Handler {
   public:
    Status Put(const Slice&, const Slice&) override { return Status::OK(); }
    Status Delete(const Slice&) override { return Status::OK(); }
    Status Merge(const Slice&, const Slice&) override { return Status::OK(); }
  } nop;
  return batch->Iterate(&nop);
}

bool WriteBatchInternal::HasMerge(const WriteBatch* batch) {
  class MergeFinder : public WriteBatch::Handler {
   public:
    Status Put(const Slice&, const Slice&) override { return Status::OK(); }
    Status Delete(const Slice&) override { return Status::OK(); }
    Status Merge(const Slice&, const Slice&) override { return Status::Aborted("found"); }
  } finder;
  return batch->Iterate(&finder).IsAborted();
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

   private:
    MemTable* mem_;
    SequenceNumber seq_;
  } inserter(mem, first_seq);
  return batch->Iterate(&inserter);
}

}  // namespace shale
