// Raw bytes as a WriteBatch representation, as a WAL record hands it to recovery
// (include/shale/write_batch.h):
//   bytes [0, 8)  : sequence (fixed64)     bytes [8, 12): count (fixed32)
//   the rest      : records: type byte, [family varint32 for types 0x4-0x6 and 0x8],
//                   varstring key, varstring value (none for a deletion or single deletion)
// Fewer than 12 bytes must be Corruption from SetContents. Otherwise Iterate with a recording
// Handler (taking every family) fails with Corruption or succeeds, and then:
//   - Validate agrees with Iterate: OK when every record is of the default family, else
//     InvalidArgument; when Iterate fails, Validate fails too (Corruption, or InvalidArgument
//     for a record of another family before the damage); Count() equals the records seen;
//   - a fresh WriteBatch built from the handler calls (same sequence, same families) iterates
//     to the same records; its contents are never longer than the input and equal it byte for byte
//     when they are as long (only over-long varints in the input can make them differ);
//   - appending the batch to that copy (WriteBatchInternal::Append) adds the counts and
//     iterates to both record lists in order;
//   - when the sequence range is one recovery accepts (first >= 1, last <= kMaxSequenceNumber)
//     and every record is of the default family, InsertInto a memtable succeeds and the memtable
//     then holds exactly the records, record i at sequence first + i, in internal-key order, and a
//     seek to each user key lands on its newest record.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "memtable/memtable.h"
#include "shale/column_family.h"
#include "shale/comparator.h"
#include "shale/write_batch.h"
#include "src/base/dbformat.h"
#include "src/db/write_batch_internal.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using shale::Slice;
using shale::Status;
using shale::fuzz::Fail;

struct Record {
  shale::ValueType type;
  uint32_t family;
  std::string key;
  std::string value;
  bool operator==(const Record&) const = default;
};

// Collects the records it is handed, of every family. Thread safety: one thread.
class Recorder final : public shale::WriteBatch::Handler {
 public:
  Status Put(const Slice& key, const Slice& value) override { return PutCF(0, key, value); }
  Status Delete(const Slice& key) override { return DeleteCF(0, key); }
  Status Merge(const Slice& key, const Slice& operand) override { return MergeCF(0, key, operand); }
  Status SingleDelete(const Slice& key) override { return SingleDeleteCF(0, key); }
  Status PutCF(uint32_t family, const Slice& key, const Slice& value) override {
    records.push_back({shale::kTypeValue, family, key.ToString(), value.ToString()});
    return Status::OK();
  }
  Status DeleteCF(uint32_t family, const Slice& key) override {
    records.push_back({shale::kTypeDeletion, family, key.ToString(), std::string()});
    return Status::OK();
  }
  Status MergeCF(uint32_t family, const Slice& key, const Slice& operand) override {
    records.push_back({shale::kTypeMerge, family, key.ToString(), operand.ToString()});
    return Status::OK();
  }
  Status SingleDeleteCF(uint32_t family, const Slice& key) override {
    records.push_back({shale::kTypeSingleDeletion, family, key.ToString(), std::string()});
    return Status::OK();
  }
  Status DeleteRange(const Slice& begin, const Slice& end) override {
    return DeleteRangeCF(0, begin, end);
  }
  Status DeleteRangeCF(uint32_t family, const Slice& begin, const Slice& end) override {
    records.push_back({shale::kTypeRangeDeletion, family, begin.ToString(), end.ToString()});
    return Status::OK();
  }

  std::vector<Record> records;
};

// A handle that only names a family id, for rebuilding records of any family.
class FamilyId final : public shale::ColumnFamilyHandle {
 public:
  explicit FamilyId(uint32_t id) : id_(id) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  const shale::Comparator* GetComparator() const override { return shale::BytewiseComparator(); }

 private:
  uint32_t id_;
  std::string name_ = "fuzz";
};

std::vector<Record> RecordsOf(const shale::WriteBatch& batch, const char* what) {
  Recorder r;
  Status s = batch.Iterate(&r);
  if (!s.ok()) Fail(std::string(what) + " does not iterate: " + s.ToString());
  return std::move(r.records);
}

