// shale_ldb: administers a DB from the command line, in the spirit of RocksDB's ldb.
//
//   shale_ldb --db=DIR [--hex] COMMAND [ARGS]
//
//   get KEY                 prints the value (exit 1 when the key is not found)
//   put KEY VALUE           writes KEY = VALUE (synced)
//   delete KEY              deletes KEY (synced)
//   scan [--from=K] [--to=K] [--limit=N]
//                           prints 'key ==> value' for keys in [from, to), at most N
//   dump_wal [--walfile=F]  prints every record of F (default: every WAL of the DB)
//   manifest_dump [--path=F]
//                           prints every version edit of F (default: the MANIFEST CURRENT names)
//   verify                  reads every table, WAL and MANIFEST of the directory with its
//                           checksums checked; prints one line per file
//   stats                   prints shale.stats
//   list_column_families    prints the DB's column families
//
// --hex prints keys and values in hex and reads KEY/VALUE arguments as hex ("0x..." or plain).
// --column_family=NAME makes get, put, delete, scan and stats act on that family (default:
// "default"); a family the DB does not hold fails the open.
// --merge_operator=StringAppendOperator|uint64add reads keys that hold merge operands.
// Exit status: 0 success, 1 the command failed (missing or damaged DB, key not found: the
// message says which), 2 bad usage.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/file_system.h"
#include "shale/merge_operator.h"
#include "src/base/dbformat.h"
#include "src/base/filename.h"
#include "src/db/version_edit.h"
#include "src/db/write_batch_internal.h"
#include "table/table_reader.h"
#include "wal/log_reader.h"

