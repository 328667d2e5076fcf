// sst_dump: inspects one table file.
//
//   sst_dump --file=F [--command=scan|check|properties|verify] [--output_hex] [--limit=N]
//
//   scan        prints every entry: 'user_key' seq:S, type:T => value; then, under "Range
//               deletions:", each stored tombstone: 'start' seq:S, type:15 => 'end'
//   check       decodes every entry and checks the key order; prints the count
//   properties  prints the table properties and the block layout
//   verify      reads every block with its checksum verified
// A damaged or unreadable file prints the error to stderr and exits with 1; bad flags exit 2.
#include <fmt/format.h>
#include <gflags/gflags.h>

#include <cstdio>
#include <memory>
#include <string>

#include "shale/comparator.h"
#include "shale/file_system.h"
#include "src/base/dbformat.h"
#include "table/format.h"
#include "table/table_reader.h"
#include "tools/tool_flags.h"

DEFINE_string(file, "", "The table file to inspect");
DEFINE_string(command, "scan", "scan, check, properties or verify");
DEFINE_bool(output_hex, false, "Print keys and values in hex");
DEFINE_int64(limit, -1, "scan: stop after this many entries (-1: all)");

namespace shale {
namespace {

const char* TypeName(ValueType t) {
  switch (t) {
    case kTypeValue:
      return "1";
    case kTypeDeletion:
      return "0";
    case kTypeMerge:
      return "2";
    case kTypeSingleDeletion:
      return "7";
    case kTypeRangeDeletion:
      return "15";
  }
  return "?";
}

int Fail(const Status& s) {
  std::fprintf(stderr, "%s: %s\n", FLAGS_file.c_str(), s.ToString().c_str());
  return 1;
}

int Scan(const TableReader& reader, bool check_only) {
  const InternalKeyComparator icmp(BytewiseComparator());
  ReadOptions ro;
  ro.fill_cache = false;
  auto it = reader.NewIterator(ro);
  uint64_t n = 0;
  std::string prev;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey p;
    if (!ParseInternalKey(it->key(), &p)) {
      return Fail(Status::Corruption(
          fmt::format("entry {}: malformed internal key {}", n, it->key().ToString(true))));
    }
    if (n > 0 && icmp.Compare(prev, it->key()) >= 0) {
      return Fail(Status::Corruption(fmt::format("entry {}: keys out of order", n)));
    }
    prev.assign(it->key().data(), it->key().size());
    if (!check_only && (FLAGS_limit < 0 || static_cast<int64_t>(n) < FLAGS_limit)) {
      std::printf("'%s' seq:%llu, type:%s => %s\n", p.user_key.ToString(FLAGS_output_hex).c_str(),
                  static_cast<unsigned long long>(p.sequence), TypeName(p.type),
                  it->value().ToString(FLAGS_output_hex).c_str());
    }
    n++;
  }
  if (!it->status().ok()) return Fail(it->status());
  if (const auto& list = reader.range_tombstones(); list != nullptr && !check_only) {
    std::printf("Range deletions:\n");
    for (const auto& f : list->fragments()) {
      for (SequenceNumber seq : list->seqs(f)) {
        std::printf("'%s' seq:%llu, type:%s => '%s'\n",
                    Slice(f.start).ToString(FLAGS_output_hex).c_str(),
                    static_cast<unsigned long long>(seq), TypeName(kTypeRangeDeletion),
                    Slice(f.end).ToString(FLAGS_output_hex).c_str());
      }
    }
  }
  if (check_only) {
    if (n != reader.properties().num_entries) {
      return Fail(Status::Corruption(fmt::format("{} entries read, the properties say {}", n,
                                                 reader.properties().num_entries)));
    }
    std::printf("check: OK, %llu entries\n", static_cast<unsigned long long>(n));
  }
  return 0;
}

int Properties(const TableReader& reader) {
  std::printf("Table properties of %s (%llu bytes):\n", FLAGS_file.c_str(),
              static_cast<unsigned long long>(reader.file_size()));
  std::printf("%s", reader.properties().ToString().c_str());
  std::printf("\nBlock layout (offset, size without the %zu-byte trailer):\n", kBlockTrailerSize);
  auto index = reader.NewIndexIterator();
  uint64_t i = 0;
  for (index->SeekToFirst(); index->Valid(); index->Next(), i++) {
    Slice v = index->value();
    BlockHandle h;
    if (!h.DecodeFrom(&v).ok()) return Fail(Status::Corruption("bad index entry"));
    ParsedInternalKey p;
    const std::string sep =
        reader.index_keys_are_user_keys()    ? index->key().ToString(FLAGS_output_hex)
        : ParseInternalKey(index->key(), &p) ? p.user_key.ToString(FLAGS_output_hex)
                                             : index->key().ToString(true);
    std::printf("  data block %llu: offset %llu size %llu, separator '%s'\n",
                static_cast<unsigned long long>(i), static_cast<unsigned long long>(h.offset()),
                static_cast<unsigned long long>(h.size()), sep.c_str());
  }
  if (!index->status().ok()) return Fail(index->status());
  if (reader.filter_handle().size() > 0) {
    std::printf("  filter block: offset %llu size %llu\n",
                static_cast<unsigned long long>(reader.filter_handle().offset()),
                static_cast<unsigned long long>(reader.filter_handle().size()));
  }
  if (const auto& list = reader.range_tombstones(); list != nullptr) {
    std::printf("  range deletions: %zu stored, %zu fragments\n", list->num_entries(),
                list->fragments().size());
  }
  return 0;
}

int Run() {
  if (FLAGS_file.empty()) {
    std::fprintf(stderr, "sst_dump: --file is required\n");
    return 2;
  }
  if (FLAGS_command != "scan" && FLAGS_command != "check" && FLAGS_command != "properties" &&
      FLAGS_command != "verify") {
    std::fprintf(stderr, "sst_dump: unknown --command=%s\n", FLAGS_command.c_str());
    return 2;
  }
  std::shared_ptr<FileSystem> fs = FileSystem::Default();
  uint64_t size = 0;
  Status s = fs->GetFileSize(FLAGS_file, &size);
  if (!s.ok()) return Fail(s);
  std::unique_ptr<RandomAccessFile> file;
  s = fs->NewRandomAccessFile(FLAGS_file, FileOptions(), &file);
  if (!s.ok()) return Fail(s);
  const InternalKeyComparator icmp(BytewiseComparator());
  TableReaderOptions options;
  options.comparator = &icmp;
  options.file_name = FLAGS_file;
  std::unique_ptr<TableReader> reader;
  s = TableReader::Open(options, std::move(file), size, &reader);
  if (!s.ok()) return Fail(s);

  if (FLAGS_command == "scan") return Scan(*reader, false);
  if (FLAGS_command == "check") return Scan(*reader, true);
  if (FLAGS_command == "properties") return Properties(*reader);
  s = reader->VerifyChecksum();
  if (!s.ok()) return Fail(s);
  std::printf("The file is ok\n");
  return 0;
}

}  // namespace
}  // namespace shale

int main(int argc, char** argv) {
  shale::tools::ParseFlagsStrictly(
      "sst_dump", "sst_dump --file=F [--command=scan|check|properties|verify]", argc, argv);
  return shale::Run();
}
