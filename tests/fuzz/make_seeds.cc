// Writes the seed corpus of every fuzz target: make_seeds <dir> creates <dir>/<target>/<seed>
// (overwriting seeds of the same name). The output is deterministic. The committed corpus in
// tests/fuzz/corpus is this program's output; regenerate it with
//   build-asan/tests/fuzz/make_seeds tests/fuzz/corpus
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shale/column_family.h"
#include "shale/comparator.h"
#include "shale/write_batch.h"
#include "src/base/dbformat.h"
#include "src/db/version_edit.h"
#include "src/db/write_batch_internal.h"
#include "table/block_builder.h"
#include "table/filter_block.h"
#include "table/table_builder.h"
#include "table/table_properties.h"
#include "tests/fuzz/db_ops_format.h"
#include "tests/fuzz/fuzz_util.h"

namespace shale::fuzz {
namespace {

std::filesystem::path g_root;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::filesystem::path dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Fail("cannot write " + (dir / name).string());
}

std::string IKey(std::string_view user_key, SequenceNumber seq, ValueType type = kTypeValue) {
  std::string k;
  AppendInternalKey(&k, Slice(user_key), seq, type);
  return k;
}

std::string LogFile(const std::vector<std::string>& records) { return LogFileOf(records); }

std::string Batch(SequenceNumber seq, void (*fill)(WriteBatch*)) {
  WriteBatch b;
  fill(&b);
  WriteBatchInternal::SetSequence(&b, seq);
  return b.Data();
}

void Check(const Status& s) {
  if (!s.ok()) Fail(s.ToString());
}

// ---- block_fuzzer ----
void BlockSeeds() {
  {
    BlockBuilder b(2);
    const char* keys[] = {"apple", "apricot", "banana", "blueberry", "cherry", "date", "fig"};
    for (const char* k : keys) b.Add(k, std::string("value-of-") + k);
    Write("block_fuzzer", "bytewise_keys", b.Finish().ToString());
  }
  {
    BlockBuilder b(16);
    for (int i = 0; i < 40; i++) {
      char user[16];
      std::snprintf(user, sizeof(user), "key%04d", i);
      b.Add(IKey(user, 1000 - i, i % 5 == 0 ? kTypeDeletion : kTypeValue),
            i % 5 == 0 ? "" : std::string(i % 7, 'v'));
    }
    Write("block_fuzzer", "internal_keys", b.Finish().ToString());
  }
  {
    BlockBuilder b(1);
    Write("block_fuzzer", "empty", b.Finish().ToString());
  }
  {
    // A format 3 index block: user keys, handles without value lengths.
    BlockBuilder b(1, BlockValueFormat::kHandle);
    uint64_t offset = 0;
    for (int i = 0; i < 30; i++) {
      char user[16];
      std::snprintf(user, sizeof(user), "key%04d", i * 7);
      std::string handle;
      BlockHandle(offset, 200 + i * 40).EncodeTo(&handle);
      offset += 205 + i * 40;
      b.Add(user, handle);
    }
    Write("block_fuzzer", "handle_values", b.Finish().ToString());
  }
  {
    TableProperties p;
    p.num_entries = 3;
    p.num_data_blocks = 1;
    p.filter_kind = "cachelocalbloom";
    p.compression = "NoCompression";
    p.comparator = BytewiseComparator()->Name();
    p.smallest_key = IKey("a", 3);
    p.largest_key = IKey("c", 1);
    p.largest_seqno = 3;
    p.smallest_seqno = 1;
    Write("block_fuzzer", "properties", p.Encode());
  }
}

// ---- filter_fuzzer ----
void FilterSeeds() {
  {
    FilterBlockBuilder b(10);
    for (int i = 0; i < 100; i++) b.AddKey("key" + std::to_string(i));
    Write("filter_fuzzer", "100_keys_10_bits", b.Finish());
  }
  {
    FilterBlockBuilder b(3);
    for (const char* k : {"a", "b", "c", "d", "e"}) b.AddKey(k);
    Write("filter_fuzzer", "5_keys_3_bits", b.Finish());
  }
  {
    FilterBlockBuilder b(10);
    Write("filter_fuzzer", "no_keys", b.Finish());
  }
}

// ---- log_reader_fuzzer and write_batch_fuzzer ----
void FillMixed(WriteBatch* b) {
  Check(b->Put("k1", "v1"));
  Check(b->Merge("k2", "m1"));
  Check(b->Delete("k3"));
  Check(b->Put("", ""));
  Check(b->Put("k1", "v1-again"));
}
void FillOnePut(WriteBatch* b) { Check(b->Put("key", "value")); }
// A handle naming only a family id.
class FamilyId final : public ColumnFamilyHandle {
 public:
  explicit FamilyId(uint32_t id) : id_(id) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  const Comparator* GetComparator() const override { return BytewiseComparator(); }