namespace shale {
namespace {

constexpr const char* kUsage =
    "usage: shale_ldb --db=DIR [--hex] [--merge_operator=NAME] [--column_family=NAME]\n"
    "                 COMMAND [ARGS]\n"
    "commands: get KEY | put KEY VALUE | delete KEY |\n"
    "          scan [--from=K] [--to=K] [--limit=N] | dump_wal [--walfile=F] |\n"
    "          manifest_dump [--path=F] | verify | stats | list_column_families\n";

struct Args {
  std::string db;
  bool hex = false;
  std::string from, to, walfile, path, merge_operator;
  std::string column_family = kDefaultColumnFamilyName;
  bool has_from = false, has_to = false;
  int64_t limit = -1;
  std::vector<std::string> positional;  // command, then its arguments
};

int Usage(const std::string& why) {
  std::fprintf(stderr, "shale_ldb: %s\n%s", why.c_str(), kUsage);
  return 2;
}

int Fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "shale_ldb: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

std::string Show(const Slice& s, bool hex) { return hex ? s.ToString(true) : s.ToString(); }

bool FromHex(const std::string& in, std::string* out) {
  std::string h = in;
  if (h.starts_with("0x") || h.starts_with("0X")) h = h.substr(2);
  if (h.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    unsigned v = 0;
    if (std::sscanf(h.substr(i, 2).c_str(), "%2x", &v) != 1) return false;
    out->push_back(static_cast<char>(v));
  }
  return true;
}

// Parses --flag=value options anywhere on the line; the rest is positional.
bool Parse(int argc, char** argv, Args* a, std::string* why) {
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (!arg.starts_with("--")) {
      a->positional.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    auto need_value = [&]() {
      if (!has_value) *why = "--" + name + " needs a value (--" + name + "=...)";
      return has_value;
    };
    if (name == "db") {
      if (!need_value()) return false;
      a->db = value;
    } else if (name == "hex") {
      if (has_value && value != "true" && value != "false") {
        *why = "--hex takes no value or true/false";
        return false;
      }
      a->hex = !has_value || value == "true";
    } else if (name == "from") {
      if (!need_value()) return false;
      a->from = value;
      a->has_from = true;
    } else if (name == "to") {
      if (!need_value()) return false;
      a->to = value;
      a->has_to = true;
    } else if (name == "limit") {
      if (!need_value()) return false;
      char* end = nullptr;
      a->limit = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || a->limit < 0) {
        *why = "--limit must be a number >= 0";
        return false;
      }
    } else if (name == "walfile") {
      if (!need_value()) return false;
      a->walfile = value;
    } else if (name == "merge_operator") {
      if (!need_value()) return false;
      a->merge_operator = value;
    } else if (name == "column_family") {
      if (!need_value()) return false;
      a->column_family = value;
    } else if (name == "path") {
      if (!need_value()) return false;
      a->path = value;
    } else if (name == "help") {
      *why = "help";
      return false;
    } else {
      *why = "unknown flag --" + name;
      return false;
    }
  }
  return true;
}

// Prints a WriteBatch's records.
class BatchPrinter : public WriteBatch::Handler {
 public:
  explicit BatchPrinter(bool hex) : hex_(hex) {}
  Status Put(const Slice& key, const Slice& value) override {
    std::printf(" PUT(%s) : %s", Show(key, hex_).c_str(), Show(value, hex_).c_str());
    return Status::OK();
  }
  Status Delete(const Slice& key) override {
    std::printf(" DELETE(%s)", Show(key, hex_).c_str());
    return Status::OK();
  }
  Status Merge(const Slice& key, const Slice& operand) override {
    std::printf(" MERGE(%s) : %s", Show(key, hex_).c_str(), Show(operand, hex_).c_str());
    return Status::OK();
  }
  Status SingleDelete(const Slice& key) override {
    std::printf(" SINGLE_DELETE(%s)", Show(key, hex_).c_str());
    return Status::OK();
  }
  // Records of another family than the default one name it.
  Status PutCF(uint32_t family, const Slice& key, const Slice& value) override {
    if (family == 0) return Put(key, value);
    std::printf(" PUT(cf %u, %s) : %s", family, Show(key, hex_).c_str(), Show(value, hex_).c_str());
    return Status::OK();
  }
  Status DeleteCF(uint32_t family, const Slice& key) override {
    if (family == 0) return Delete(key);
    std::printf(" DELETE(cf %u, %s)", family, Show(key, hex_).c_str());
    return Status::OK();
  }
  Status MergeCF(uint32_t family, const Slice& key, const Slice& operand) override {
    if (family == 0) return Merge(key, operand);
    std::printf(" MERGE(cf %u, %s) : %s", family, Show(key, hex_).c_str(),
                Show(operand, hex_).c_str());
    return Status::OK();
  }
  Status SingleDeleteCF(uint32_t family, const Slice& key) override {
    if (family == 0) return SingleDelete(key);
    std::printf(" SINGLE_DELETE(cf %u, %s)", family, Show(key, hex_).c_str());
    return Status::OK();
  }
  Status DeleteRange(const Slice& begin, const Slice& end) override {
    std::printf(" DELETE_RANGE(%s) : %s", Show(begin, hex_).c_str(), Show(end, hex_).c_str());
    return Status::OK();
  }
  Status DeleteRangeCF(uint32_t family, const Slice& begin, const Slice& end) override {
    if (family == 0) return DeleteRange(begin, end);
    std::printf(" DELETE_RANGE(cf %u, %s) : %s", family, Show(begin, hex_).c_str(),
                Show(end, hex_).c_str());
    return Status::OK();
  }