// Checks InsertInto: the memtable holds exactly the point records at their sequence numbers, and
// each non-empty range deletion covers its begin key at its own.
void CheckMemTable(const shale::WriteBatch& batch, const std::vector<Record>& records,
                   shale::SequenceNumber first) {
  static const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  auto* mem = new shale::MemTable(icmp);
  mem->Ref();
  Status s = shale::WriteBatchInternal::InsertInto(&batch, first, mem);
  if (!s.ok()) Fail("InsertInto failed on a valid batch: " + s.ToString());

  // Expected entries in internal-key order: user key ascending, sequence descending.
  using Entry = std::tuple<std::string, shale::SequenceNumber, shale::ValueType, std::string>;
  std::vector<Entry> want;
  size_t ranges = 0;
  const auto tombstones = mem->RangeTombstones();
  for (size_t i = 0; i < records.size(); i++) {
    if (records[i].type != shale::kTypeRangeDeletion) {
      want.emplace_back(records[i].key, first + i, records[i].type, records[i].value);
      continue;
    }
    if (Slice(records[i].key).compare(Slice(records[i].value)) >= 0) continue;  // empty
    ranges++;
    if (tombstones == nullptr ||
        tombstones->MaxCoveringSeq(records[i].key, first + i) < first + i) {
      Fail("memtable lost a range deletion of the batch");
    }
  }
  std::sort(want.begin(), want.end(), [](const Entry& a, const Entry& b) {
    const int c = Slice(std::get<0>(a)).compare(Slice(std::get<0>(b)));
    return c != 0 ? c < 0 : std::get<1>(a) > std::get<1>(b);
  });
  if (mem->num_entries() != want.size() + ranges) {
    Fail("memtable holds " + std::to_string(mem->num_entries()) + " entries, batch has " +
         std::to_string(want.size() + ranges));
  }
  {
    auto it = mem->NewIterator();
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
      shale::ParsedInternalKey p;
      if (i >= want.size() || !shale::ParseInternalKey(it->key(), &p)) {
        Fail("memtable iteration: extra or malformed entry");
      }
      const auto& [key, seq, type, value] = want[i];
      if (p.user_key != Slice(key) || p.sequence != seq || p.type != type ||
          it->value() != Slice(value)) {
        Fail("memtable entry " + std::to_string(i) + " differs from the batch's record");
      }
    }
    if (i != want.size()) Fail("memtable iteration ended early");
    // A seek to each user key at the newest sequence finds that key's newest record.
    for (size_t j = 0; j < want.size(); j++) {
      if (j > 0 && std::get<0>(want[j - 1]) == std::get<0>(want[j])) continue;
      shale::LookupKey lkey(std::get<0>(want[j]), shale::kMaxSequenceNumber);
      it->Seek(lkey.internal_key());
      shale::ParsedInternalKey p;
      if (!it->Valid() || !shale::ParseInternalKey(it->key(), &p) ||
          p.user_key != Slice(std::get<0>(want[j])) || p.sequence != std::get<1>(want[j])) {
        Fail("memtable seek to a batch key missed its newest record");
      }
    }
  }
  mem->Unref();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Slice input(reinterpret_cast<const char*>(data), size);
  shale::WriteBatch batch;
  Status s = shale::WriteBatchInternal::SetContents(&batch, input);
  if (size < shale::WriteBatchInternal::kHeader) {
    if (!s.IsCorruption()) Fail("SetContents accepted a batch shorter than its header");
    return 0;
  }
  if (!s.ok()) Fail("SetContents refused a full header: " + s.ToString());

  Recorder recorder;
  s = batch.Iterate(&recorder);
  const Status valid = shale::WriteBatchInternal::Validate(&batch);
  const std::vector<Record>& records = recorder.records;
  const bool all_default =
      std::all_of(records.begin(), records.end(), [](const Record& r) { return r.family == 0; });
  if (!s.ok()) {
    if (!s.IsCorruption()) Fail("Iterate failed with " + s.ToString());
    if (valid.ok()) Fail("Validate accepted a batch Iterate refuses");
    if (!valid.IsCorruption() && !(valid.IsInvalidArgument() && !all_default)) {
      Fail("Validate refused a damaged batch with " + valid.ToString());
    }
    return 0;
  }
  if (all_default ? !valid.ok() : !valid.IsInvalidArgument()) {
    Fail("Validate disagrees with the records' families: " + valid.ToString());
  }
  if (batch.Count() != records.size()) {
    Fail("Count() is " + std::to_string(batch.Count()) + " but " + std::to_string(records.size()) +
         " records were iterated");
  }

  // Rebuild the batch from the handler calls.
  shale::WriteBatch rebuilt;
  shale::WriteBatchInternal::SetSequence(&rebuilt, shale::WriteBatchInternal::Sequence(&batch));
  for (const Record& r : records) {
    FamilyId family(r.family);
    switch (r.type) {
      case shale::kTypeValue:
        s = rebuilt.Put(&family, r.key, r.value);
        break;
      case shale::kTypeDeletion:
        s = rebuilt.Delete(&family, r.key);
        break;
      case shale::kTypeSingleDeletion:
        s = rebuilt.SingleDelete(&family, r.key);
        break;
      case shale::kTypeRangeDeletion:
        s = rebuilt.DeleteRange(&family, r.key, r.value);
        break;
      default:
        s = rebuilt.Merge(&family, r.key, r.value);
        break;
    }
    if (!s.ok()) return 0;  // over a size limit: only the API refuses those
  }
  const std::string& again = rebuilt.Data();
  if (again.size() > size) Fail("re-encoded batch is longer than the input");
  if (again.size() == size && Slice(again) != input) {
    Fail("re-encoded batch differs from the input");
  }
  if (RecordsOf(rebuilt, "re-encoded batch") != records) {
    Fail("re-encoded batch iterates to other records");
  }
  if (rebuilt.Count() != batch.Count()) Fail("re-encoded batch has another count");

  // Append: counts add, records concatenate.
  shale::WriteBatch both = rebuilt;
  shale::WriteBatchInternal::Append(&both, &batch);
  if (both.Count() != 2 * batch.Count()) Fail("Append did not add the counts");
  std::vector<Record> doubled = records;
  doubled.insert(doubled.end(), records.begin(), records.end());
  if (RecordsOf(both, "appended batch") != doubled) Fail("Append lost or reordered records");

  // Into a memtable, as recovery does, when recovery would accept the sequence range.
  const shale::SequenceNumber first = shale::WriteBatchInternal::Sequence(&batch);
  const uint32_t count = batch.Count();
  if (all_default && count > 0 && first != 0 && first + (count - 1) >= first &&
      first + (count - 1) <= shale::kMaxSequenceNumber) {
    CheckMemTable(batch, records, first);
  }
  return 0;
}