 private:
  uint32_t id_;
  std::string name_ = "seed";
};
void FillFamilies(WriteBatch* b) {
  FamilyId three(3), wide(1000);
  Check(b->Put(&three, "k1", "v1"));
  Check(b->Delete(&wide, "k2"));
  Check(b->Merge(&three, "k3", "m1"));
  Check(b->Put("k4", "v4"));
}
void FillRangeDeletions(WriteBatch* b) {
  Check(b->Put("k1", "v"));
  Check(b->DeleteRange("k0", "k5"));
  Check(b->DeleteRange("k3", "k3"));
}
void FillFamilyRangeDeletions(WriteBatch* b) {
  FamilyId two(2);
  Check(b->DeleteRange(&two, "a", "b"));
  Check(b->Put(&two, "a", "v"));
}

void FillSingleDeletes(WriteBatch* b) {
  FamilyId two(2);
  Check(b->Put("k1", "v1"));
  Check(b->SingleDelete("k1"));
  Check(b->SingleDelete(&two, "k2"));
}
void FillNothing(WriteBatch*) {}
void FillBig(WriteBatch* b) {
  Check(b->Put("big", std::string(40000, 'x')));
  Check(b->Delete("gone"));
}

void WalAndBatchSeeds() {
  const std::string mixed = Batch(7, FillMixed);
  const std::string one = Batch(1, FillOnePut);
  const std::string empty = Batch(12, FillNothing);
  Write("write_batch_fuzzer", "mixed", mixed);
  Write("write_batch_fuzzer", "one_put", one);
  Write("write_batch_fuzzer", "empty", empty);
  Write("write_batch_fuzzer", "families", Batch(5, FillFamilies));
  Write("write_batch_fuzzer", "single_deletes", Batch(9, FillSingleDeletes));
  Write("write_batch_fuzzer", "range_deletions", Batch(11, FillRangeDeletions));
  Write("write_batch_fuzzer", "range_deletions_family", Batch(13, FillFamilyRangeDeletions));
  {
    WriteBatch b;
    Check(b.Put(std::string("\0key", 4), std::string(300, 'p')));  // two-byte varint length
    Check(b.Merge("m", ""));
    WriteBatchInternal::SetSequence(&b, kMaxSequenceNumber - 1);
    Write("write_batch_fuzzer", "long_value_high_sequence", b.Data());
  }

  Write("log_reader_fuzzer", "two_records", LogFile({one, mixed}));
  // One record fragmented over two 32 KiB blocks, then a small one.
  Write("log_reader_fuzzer", "fragmented_record",
        LogFile({Batch(1, FillBig), Batch(3, FillOnePut)}));
  const std::string torn = LogFile({one, mixed, Batch(13, FillMixed)});
  Write("log_reader_fuzzer", "torn_tail", torn.substr(0, torn.size() - 5));
  Write("log_reader_fuzzer", "empty_batch_record", LogFile({empty}));
}

// ---- table_reader_fuzzer ----
// versions: entries per user key (newest first); more than a block's worth makes a format 3
// index keep internal keys.
std::string Table(CompressionType compression, double bloom_bits, int n,
                  uint32_t format_version = kTableFormatVersion, int versions = 1) {
  static const InternalKeyComparator icmp(BytewiseComparator());
  TableBuilderOptions o;
  o.comparator = &icmp;
  o.block_size = 256;
  o.block_restart_interval = 4;
  o.bloom_bits_per_key = bloom_bits;
  o.compression = compression;
  o.format_version = format_version;
  StringWritableFile sink;
  TableBuilder builder(o, &sink);
  for (int i = 0; i < n; i++) {
    char user[16];
    std::snprintf(user, sizeof(user), "key%04d", i / versions);
    const ValueType type = i % 9 == 3 ? kTypeDeletion : (i % 9 == 5 ? kTypeMerge : kTypeValue);
    Check(builder.Add(IKey(user, 1 + n - i, type),
                      type == kTypeDeletion ? "" : std::string(8 + i % 24, 'a' + i % 26)));
  }
  Check(builder.Finish());
  return sink.data;
}

void TableSeeds() {
  // Even first byte: the rest is the file.
  Write("table_reader_fuzzer", "plain_table",
        std::string(1, '\0') + Table(CompressionType::kNoCompression, 10, 60));
  Write("table_reader_fuzzer", "zstd_no_filter",
        std::string(1, '\0') + Table(CompressionType::kZSTD, 0, 40));
  Write("table_reader_fuzzer", "one_entry",
        std::string(1, '\0') + Table(CompressionType::kNoCompression, 10, 1));
  // Format 3: a user-key index, and an internal-key one (versions of a key span blocks).
  Write("table_reader_fuzzer", "compact_index",
        std::string(1, '\0') +
            Table(CompressionType::kNoCompression, 10, 60, kTableFormatVersionCompactIndex));
  Write("table_reader_fuzzer", "compact_index_versions_spanning_blocks",
        std::string(1, '\0') +
            Table(CompressionType::kNoCompression, 10, 60, kTableFormatVersionCompactIndex, 12));
  // Odd first byte: [klen][vlen][key][value] entries, 0xff, then [offset:2][byte] mutations.
  std::string entries(1, '\x21');
  for (int i = 0; i < 12; i++) {
    entries += static_cast<char>(3);
    entries += static_cast<char>(5);
    entries += "k" + std::to_string(10 + i);
    entries += "val" + std::to_string(10 + i);
  }
  entries += "\xff\x10\x41";  // 0xff ends the entries and starts a mutation (offset 0x10ff)
  Write("table_reader_fuzzer", "built_then_mutated", entries);
}

// ---- version_edit_fuzzer and current_fuzzer ----
FileMetaData Meta(uint64_t number, std::string_view smallest, std::string_view largest,
                  SequenceNumber lo, SequenceNumber hi) {
  FileMetaData f;
  f.number = number;
  f.file_size = 4000 + number;
  f.smallest = IKey(smallest, hi);
  f.largest = IKey(largest, lo);
  f.smallest_seqno = lo;
  f.largest_seqno = hi;
  return f;
}

std::string Encoded(const VersionEdit& e) {
  std::string s;
  e.EncodeTo(&s);
  return s;
}

void VersionSeeds() {
  VersionEdit snapshot;
  snapshot.SetComparatorName(BytewiseComparator()->Name());
  snapshot.SetLogNumber(4);
  snapshot.SetNextFileNumber(12);
  snapshot.SetLastSequence(300);
  snapshot.AddFile(0, Meta(9, "a", "z", 201, 300));
  snapshot.AddFile(0, Meta(8, "c", "m", 101, 200));
  snapshot.AddFile(1, Meta(5, "a", "f", 1, 100));
  snapshot.AddFile(1, Meta(6, "g", "p", 1, 100));
  snapshot.AddFile(2, Meta(3, "b", "y", 1, 50));

  VersionEdit compaction;
  compaction.DeleteFile(0, 8);
  compaction.DeleteFile(0, 9);
  compaction.DeleteFile(1, 5);
  compaction.AddFile(1, Meta(12, "a", "f", 1, 300));
  compaction.SetLogNumber(10);
  compaction.SetNextFileNumber(14);
  compaction.SetLastSequence(320);

  VersionEdit log_only;
  log_only.SetLogNumber(7);

  Write("version_edit_fuzzer", "snapshot", Encoded(snapshot));
  Write("version_edit_fuzzer", "compaction", Encoded(compaction));
  Write("version_edit_fuzzer", "log_number_only", Encoded(log_only));
  // Column families: one record adds family 1, another changes families 0 and 1 together,
  // a third drops family 1 (format in src/db/version_edit.h).
  VersionEdit add_family;
  add_family.SetColumnFamily(1);
  add_family.AddColumnFamily("users");
  add_family.SetComparatorName(BytewiseComparator()->Name());
  add_family.SetLogNumber(10);
  add_family.SetMaxColumnFamily(1);
  VersionEdit family_flush;
  family_flush.SetColumnFamily(1);
  family_flush.AddFile(0, Meta(13, "b", "k", 321, 330));
  family_flush.SetLogNumber(12);
  VersionEdit default_flush;
  default_flush.AddFile(0, Meta(15, "c", "d", 331, 340));
  default_flush.SetNextFileNumber(16);
  default_flush.SetLastSequence(340);
  VersionEdit drop_family;
  drop_family.SetColumnFamily(1);
  drop_family.DropColumnFamily();
  const std::string together = VersionEdit::EncodeRecord({default_flush, family_flush});
  Write("version_edit_fuzzer", "two_families", together);
  Write("version_edit_fuzzer", "add_family", Encoded(add_family));

  auto current = [](std::string_view name, const std::string& manifest) {
    return std::string(1, static_cast<char>(name.size())) + std::string(name) + manifest;
  };
  const std::string manifest = LogFile({Encoded(snapshot), Encoded(compaction)});
  Write("current_fuzzer", "two_edits", current("MANIFEST-000011\n", manifest));
  Write("current_fuzzer", "snapshot_only",
        current("MANIFEST-000001\n", LogFile({Encoded(snapshot)})));
  Write("current_fuzzer", "torn_last_edit",
        current("MANIFEST-000011\n", manifest.substr(0, manifest.size() - 4)));
  Write("current_fuzzer", "no_newline", current("MANIFEST-000011", manifest));
  Write(
      "current_fuzzer", "families",
      current("MANIFEST-000011\n", LogFile({Encoded(snapshot), Encoded(compaction),
                                            Encoded(add_family), together, Encoded(drop_family)})));
  Write("current_fuzzer", "not_a_manifest", current("000011.log\n", manifest));
  // Framed: the MANIFEST is built from [length][edit] records.
  auto framed = [](std::string_view name, const std::vector<std::string>& edits) {
    std::string s(1, static_cast<char>(0x80 | name.size()));
    s += name;
    for (const std::string& e : edits) s += static_cast<char>(e.size()) + e;
    return s;
  };
  Write("current_fuzzer", "framed_two_edits",
        framed("MANIFEST-000011\n", {Encoded(snapshot), Encoded(compaction)}));
  Write("current_fuzzer", "framed_families",
        framed("MANIFEST-000011\n",
               {Encoded(snapshot), Encoded(add_family), together, Encoded(drop_family)}));
  Write("current_fuzzer", "framed_three_edits",
        framed("MANIFEST-000002\n", {Encoded(snapshot), Encoded(log_only), Encoded(compaction)}));
}

// ---- db_ops_fuzzer ----
// Builds an input in the format of db_ops_format.h. Thread safety: one thread.
class Ops {
 public:
  explicit Ops(uint8_t options) : bytes_(1, static_cast<char>(options)) {}
  Ops& Op(DbOp op) { return Byte(static_cast<uint8_t>(op)); }
  Ops& Byte(uint8_t b) {
    bytes_ += static_cast<char>(b);
    return *this;
  }
  // Key number i of kKeys.
  Ops& Key(size_t i) { return Byte(static_cast<uint8_t>(i % kNumKeys)); }
  Ops& Value(std::string_view v) {
    Byte(static_cast<uint8_t>(v.size()));
    bytes_ += v;
    return *this;
  }
  // A generated value of units * 32 bytes.
  Ops& Big(int units) { return Byte(static_cast<uint8_t>(kBigValue + units - 1)); }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

void DbOpsSeeds() {
  {  // Writes and reads through a flush, a compaction and a reopen.
    Ops o(0x00);
    for (size_t k = 1; k < 8; k++) o.Op(DbOp::kPut).Key(k).Value("v" + std::to_string(k));
    o.Op(DbOp::kDelete).Key(3).Op(DbOp::kGet).Key(3).Op(DbOp::kGet).Key(4);
    o.Op(DbOp::kFlush).Op(DbOp::kPut).Key(4).Value("new").Op(DbOp::kScan);
    o.Op(DbOp::kCompactRange).Byte(0).Op(DbOp::kGet).Key(4);
    o.Op(DbOp::kReopen).Op(DbOp::kMultiGet).Byte(4).Key(1).Key(3).Key(4).Key(9).Key(0);
    o.Op(DbOp::kIterate).Byte(6).Byte(0).Byte(4).Byte(4).Byte(2).Key(3).Byte(5).Byte(1).Byte(5);
    Write("db_ops_fuzzer", "put_delete_flush_compact_reopen", o.bytes());
  }
  {  // The last level rewritten in place (kForce: flags 2 << 2) after overwrites and deletes.
    Ops o(0x00);
    for (size_t k = 1; k < 6; k++) o.Op(DbOp::kPut).Key(k).Value("a");
    o.Op(DbOp::kCompactRange).Byte(0);
    o.Op(DbOp::kPut).Key(2).Value("b").Op(DbOp::kDelete).Key(4);
    o.Op(DbOp::kCompactRange).Byte(8).Op(DbOp::kScan).Op(DbOp::kGet).Key(4);
    Write("db_ops_fuzzer", "compact_bottommost_force", o.bytes());
  }
  {  // Merges, batches, snapshots and merge operands (zstd, no flush at recovery).
    Ops o(0x05);
    o.Op(DbOp::kPut).Key(2).Value("base").Op(DbOp::kMerge).Key(2).Value("m1");
    o.Op(DbOp::kSnapshot).Byte(0).Op(DbOp::kMerge).Key(2).Value("m2");
    o.Op(DbOp::kMerge).Key(5).Value("only");
    o.Op(DbOp::kBatch)
        .Byte(3)
        .Byte(0)
        .Key(6)
        .Value("b0")
        .Byte(2)
        .Key(2)
        .Value("bm")
        .Byte(1)
        .Key(5)
        .Byte(2)
        .Key(7)
        .Value("x");
    o.Op(DbOp::kMergeOperands).Key(2).Byte(1).Op(DbOp::kMergeOperands).Key(2).Byte(0);
    o.Op(DbOp::kSnapshotRead).Byte(0).Key(2).Op(DbOp::kFlush).Op(DbOp::kMerge).Key(2).Value("m3");
    o.Op(DbOp::kIterate).Byte(0x85).Byte(0).Byte(1).Byte(5).Byte(5).Byte(3).Key(4).Byte(4).Byte(0);
    o.Op(DbOp::kSnapshot).Byte(0x80).Op(DbOp::kReopen).Op(DbOp::kGet).Key(2);
    Write("db_ops_fuzzer", "merge_batch_snapshot", o.bytes());
  }
  {  // Big values fill the 4 KiB write buffer: flushes and compactions, then power losses.
    Ops o(0x20);
    for (int i = 0; i < 24; i++) o.Op(DbOp::kPut).Key(static_cast<size_t>(i % 11)).Big(20 + i);
    o.Op(DbOp::kSyncPut).Key(12).Value("synced");
    o.Op(DbOp::kPut).Key(13).Value("maybe lost");
    o.Op(DbOp::kCrash).Byte(1).Op(DbOp::kScan);
    o.Op(DbOp::kMerge).Key(12).Value("after").Op(DbOp::kSyncWAL).Op(DbOp::kCrash).Byte(2);
    o.Op(DbOp::kWaitForCompact).Op(DbOp::kGet).Key(12);
    Write("db_ops_fuzzer", "big_values_crash", o.bytes());
  }
  {  // The POSIX file system: writes, a flush, multi-gets with asynchronous reads, a reopen.
    Ops o(0x80);
    for (size_t k = 0; k < 16; k++) o.Op(DbOp::kPut).Key(k).Big(8);
    o.Op(DbOp::kFlush).Op(DbOp::kMultiGet).Byte(0x85).Key(0).Key(3).Key(6).Key(9).Key(12).Key(15);
    o.Op(DbOp::kDelete).Key(6).Op(DbOp::kReopen).Op(DbOp::kGet).Key(6);
    Write("db_ops_fuzzer", "posix_flush_multiget", o.bytes());
  }
  {  // Avoid flush during recovery with point-in-time recovery and one background job.
    Ops o(0x64);
    for (int i = 0; i < 10; i++) o.Op(DbOp::kMerge).Key(static_cast<size_t>(i % 3)).Big(4);
    o.Op(DbOp::kReopen).Op(DbOp::kSyncPut).Key(9).Value("s").Op(DbOp::kCrash).Byte(3);
    o.Op(DbOp::kMergeOperands).Key(0).Byte(1).Op(DbOp::kCompactRange).Byte(3).Key(0).Key(2);
    Write("db_ops_fuzzer", "avoid_flush_merges_crash", o.bytes());
  }
  {  // Unsynced writes left in the logs a reopen keeps, then a synced write and a power loss.
    Ops o(0x04);
    o.Op(DbOp::kPut).Key(1).Value("unsynced").Op(DbOp::kMerge).Key(2).Value("too");
    o.Op(DbOp::kReopen).Op(DbOp::kSyncPut).Key(3).Value("synced").Op(DbOp::kCrash).Byte(0);
    o.Op(DbOp::kScan);
    Write("db_ops_fuzzer", "reopen_kept_logs_then_crash", o.bytes());
  }
}

}  // namespace
}  // namespace shale::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  shale::fuzz::g_root = argv[1];
  shale::fuzz::BlockSeeds();
  shale::fuzz::FilterSeeds();
  shale::fuzz::WalAndBatchSeeds();
  shale::fuzz::TableSeeds();
  shale::fuzz::VersionSeeds();
  shale::fuzz::DbOpsSeeds();
  return 0;
}