 private:
  const bool hex_;
};

std::unique_ptr<log::Reader> OpenLog(FileSystem* fs, const std::string& path, Status* s) {
  std::unique_ptr<SequentialFile> file;
  *s = fs->NewSequentialFile(path, FileOptions(), &file);
  if (!s->ok()) return nullptr;
  return std::make_unique<log::Reader>(std::move(file), path);
}

// Prints every record of one WAL; returns the reader's final status.
Status DumpWal(FileSystem* fs, const std::string& path, bool hex) {
  Status s;
  auto reader = OpenLog(fs, path, &s);
  if (reader == nullptr) return s;
  std::printf("--- %s\n", path.c_str());
  Slice record;
  std::string scratch;
  while (reader->ReadRecord(&record, &scratch)) {
    WriteBatch batch;
    Status b = WriteBatchInternal::SetContents(&batch, record);
    if (!b.ok()) return Status::Corruption(path, b.ToString());
    std::printf("%llu,%u:", static_cast<unsigned long long>(WriteBatchInternal::Sequence(&batch)),
                WriteBatchInternal::Count(&batch));
    BatchPrinter printer(hex);
    b = batch.Iterate(&printer);
    std::printf("\n");
    if (!b.ok()) return Status::Corruption(path, b.ToString());
  }
  return reader->status();
}

// Every file of the directory of the given type, by number.
std::vector<std::pair<uint64_t, std::string>> FilesOfType(FileSystem* fs, const std::string& db,
                                                          FileType want) {
  std::vector<std::string> names;
  std::vector<std::pair<uint64_t, std::string>> out;
  if (!fs->GetChildren(db, &names).ok()) return out;
  for (const std::string& n : names) {
    uint64_t number;
    FileType type;
    if (ParseFileName(n, &number, &type) && type == want) out.emplace_back(number, db + "/" + n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status CurrentManifest(FileSystem* fs, const std::string& db, std::string* path) {
  std::string current;
  Status s = ReadFileToString(fs, CurrentFileName(db), &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(CurrentFileName(db), "does not end in a newline");
  }
  current.pop_back();
  *path = db + "/" + current;
  return Status::OK();
}

// Reads every edit of a MANIFEST; print: also print them. Returns the number read.
Status ReadManifest(FileSystem* fs, const std::string& path, bool print, uint64_t* edits) {
  Status s;
  auto reader = OpenLog(fs, path, &s);
  if (reader == nullptr) return s;
  Slice record;
  std::string scratch;
  *edits = 0;
  std::vector<VersionEdit> record_edits;
  while (reader->ReadRecord(&record, &scratch)) {
    s = VersionEdit::DecodeRecord(record, &record_edits);
    if (!s.ok()) return Status::Corruption(fmt::format("{}: edit {}", path, *edits), s.ToString());
    if (print) {
      // The edits of one record (one per column family) are applied together.
      std::printf("--- edit %llu\n", static_cast<unsigned long long>(*edits));
      for (const VersionEdit& edit : record_edits) std::printf("%s\n", edit.DebugString().c_str());
    }
    (*edits)++;
  }
  return reader->status();
}

int Verify(FileSystem* fs, const std::string& db) {
  int bad = 0;
  auto report = [&](const std::string& path, const Status& s, const std::string& ok_text) {
    if (s.ok()) {
      std::printf("OK       %s (%s)\n", path.c_str(), ok_text.c_str());
    } else {
      std::printf("DAMAGED  %s: %s\n", path.c_str(), s.ToString().c_str());
      bad++;
    }
  };
  const InternalKeyComparator icmp(BytewiseComparator());
  for (const auto& [number, path] : FilesOfType(fs, db, FileType::kTable)) {
    uint64_t size = 0;
    Status s = fs->GetFileSize(path, &size);
    std::unique_ptr<RandomAccessFile> file;
    if (s.ok()) s = fs->NewRandomAccessFile(path, FileOptions(), &file);
    std::unique_ptr<TableReader> reader;
    TableReaderOptions ro;
    ro.comparator = &icmp;
    ro.file_name = path;
    if (s.ok()) s = TableReader::Open(ro, std::move(file), size, &reader);
    if (s.ok()) s = reader->VerifyChecksum();
    report(path, s, s.ok() ? fmt::format("{} entries", reader->properties().num_entries) : "");
  }
  for (const auto& [number, path] : FilesOfType(fs, db, FileType::kLog)) {
    Status s;
    auto reader = OpenLog(fs, path, &s);
    uint64_t records = 0;
    if (reader != nullptr) {
      Slice record;
      std::string scratch;
      while (reader->ReadRecord(&record, &scratch)) records++;
      s = reader->status();
    }
    report(path, s, fmt::format("{} records", records));
  }
  for (const auto& [number, path] : FilesOfType(fs, db, FileType::kManifest)) {
    uint64_t edits = 0;
    Status s = ReadManifest(fs, path, false, &edits);
    report(path, s, fmt::format("{} edits", edits));
  }
  if (bad > 0) {
    std::fprintf(stderr, "shale_ldb: %d damaged file(s) in %s\n", bad, db.c_str());
    return 1;
  }
  return 0;
}

int Run(const Args& a) {
  if (a.positional.empty()) return Usage("no command");
  const std::string& cmd = a.positional[0];
  const size_t nargs = a.positional.size() - 1;
  // Every command and its argument count, checked before anything is opened.
  struct Command {
    const char* name;
    size_t nargs;
    const char* usage;
  };
  static constexpr Command kCommands[] = {
      {"get", 1, "get takes KEY"},
      {"put", 2, "put takes KEY VALUE"},
      {"delete", 1, "delete takes KEY"},
      {"scan", 0, "scan takes no arguments (use --from --to --limit)"},
      {"stats", 0, "stats takes no arguments"},
      {"dump_wal", 0, "dump_wal takes no arguments"},
      {"manifest_dump", 0, "manifest_dump takes no arguments"},
      {"verify", 0, "verify takes no arguments"},
      {"list_column_families", 0, "list_column_families takes no arguments"},
  };
  const Command* command = nullptr;
  for (const Command& c : kCommands) {
    if (cmd == c.name) command = &c;
  }
  if (command == nullptr) return Usage("unknown command '" + cmd + "'");
  if (nargs != command->nargs) return Usage(command->usage);
  auto arg = [&](size_t i, std::string* out) {
    *out = a.positional[i + 1];
    return !a.hex || FromHex(*out, out);
  };
  std::shared_ptr<FileSystem> fs = FileSystem::Default();
  if (a.db.empty()) return Usage("--db is required");
  auto require_db = [&]() {
    return fs->FileExists(CurrentFileName(a.db)).ok()
               ? Status::OK()
               : Status::InvalidArgument("not a shale DB (no CURRENT file)");
  };

  // Commands that read files directly, without opening the DB.
  if (cmd == "dump_wal") {
    std::vector<std::string> paths;
    if (!a.walfile.empty()) {
      paths.push_back(a.walfile);
    } else {
      Status s = require_db();
      if (!s.ok()) return Fail(a.db, s);
      for (const auto& [n, p] : FilesOfType(fs.get(), a.db, FileType::kLog)) paths.push_back(p);
    }
    for (const std::string& p : paths) {
      Status s = DumpWal(fs.get(), p, a.hex);
      if (!s.ok()) return Fail(p, s);
    }
    return 0;
  }
  if (cmd == "manifest_dump") {
    std::string path = a.path;
    if (path.empty()) {
      Status s = CurrentManifest(fs.get(), a.db, &path);
      if (!s.ok()) return Fail(a.db, s);
    }
    uint64_t edits = 0;
    Status s = ReadManifest(fs.get(), path, true, &edits);
    if (!s.ok()) return Fail(path, s);
    std::printf("%llu edits\n", static_cast<unsigned long long>(edits));
    return 0;
  }
  if (cmd == "verify") {
    Status s = require_db();
    if (!s.ok()) return Fail(a.db, s);
    return Verify(fs.get(), a.db);
  }
  if (cmd == "list_column_families") {
    std::vector<std::string> names;
    Status s = DB::ListColumnFamilies(DBOptions(), a.db, &names);
    if (!s.ok()) return Fail(a.db, s);
    for (const std::string& n : names) std::printf("%s\n", n.c_str());
    return 0;
  }

  Options options;
  options.create_if_missing = false;
  // Reading commands leave the logs as they are: no tables written by the open.
  options.avoid_flush_during_recovery = cmd == "get" || cmd == "scan" || cmd == "stats";
  if (!a.merge_operator.empty()) {
    options.merge_operator = MergeOperators::CreateFromName(a.merge_operator);
    if (options.merge_operator == nullptr) return Usage("unknown --merge_operator");
  }
  std::unique_ptr<DB> db;
  // Every family the DB holds is opened (an open must name them all); the command acts on
  // --column_family.
  std::vector<std::string> names;
  Status s = DB::ListColumnFamilies(options, a.db, &names);
  // No DB there: the open below says why (no directory, no CURRENT).
  if (s.IsNotFound()) names = {kDefaultColumnFamilyName};
  if (!s.ok() && !s.IsNotFound()) return Fail("open " + a.db, s);
  std::vector<ColumnFamilyDescriptor> families;
  size_t chosen = names.size();
  for (size_t i = 0; i < names.size(); i++) {
    families.emplace_back(names[i], options);
    if (names[i] == a.column_family) chosen = i;
  }
  if (chosen == names.size()) {
    return Fail("open " + a.db, Status::InvalidArgument("no column family named", a.column_family));
  }
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  s = DB::Open(options, a.db, families, &handles, &db);
  if (!s.ok()) return Fail("open " + a.db, s);
  ColumnFamilyHandle* cf = handles[chosen].get();

  if (cmd == "get") {
    std::string key, value;
    if (!arg(0, &key)) return Usage("KEY is not hex");
    s = db->Get(ReadOptions(), cf, key, &value);
    if (s.IsNotFound()) {
      std::fprintf(stderr, "shale_ldb: key not found\n");
      return 1;
    }
    if (!s.ok()) return Fail("get", s);
    std::printf("%s\n", Show(value, a.hex).c_str());
  } else if (cmd == "put") {
    std::string key, value;
    if (!arg(0, &key) || !arg(1, &value)) return Usage("KEY or VALUE is not hex");
    WriteOptions wo;
    wo.sync = true;
    s = db->Put(wo, cf, key, value);
    if (!s.ok()) return Fail("put", s);
    std::printf("OK\n");
  } else if (cmd == "delete") {
    std::string key;
    if (!arg(0, &key)) return Usage("KEY is not hex");
    WriteOptions wo;
    wo.sync = true;
    s = db->Delete(wo, cf, key);
    if (!s.ok()) return Fail("delete", s);
    std::printf("OK\n");
  } else if (cmd == "scan") {
    std::string from = a.from, to = a.to;
    if (a.hex && ((a.has_from && !FromHex(a.from, &from)) || (a.has_to && !FromHex(a.to, &to)))) {
      return Usage("--from or --to is not hex");
    }
    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions(), cf);
    int64_t n = 0;
    for (a.has_from ? it->Seek(from) : it->SeekToFirst(); it->Valid(); it->Next()) {
      if (a.has_to && it->key().compare(Slice(to)) >= 0) break;
      if (a.limit >= 0 && n >= a.limit) break;
      std::printf("%s ==> %s\n", Show(it->key(), a.hex).c_str(), Show(it->value(), a.hex).c_str());
      n++;
    }
    if (!it->status().ok()) return Fail("scan", it->status());
  } else if (cmd == "stats") {
    std::string stats;
    if (!db->GetProperty(cf, "shale.stats", &stats)) return Fail("stats", Status::NotSupported(""));
    std::printf("%s\n", stats.c_str());
  }
  s = db->Close();
  if (!s.ok()) return Fail("close", s);
  return 0;
}

}  // namespace
}  // namespace shale

int main(int argc, char** argv) {
  shale::Args args;
  std::string why;
  if (!shale::Parse(argc, argv, &args, &why)) {
    if (why == "help") {
      std::printf("%s", shale::kUsage);
      return 0;
    }
    return shale::Usage(why);
  }
  return shale::Run(args);
}
