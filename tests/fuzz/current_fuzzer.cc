// CURRENT and MANIFEST from untrusted bytes: the CURRENT parser, the MANIFEST as a log of
// VersionEdits, and VersionSet recovery from both.
//   byte 0         : bit 7: framed; bits 0-6: n, the length of the CURRENT file (cut to the
//                    bytes that follow)
//   bytes [1, 1+n) : the CURRENT file
//   the rest       : the MANIFEST file, stored under the name CURRENT gives when it parses
//                    (else as MANIFEST-000001). Framed, the rest is [length:byte][edit] records
//                    instead, which become the MANIFEST's records (with valid checksums, so
//                    mutations reach the edits and recovery rather than the log format).
// What must hold:
//   - ParseCurrentFile accepts exactly "<name>\n" where ParseFileName says name is a MANIFEST
//     (with the same number); anything else is Corruption.
//   - Every record of the MANIFEST read as a log (log::Reader) decodes as VersionEdits or is
//     Corruption, and decoded records round-trip (CheckVersionEditRoundTrip).
//   - VersionSet::Recover over an in-memory directory holding both files returns a Status and
//     never crashes (every column family it records is opened with the bytewise comparator).
//     When it succeeds it has written a fresh MANIFEST and pointed CURRENT at it; recovering
//     again from those must succeed with the same families, the same files on every level of
//     each, the same log numbers and last sequence, and a next file number no lower; and
//     VersionSet::ListColumnFamilies names the same families.
// SHALE_FUZZ_VERBOSE=1 prints what the CURRENT parser and the first recovery said.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "shale/comparator.h"
#include "shale/options.h"
#include "src/base/dbformat.h"
#include "src/base/filename.h"
#include "src/db/table_cache.h"
#include "src/db/version.h"
#include "src/db/version_set.h"
#include "tests/fault_injection_fs.h"
#include "tests/fuzz/fuzz_util.h"
#include "wal/log_reader.h"

namespace {

using shale::Slice;
using shale::Status;
using shale::fuzz::Fail;

constexpr char kDb[] = "/db";

void CheckParse(const Slice& current, const Status& s, const std::string& name, uint64_t number) {
  const bool well_formed = !current.empty() && current[current.size() - 1] == '\n';
  uint64_t parsed_number = 0;
  shale::FileType type;
  const std::string stem =
      well_formed ? std::string(current.data(), current.size() - 1) : std::string();
  const bool names_manifest = well_formed && shale::ParseFileName(stem, &parsed_number, &type) &&
                              type == shale::FileType::kManifest;
  if (s.ok() != names_manifest) {
    Fail("ParseCurrentFile said " + s.ToString() + " for " + current.ToString(/*hex=*/true));
  }
  if (!s.ok()) {
    if (!s.IsCorruption()) Fail("ParseCurrentFile failed with " + s.ToString());
    return;
  }
  if (name != stem || number != parsed_number || !name.starts_with("MANIFEST-")) {
    Fail("ParseCurrentFile returned " + name + " #" + std::to_string(number) + " for " +
         current.ToString(/*hex=*/true));
  }
}

// Per family a row of (id, log number, name) and then every file of every level with all its
// metadata, for comparing two recoveries.
using Shape = std::vector<
    std::vector<std::tuple<uint64_t, uint64_t, std::string, std::string, uint64_t, uint64_t>>>;

Shape ShapeOf(const shale::VersionSet& vs) {
  Shape shape;
  for (const shale::FamilyInfo& family : vs.Families()) {
    shape.push_back({{family.id, vs.log_number(family.id), family.name, "", 0, 0}});
    auto v = vs.current(family.id);
    for (int level = 0; level < v->num_levels(); level++) {
      shape.emplace_back();
      for (const auto& f : v->files(level)) {
        shape.back().emplace_back(f->number, f->file_size, f->smallest, f->largest,
                                  f->smallest_seqno, f->largest_seqno);
      }
    }
  }
  return shape;
}

// Fixed parts of a VersionSet and its in-memory directory for one input. Ownership: owns them
// all. Thread safety: one thread.
struct Recovery {
  Recovery() {
    if (!fs.CreateDirIfMissing(kDb).ok() || !fs.NewDirectory(kDb, &dir).ok()) {
      Fail("cannot set up the in-memory directory");
    }
    shale::TableReaderOptions ro;
    ro.comparator = &icmp;
    table_cache = std::make_unique<shale::TableCache>(kDb, &fs, ro, -1, false);
  }
  std::unique_ptr<shale::VersionSet> NewSet() {
    return std::make_unique<shale::VersionSet>(kDb, &options, &fs, table_cache.get(), &icmp,
                                               dir.get());
  }
  // Opens every recorded family with the bytewise comparator.
  shale::VersionSet::FamilyResolver Resolver() {
    return [this](const shale::FamilyInfo&, shale::FamilyConfig* config) {
      *config = shale::FamilyConfig{&options, &icmp, table_cache.get()};
      return Status::OK();
    };
  }

