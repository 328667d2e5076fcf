// Raw bytes as a WAL file: every record read back is decoded as a WriteBatch and applied to a
// memtable, as recovery does. Nothing may crash; damage ends the log with a status.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "memtable/memtable.h"
#include "shale/comparator.h"
#include "shale/file_system.h"
#include "shale/write_batch.h"
#include "src/db/write_batch_internal.h"
#include "wal/log_reader.h"

namespace {

class StringSource final : public shale::SequentialFile {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  shale::Status Read(size_t n, shale::Slice* result, char* scratch) override {
    // Short reads now and then, as a file system may return.
    n = std::min(n, data_.size() - pos_);
    if (n > 1 && (pos_ % 3) == 1) n = n / 2;
    std::memcpy(scratch, data_.data() + pos_, n);
    pos_ += n;
    *result = shale::Slice(scratch, n);
    return shale::Status::OK();
  }
  shale::Status Skip(uint64_t n) override {
    pos_ += std::min<uint64_t>(n, data_.size() - pos_);
    return shale::Status::OK();
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shale::log::Reader reader(
      std::make_unique<StringSource>(std::string(reinterpret_cast<const char*>(data), size)),
      "fuzz.log");
  static const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  auto* mem = new shale::MemTable(icmp);
  mem->Ref();
  shale::Slice record;
  std::string scratch;
  uint64_t seq = 1;
  while (reader.ReadRecord(&record, &scratch)) {
    shale::WriteBatch batch;
    if (!shale::WriteBatchInternal::SetContents(&batch, record).ok()) continue;
    if (!shale::WriteBatchInternal::Validate(&batch).ok()) continue;
    if (shale::WriteBatchInternal::InsertInto(&batch, seq, mem).ok()) seq += batch.Count();
  }
  (void)reader.status();
  mem->Unref();
  return 0;
}
