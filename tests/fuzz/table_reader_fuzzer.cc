// Table files from untrusted bytes. The first input byte picks the mode:
//   even: the rest of the input is the file itself (footer, metaindex, ... all from the input);
//   odd : the rest describes entries; a valid table is built from them, then bytes of it are
//         overwritten at input-chosen offsets, so the reader sees near-valid files, and is read
//         with and without checksum verification.
// Open, Get, iteration and VerifyChecksum must return a Status, never crash or read outside.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/file_system.h"
#include "src/base/dbformat.h"
#include "src/base/get_context.h"
#include "table/table_builder.h"
#include "table/table_reader.h"

namespace {

class StringFile final : public shale::RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  shale::Status Read(uint64_t offset, size_t n, shale::Slice* result,
                     char* scratch) const override {
    if (offset >= data_.size()) {
      *result = shale::Slice(scratch, 0);
      return shale::Status::OK();
    }
    n = std::min<size_t>(n, data_.size() - offset);
    std::memcpy(scratch, data_.data() + offset, n);
    *result = shale::Slice(scratch, n);
    return shale::Status::OK();
  }

 private:
  std::string data_;
};

class StringSink final : public shale::WritableFile {
 public:
  shale::Status Append(const shale::Slice& d) override {
    data.append(d.data(), d.size());
    return shale::Status::OK();
  }
  shale::Status Flush() override { return shale::Status::OK(); }
  shale::Status Sync() override { return shale::Status::OK(); }
  shale::Status Close() override { return shale::Status::OK(); }
  uint64_t GetFileSize() const override { return data.size(); }
  std::string data;
};

void ReadEverything(const std::string& file, bool verify) {
  static const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  shale::TableReaderOptions options;
  options.comparator = &icmp;
  options.file_name = "fuzz.sst";
  std::unique_ptr<shale::TableReader> reader;
  if (!shale::TableReader::Open(options, std::make_unique<StringFile>(file), file.size(), &reader)
           .ok()) {
    return;
  }
  shale::ReadOptions ro;
  ro.verify_checksums = verify;
  auto it = reader->NewIterator(ro);
  std::vector<std::string> keys;
  int n = 0;
  for (it->SeekToFirst(); it->Valid() && n < 5000; it->Next(), n++) {
    if (n % 7 == 0) keys.push_back(it->key().ToString());
  }
  for (it->SeekToLast(); it->Valid() && n < 10000; it->Prev()) n++;
  for (const std::string& k : keys) {
    it->Seek(k);
    it->SeekForPrev(k);
    if (k.size() >= 8) {
      shale::PinnableSlice value;
      shale::GetContext ctx(nullptr, nullptr, shale::ExtractUserKey(k), &value);
      (void)reader->Get(ro, k, &ctx);
    }
  }
  (void)reader->VerifyChecksum();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* p = reinterpret_cast<const char*>(data) + 1;
  size_t left = size - 1;
  if ((data[0] & 1) == 0) {
    ReadEverything(std::string(p, left), true);
    ReadEverything(std::string(p, left), false);
    return 0;
  }
  // Build a table from up to 200 entries cut from the input: [klen][vlen][key][value] ...
  static const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  shale::TableBuilderOptions o;
  o.comparator = &icmp;
  o.block_size = 64 + (data[0] >> 1) * 8;
  o.block_restart_interval = 1 + (data[0] >> 4);
  o.compression =
      (data[0] & 2) != 0 ? shale::CompressionType::kZSTD : shale::CompressionType::kNoCompression;
  o.format_version =
      (data[0] & 8) != 0 ? shale::kTableFormatVersion : shale::kTableFormatVersionCompactIndex;
  StringSink sink;
  shale::TableBuilder builder(o, &sink);
  uint64_t seq = 1;
  std::string last_user;
  while (left >= 2 && seq < 200) {
    const size_t klen = std::min<size_t>(static_cast<uint8_t>(p[0]) % 16, left - 2);
    const size_t vlen = std::min<size_t>(static_cast<uint8_t>(p[1]), left - 2 - klen);
    // Ascending user keys; bit 4 of the length byte repeats the last one (an older version,
    // so runs of versions may span blocks and the index keeps internal keys).
    const bool again = !last_user.empty() && (static_cast<uint8_t>(p[0]) & 0x10) != 0;
    std::string user = again ? last_user : last_user + std::string(p + 2, klen) + char(seq);
    std::string key;
    shale::AppendInternalKey(&key, user, 1000 - seq, shale::kTypeValue);
    if (!builder.Add(key, shale::Slice(p + 2 + klen, vlen)).ok()) break;
    last_user = user;
    p += 2 + klen + vlen;
    left -= 2 + klen + vlen;
    seq++;
    if (left > 0 && static_cast<uint8_t>(p[0]) == 0xff) break;  // the rest mutates the file
  }
  if (!builder.Finish().ok()) return 0;
  std::string file = sink.data;
  // Mutations: [offset:2][byte] triples.
  while (left >= 3 && !file.empty()) {
    const size_t off =
        (static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8)) % file.size();
    file[off] = p[2];
    p += 3;
    left -= 3;
  }
  ReadEverything(file, true);
  ReadEverything(file, false);
  return 0;
}