  shale::test::FaultInjectionFileSystem fs{1};
  std::unique_ptr<shale::Directory> dir;
  shale::Options options;
  shale::InternalKeyComparator icmp{shale::BytewiseComparator()};
  std::unique_ptr<shale::TableCache> table_cache;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t n = std::min<size_t>(data[0] & 0x7f, size - 1);
  const char* p = reinterpret_cast<const char*>(data);
  const std::string current(p + 1, n);
  std::string manifest(p + 1 + n, size - 1 - n);
  if ((data[0] & 0x80) != 0) {
    std::vector<std::string> records;
    for (size_t i = 0; i < manifest.size();) {
      const size_t len =
          std::min<size_t>(static_cast<uint8_t>(manifest[i]), manifest.size() - i - 1);
      records.push_back(manifest.substr(i + 1, len));
      i += 1 + len;
    }
    manifest = shale::fuzz::LogFileOf(records);
  }

  std::string name;
  uint64_t number = 0;
  Status parsed = shale::ParseCurrentFile(kDb, current, &name, &number);
  CheckParse(current, parsed, name, number);

  {
    shale::log::Reader reader(std::make_unique<shale::fuzz::StringSequentialFile>(manifest),
                              "MANIFEST");
    Slice record;
    std::string scratch;
    while (reader.ReadRecord(&record, &scratch)) shale::fuzz::CheckVersionEditRoundTrip(record);
  }

  Recovery r;
  r.fs.SetFileContents(shale::CurrentFileName(kDb), current);
  r.fs.SetFileContents(
      parsed.ok() ? std::string(kDb) + "/" + name : shale::ManifestFileName(kDb, 1), manifest);
  Shape shape;
  uint64_t log_number = 0, next_file = 0;
  shale::SequenceNumber last_sequence = 0;
  {
    auto vs = r.NewSet();
    Status s = vs->Recover(r.Resolver());
    if (std::getenv("SHALE_FUZZ_VERBOSE") != nullptr) {
      std::fprintf(stderr, "CURRENT: %s; Recover: %s\n", parsed.ToString().c_str(),
                   s.ToString().c_str());
    }
    if (!s.ok()) {
      if (!s.IsCorruption() && !s.IsInvalidArgument()) {
        Fail("VersionSet::Recover failed with " + s.ToString());
      }
      if (!parsed.ok() && !s.IsCorruption()) Fail("a bad CURRENT was not Corruption");
      return 0;
    }
    if (!parsed.ok()) Fail("Recover accepted a CURRENT that ParseCurrentFile refuses");
    shape = ShapeOf(*vs);
    log_number = vs->log_number();
    std::vector<std::string> names, listed;
    for (const shale::FamilyInfo& f : vs->Families()) names.push_back(f.name);
    Status listed_status = shale::VersionSet::ListColumnFamilies(&r.fs, kDb, &listed);
    if (!listed_status.ok() || listed != names) {
      Fail("ListColumnFamilies disagrees with Recover: " + listed_status.ToString());
    }
    last_sequence = vs->last_sequence();
    next_file = vs->next_file_number();
  }
  auto vs = r.NewSet();
  Status s = vs->Recover(r.Resolver());
  if (!s.ok()) Fail("recovery from the MANIFEST a recovery wrote failed: " + s.ToString());
  if (ShapeOf(*vs) != shape || vs->log_number() != log_number ||
      vs->last_sequence() != last_sequence || vs->next_file_number() < next_file) {
    Fail("a second recovery found another state");
  }
  return 0;
}
