// VersionEdit encoding, VersionSet recovery from CURRENT + MANIFEST (and every way they can be
// damaged), MANIFEST rollover, and the merging and level iterators under the iterator contract.
#include "src/db/version_set.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/comparator.h"
#include "shale/perf_context.h"
#include "src/base/filename.h"
#include "src/db/compaction_picker.h"
#include "src/db/level_iterator.h"
#include "src/db/merging_iterator.h"
#include "src/db/read_compaction.h"
#include "src/db/table_cache.h"
#include "src/db/version.h"
#include "src/db/version_edit.h"
#include "src/util/coding.h"
#include "src/util/random.h"
#include "table/table_builder.h"
#include "tests/fault_injection_fs.h"
#include "tests/iterator_contract.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"

namespace shale {
namespace {

std::string IKey(const std::string& user_key, SequenceNumber seq, ValueType t = kTypeValue) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, t);
  return k;
}

FileMetaData Meta(uint64_t number, const std::string& smallest, const std::string& largest,
                  SequenceNumber lo = 1, SequenceNumber hi = 1) {
  FileMetaData f;
  f.number = number;
  f.file_size = 1000 + number;
  f.smallest = IKey(smallest, hi);
  f.largest = IKey(largest, lo);
  f.smallest_seqno = lo;
  f.largest_seqno = hi;
  return f;
}

TEST(VersionEditTest, RoundTrip) {
  VersionEdit e;
  e.SetComparatorName("shale.BytewiseComparator");
  e.SetLogNumber(12);
  e.SetNextFileNumber(40);
  e.SetLastSequence(123456789);
  e.DeleteFile(1, 7);
  e.DeleteFile(3, 9);
  e.AddFile(0, Meta(20, "a", "m", 5, 9));
  e.AddFile(2, Meta(21, std::string("\0\xff", 2), "zz"));
  std::string enc;
  e.EncodeTo(&enc);
  VersionEdit d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  std::string enc2;
  d.EncodeTo(&enc2);
  EXPECT_EQ(enc, enc2);
  EXPECT_EQ(*d.log_number(), 12u);
  EXPECT_EQ(*d.last_sequence(), 123456789u);
  ASSERT_EQ(d.new_files().size(), 2u);
  EXPECT_EQ(d.new_files()[1].second.smallest, IKey(std::string("\0\xff", 2), 1));
  EXPECT_EQ(d.deleted_files().size(), 2u);
}

TEST(VersionEditTest, MalformedRecordsAreCorruption) {
  VersionEdit e;
  e.SetLogNumber(3);
  e.AddFile(1, Meta(5, "a", "b"));
  std::string enc;
  e.EncodeTo(&enc);
  VersionEdit d;
  // Cuts inside the new-file field (the first 2 bytes are the complete log-number field; a
  // record cut at a field boundary is caught by the MANIFEST record's checksum instead).
  for (size_t n = 3; n < enc.size(); n++) {
    EXPECT_TRUE(d.DecodeFrom(Slice(enc.data(), n)).IsCorruption()) << n;
  }
  std::string unknown = enc;
  PutVarint32(&unknown, 99);
  Status s = d.DecodeFrom(unknown);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.ToString().find("unknown tag 99"), std::string::npos);
  std::string bad_level;
  PutVarint32(&bad_level, 5);  // kDeletedFile
  PutVarint32(&bad_level, 1000);
  PutVarint64(&bad_level, 1);
  EXPECT_TRUE(d.DecodeFrom(bad_level).IsCorruption());
}

// A file with range tombstones has its own tag, its count, and may be bounded by tombstone keys.
TEST(VersionEditTest, FilesWithRangeDeletions) {
  FileMetaData f = Meta(30, "c", "q", 4, 8);
  f.smallest = IKey("b", 8, kTypeRangeDeletion);
  f.largest.clear();
  AppendRangeDeletionSentinel(&f.largest, "r");
  f.num_range_deletions = 3;
  VersionEdit e;
  e.AddFile(1, f);
  e.AddFile(1, Meta(31, "s", "t"));
  std::string enc;
  e.EncodeTo(&enc);
  EXPECT_EQ(static_cast<uint8_t>(enc[0]), 11);  // kNewFileWithRangeDeletions
  VersionEdit d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  ASSERT_EQ(d.new_files().size(), 2u);
  EXPECT_EQ(d.new_files()[0].second.num_range_deletions, 3u);
  EXPECT_EQ(d.new_files()[0].second.smallest, f.smallest);
  EXPECT_TRUE(IsRangeDeletionSentinel(d.new_files()[0].second.largest));
  EXPECT_EQ(d.new_files()[1].second.num_range_deletions, 0u);
  EXPECT_NE(d.DebugString().find("3 range deletions"), std::string::npos) << d.DebugString();
  for (size_t n = 1; n < enc.size(); n++) {
    // Any cut inside either file field is malformed.
    Status s = d.DecodeFrom(Slice(enc.data(), n));
    EXPECT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
  }

  // Tombstone bounds only with tag 11; a sentinel never starts a file; a count of 0 is refused.
  const auto encode_as = [](uint32_t tag, const FileMetaData& m, uint64_t count) {
    std::string out;
    PutVarint32(&out, tag);
    PutVarint32(&out, 1);
    PutVarint64(&out, m.number);
    PutVarint64(&out, m.file_size);
    PutLengthPrefixedSlice(&out, m.smallest);
    PutLengthPrefixedSlice(&out, m.largest);
    PutVarint64(&out, m.smallest_seqno);
    PutVarint64(&out, m.largest_seqno);
    if (tag == 11) PutVarint64(&out, count);
    return out;
  };
  EXPECT_TRUE(d.DecodeFrom(encode_as(11, f, 3)).ok());
  EXPECT_TRUE(d.DecodeFrom(encode_as(6, f, 0)).IsCorruption());
  EXPECT_TRUE(d.DecodeFrom(encode_as(11, f, 0)).IsCorruption());
  FileMetaData starts_with_sentinel = f;
  starts_with_sentinel.smallest = f.largest;
  EXPECT_TRUE(d.DecodeFrom(encode_as(11, starts_with_sentinel, 3)).IsCorruption());
}

// A record holds one section per family; the first may leave out the default family's tag.
TEST(VersionEditTest, RecordsOfSeveralFamilies) {
  std::vector<VersionEdit> edits(3);
  edits[0].SetLogNumber(7);
  edits[0].AddFile(0, Meta(20, "a", "m", 5, 9));
  edits[0].SetNextFileNumber(30);
  edits[1].SetColumnFamily(3);
  edits[1].AddColumnFamily("users");
  edits[1].SetComparatorName("shale.BytewiseComparator");
  edits[1].SetMaxColumnFamily(3);
  edits[1].SetLogNumber(7);
  edits[2].SetColumnFamily(2);
  edits[2].DropColumnFamily();
  const std::string record = VersionEdit::EncodeRecord(edits);
  std::vector<VersionEdit> decoded;
  ASSERT_TRUE(VersionEdit::DecodeRecord(record, &decoded).ok());
  ASSERT_EQ(decoded.size(), 3u);
  EXPECT_EQ(decoded[0].column_family(), 0u);
  EXPECT_EQ(decoded[0].new_files().size(), 1u);
  EXPECT_EQ(decoded[1].column_family(), 3u);
  EXPECT_EQ(*decoded[1].column_family_add(), "users");
  EXPECT_EQ(*decoded[1].max_column_family(), 3u);
  EXPECT_EQ(*decoded[1].log_number(), 7u);
  EXPECT_EQ(decoded[2].column_family(), 2u);
  EXPECT_TRUE(decoded[2].column_family_drop());
  EXPECT_FALSE(decoded[2].column_family_add());
  EXPECT_EQ(VersionEdit::EncodeRecord(decoded), record);
  // One section is what DecodeFrom takes; more is Corruption there.
  VersionEdit one;
  EXPECT_TRUE(one.DecodeFrom(record).IsCorruption());
  ASSERT_TRUE(one.DecodeFrom(VersionEdit::EncodeRecord({edits[1]})).ok());
  EXPECT_EQ(one.column_family(), 3u);
  // The default family after the first section carries its tag, and reads back as family 0.
  ASSERT_TRUE(
      VersionEdit::DecodeRecord(VersionEdit::EncodeRecord({edits[2], edits[0]}), &decoded).ok());
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[1].column_family(), 0u);
  EXPECT_EQ(decoded[1].new_files().size(), 1u);

  // An empty default section first keeps its tag, or it would read as part of the next one.
  ASSERT_TRUE(
      VersionEdit::DecodeRecord(VersionEdit::EncodeRecord({VersionEdit(), edits[2]}), &decoded)
          .ok());
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[1].column_family(), 2u);

  auto corrupt = [](const std::vector<VersionEdit>& e, const std::string& needle) {
    std::vector<VersionEdit> out;
    Status s = VersionEdit::DecodeRecord(VersionEdit::EncodeRecord(e), &out);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(needle), std::string::npos) << s.ToString();
  };
  corrupt({edits[1], edits[1]}, "column family twice");
  VersionEdit both = edits[1];
  both.DropColumnFamily();
  corrupt({both}, "both added and dropped");
  VersionEdit add_default;
  add_default.AddColumnFamily("default");
  corrupt({add_default}, "the default column family added or dropped");
  VersionEdit drop_default;
  drop_default.DropColumnFamily();
  corrupt({edits[1], drop_default}, "the default column family added or dropped");
  // A truncated family id.
  std::string cut;
  PutVarint32(&cut, 7);  // kColumnFamily
  EXPECT_TRUE(VersionEdit::DecodeRecord(cut, &decoded).IsCorruption());
}

class VersionSetTest : public ::testing::Test {
 protected:
  VersionSetTest() {
    EXPECT_TRUE(fs_.CreateDirIfMissing("/db").ok());
    EXPECT_TRUE(fs_.NewDirectory("/db", &dir_).ok());
    options_.num_levels = 4;
    // The picker tests lay out static level targets (L1 = max_bytes_for_level_base).
    options_.level_compaction_dynamic_level_bytes = false;
    TableReaderOptions ro;
    ro.comparator = &icmp_;
    table_cache_ = std::make_unique<TableCache>("/db", &fs_, ro, -1, false);
  }
  std::unique_ptr<VersionSet> NewSet() {
    return std::make_unique<VersionSet>("/db", &options_, &fs_, table_cache_.get(), &icmp_,
                                        dir_.get());
  }
  // "L0:[n,..] L1:[..]" for the non-empty levels of the current version.
  static std::string Shape(const VersionSet& vs) {
    std::string out;
    auto v = vs.current();
    for (int level = 0; level < v->num_levels(); level++) {
      if (v->files(level).empty()) continue;
      out += "L" + std::to_string(level) + ":";
      for (const auto& f : v->files(level)) out += std::to_string(f->number) + ",";
      out += " ";
    }
    return out;
  }
  // Writes kManifest holding records (encoded VersionEdits) and points CURRENT at it.
  void WriteManifest(const std::vector<std::string>& records) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(fs_.NewWritableFile(kManifest, FileOptions(), &f).ok());
    log::Writer w(std::move(f));
    for (const auto& r : records) ASSERT_TRUE(w.AddRecord(r).ok());
    ASSERT_TRUE(w.Close().ok());
    fs_.SetFileContents("/db/CURRENT", "MANIFEST-000009\n");
  }
  static std::string Encode(const VersionEdit& e) {
    std::string rec;
    e.EncodeTo(&rec);
    return rec;
  }
  // What the first record of a MANIFEST holds besides the files.
  static VersionEdit BaseEdit() {
    VersionEdit base;
    base.SetComparatorName(BytewiseComparator()->Name());
    base.SetLogNumber(0);
    base.SetNextFileNumber(100);
    base.SetLastSequence(0);
    return base;
  }
  // Recover must fail with Corruption, every one of needles in its message.
  void ExpectCorruption(const std::vector<std::string>& needles) {
    Status s = NewSet()->Recover();
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    for (const std::string& n : needles) {
      EXPECT_NE(s.ToString().find(n), std::string::npos) << n << " not in: " << s.ToString();
    }
  }

  static constexpr char kManifest[] = "/db/MANIFEST-000009";
  test::FaultInjectionFileSystem fs_{3};
  std::unique_ptr<Directory> dir_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<TableCache> table_cache_;
};

TEST_F(VersionSetTest, LogAndApplyThenRecover) {
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    VersionEdit e1;
    e1.AddFile(0, Meta(vs->NewFileNumber(), "a", "z", 1, 10));
    e1.AddFile(0, Meta(vs->NewFileNumber(), "c", "d", 11, 20));
    vs->SetLastSequence(20);
    ASSERT_TRUE(vs->LogAndApply(&e1).ok());
    EXPECT_EQ(Shape(*vs), "L0:4,3, ");  // newest first
    VersionEdit e2;
    e2.DeleteFile(0, 3);
    e2.DeleteFile(0, 4);
    e2.AddFile(1, Meta(vs->NewFileNumber(), "a", "k"));
    e2.AddFile(1, Meta(vs->NewFileNumber(), "l", "z"));
    e2.SetLogNumber(5);
    ASSERT_TRUE(vs->LogAndApply(&e2).ok());
    EXPECT_EQ(Shape(*vs), "L1:5,6, ");
  }
  auto vs = NewSet();
  ASSERT_TRUE(vs->Recover().ok());
  EXPECT_EQ(Shape(*vs), "L1:5,6, ");
  EXPECT_EQ(vs->last_sequence(), 20u);
  EXPECT_EQ(vs->log_number(), 5u);
  EXPECT_GE(vs->next_file_number(), 7u);
  // Recovery starts a new MANIFEST; CURRENT names it.
  std::string current;
  ASSERT_TRUE(ReadFileToString(&fs_, "/db/CURRENT", &current).ok());
  EXPECT_EQ("/db/" + current.substr(0, current.size() - 1),
            ManifestFileName("/db", vs->manifest_file_number()));
}

// A level over its target gives one file to the next level: by default the one that overlaps
// the fewest next-level bytes per byte (here none: it moves down unchanged); round robin takes
// the first after the level's pointer whatever it overlaps.
TEST_F(VersionSetTest, PickerTakesTheFileWithTheLeastOverlapUnlessRoundRobin) {
  options_.max_bytes_for_level_base = 1000;  // L1's ~3 KB is over its target
  for (CompactionPri pri : {CompactionPri::kMinOverlappingRatio, CompactionPri::kRoundRobin}) {
    SCOPED_TRACE(static_cast<int>(pri));
    options_.compaction_pri = pri;
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    VersionEdit e;
    e.AddFile(1, Meta(10, "a", "c"));
    e.AddFile(1, Meta(11, "d", "f"));
    e.AddFile(1, Meta(12, "g", "i"));
    e.AddFile(2, Meta(20, "a", "b"));
    e.AddFile(2, Meta(21, "c", "c"));
    e.AddFile(2, Meta(22, "h", "j"));
    ASSERT_TRUE(vs->LogAndApply(&e).ok());
    std::vector<std::string> pointers(options_.num_levels);
    auto c = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->level(), 1);
    ASSERT_EQ(c->inputs(0).size(), 1u);
    if (pri == CompactionPri::kMinOverlappingRatio) {
      EXPECT_EQ(c->inputs(0)[0]->number, 11u);
      EXPECT_TRUE(c->IsTrivialMove());
    } else {
      EXPECT_EQ(c->inputs(0)[0]->number, 10u);
      EXPECT_EQ(c->inputs(1).size(), 2u);  // 20 and 21
      // The pointer moves on: the next pick is file 11.
      c = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(c->inputs(0)[0]->number, 11u);
    }
  }
}

// A file that moves down unchanged takes along its neighbours that overlap nothing below either,
// as long as the output level stays within its target; a manual compaction of several such files
// rewrites them.
TEST_F(VersionSetTest, PickerMovesARunOfFilesThatOverlapNothingBelow) {
  options_.level_compaction_dynamic_level_bytes = false;
  options_.max_bytes_for_level_base = 1000;  // L1's ~4 KB is over its target
  for (double multiplier : {10.0, 3.0}) {
    SCOPED_TRACE(multiplier);
    options_.max_bytes_for_level_multiplier = multiplier;  // L2's room: ~9 KB, then ~2 KB
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    VersionEdit e;
    e.AddFile(1, Meta(10, "a", "c"));
    e.AddFile(1, Meta(11, "d", "f"));
    e.AddFile(1, Meta(12, "g", "i"));
    e.AddFile(1, Meta(13, "k", "m"));
    e.AddFile(2, Meta(20, "l", "l"));  // under 13
    ASSERT_TRUE(vs->LogAndApply(&e).ok());
    std::vector<std::string> pointers(options_.num_levels);
    auto c = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->level(), 1);
    std::vector<uint64_t> numbers;
    for (const auto& f : c->inputs(0)) numbers.push_back(f->number);
    const std::vector<uint64_t> expected =
        multiplier == 10.0 ? std::vector<uint64_t>{10, 11, 12} : std::vector<uint64_t>{10};
    EXPECT_EQ(numbers, expected);
    EXPECT_TRUE(c->inputs(1).empty());
    EXPECT_TRUE(c->IsTrivialMove());
    EXPECT_EQ(pointers[1], c->inputs(0).back()->largest);

    const Slice begin("a"), end("i");
    auto manual = RangeCompaction(vs->config(0), vs->current(), 1, &begin, &end);
    ASSERT_NE(manual, nullptr);
    EXPECT_EQ(manual->inputs(0).size(), 3u);
    EXPECT_FALSE(manual->IsTrivialMove());
  }
}

// With compactions running, the picker takes the highest-scoring level whose inputs are free
// (L0 is due but needs L1 files that L1's compactions hold); a compaction whose output range a
// running one writes into is never returned, even when its inputs are free.
TEST_F(VersionSetTest, PickerRunsBesideRunningCompactions) {
  options_.level0_file_num_compaction_trigger = 2;
  options_.max_bytes_for_level_base = 1000;  // L1's ~3 KB: score ~3 (L0's 2 files: 1)
  options_.max_bytes_for_level_multiplier = 100;
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  VersionEdit e;
  e.AddFile(0, Meta(30, "a", "b", 5, 5));
  e.AddFile(0, Meta(31, "e", "f", 6, 6));
  e.AddFile(1, Meta(10, "a", "c"));
  e.AddFile(1, Meta(11, "d", "f"));
  e.AddFile(1, Meta(12, "g", "i"));
  e.AddFile(2, Meta(20, "g", "h"));
  vs->SetLastSequence(6);
  ASSERT_TRUE(vs->LogAndApply(&e).ok());
  std::vector<std::string> pointers(options_.num_levels);
  // Alone, L1 wins (the highest score): its least-overlap files are 10 and 11 (no L2 overlap),
  // which move down together.
  auto first = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->level(), 1);
  ASSERT_EQ(first->inputs(0).size(), 2u);
  EXPECT_EQ(first->inputs(0)[0]->number, 10u);
  EXPECT_EQ(first->inputs(0)[1]->number, 11u);
  EXPECT_TRUE(first->IsTrivialMove());
  // Running it (inputs marked), L0 needs L1's busy files 10 and 11: it waits; L1's last file 12
  // (with L2's 20) is still free, and L1 (1,012 of 1,000 bytes free) remains due.
  first->MarkBeingCompacted(true);
  auto second = PickCompaction(vs->config(0), vs->current(), {first.get()}, &pointers);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->level(), 1);
  ASSERT_EQ(second->inputs(0).size(), 1u);
  EXPECT_EQ(second->inputs(0)[0]->number, 12u);
  EXPECT_EQ(second->inputs(1).size(), 1u);
  // A running compaction that writes L2's g-i range (its inputs not marked here) keeps the
  // same pick from being returned: nothing else is due.
  EXPECT_EQ(PickCompaction(vs->config(0), vs->current(), {first.get(), second.get()}, &pointers),
            nullptr);
  second->MarkBeingCompacted(true);
  EXPECT_EQ(PickCompaction(vs->config(0), vs->current(), {first.get(), second.get()}, &pointers),
            nullptr);
}

// Level targets: static sizing multiplies up from L1; dynamic sizing divides down from the
// largest level to the deepest level that fits max_bytes_for_level_base, where L0 then goes.
TEST_F(VersionSetTest, LevelTargetsStaticAndDynamic) {
  options_.num_levels = 7;
  options_.max_bytes_for_level_base = 1000;
  options_.max_bytes_for_level_multiplier = 10;
  options_.level0_file_num_compaction_trigger = 2;
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  auto sized = [](uint64_t number, const std::string& lo, const std::string& hi, uint64_t size) {
    FileMetaData f = Meta(number, lo, hi);
    f.file_size = size;
    return f;
  };
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    LevelTargets t = ComputeLevelTargets(options_, *vs->current());
    EXPECT_EQ(t.base_level, 1);
    EXPECT_EQ(t.max_bytes[1], 1000u);
    EXPECT_EQ(t.max_bytes[3], 100000u);
    options_.level_compaction_dynamic_level_bytes = true;
    t = ComputeLevelTargets(options_, *vs->current());
    EXPECT_EQ(t.base_level, 6);  // nothing below L0: straight to the last level
    EXPECT_EQ(t.lowest_unnecessary_level, -1);
  }
  {
    // 1,000,000 bytes in L6: targets 1,000 (L3) ... 1,000,000 (L6); L0 goes to L3.
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    VersionEdit e;
    e.AddFile(6, sized(60, "a", "m", 500000));
    e.AddFile(6, sized(61, "n", "z", 500000));
    e.AddFile(0, Meta(30, "b", "c", 5, 5));
    e.AddFile(0, Meta(31, "x", "y", 6, 6));
    vs->SetLastSequence(6);
    ASSERT_TRUE(vs->LogAndApply(&e).ok());
    const LevelTargets t = ComputeLevelTargets(options_, *vs->current());
    EXPECT_EQ(t.base_level, 3);
    EXPECT_EQ(t.max_bytes[1], kNone);
    EXPECT_EQ(t.max_bytes[2], kNone);
    EXPECT_EQ(t.max_bytes[3], 1000u);
    EXPECT_EQ(t.max_bytes[4], 10000u);
    EXPECT_EQ(t.max_bytes[6], 1000000u);
    EXPECT_EQ(t.lowest_unnecessary_level, -1);
    // L0 (at its trigger) compacts into L3, which is empty: both files, nothing to merge with.
    std::vector<std::string> pointers(options_.num_levels);
    auto c = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->level(), 0);
    EXPECT_EQ(c->output_level(), 3);
    EXPECT_EQ(c->inputs(0).size(), 2u);
    EXPECT_TRUE(c->inputs(1).empty());
  }
  {
    // 50 bytes left in L1 above 1,000,000 in L6 (a DB sized statically before): L1 and L2 are
    // more levels than the data needs; L1 stays the base and drains down first.
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    VersionEdit e;
    e.AddFile(1, sized(10, "c", "d", 50));
    e.AddFile(6, sized(60, "a", "z", 1000000));
    ASSERT_TRUE(vs->LogAndApply(&e).ok());
    const LevelTargets t = ComputeLevelTargets(options_, *vs->current());
    EXPECT_EQ(t.base_level, 1);
    EXPECT_EQ(t.lowest_unnecessary_level, 2);
    EXPECT_EQ(t.max_bytes[1], 1000u);  // never below max_bytes_for_level_base
    std::vector<std::string> pointers(options_.num_levels);
    auto c = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->level(), 1);
    EXPECT_EQ(c->output_level(), 2);
  }
}

// With static level sizes L0 is due by file count or, as in RocksDB, once its bytes reach
// max_bytes_for_level_base.
TEST_F(VersionSetTest, StaticL0IsDueByFilesOrBytes) {
  options_.max_bytes_for_level_base = 5000;
  options_.level0_file_num_compaction_trigger = 4;
  auto sized = [](uint64_t number, const std::string& lo, const std::string& hi, uint64_t size) {
    FileMetaData f = Meta(number, lo, hi, number, number);
    f.file_size = size;
    return f;
  };
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  VersionEdit e;
  e.AddFile(0, sized(30, "a", "c", 2000));
  e.AddFile(0, sized(31, "b", "d", 2000));
  vs->SetLastSequence(31);
  ASSERT_TRUE(vs->LogAndApply(&e).ok());
  std::vector<std::string> pointers(options_.num_levels);
  EXPECT_LT(MaxCompactionScore(vs->config(0), *vs->current()),
            1);  // 2 of 4 files, 4,000 of 5,000 bytes
  EXPECT_EQ(PickCompaction(vs->config(0), vs->current(), {}, &pointers), nullptr);
  VersionEdit more;
  more.AddFile(0, sized(32, "c", "e", 1000));
  vs->SetLastSequence(32);
  ASSERT_TRUE(vs->LogAndApply(&more).ok());
  EXPECT_GE(MaxCompactionScore(vs->config(0), *vs->current()), 1);  // 5,000 bytes: due with 3 files
  auto c = PickCompaction(vs->config(0), vs->current(), {}, &pointers);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 0);
  EXPECT_EQ(c->output_level(), 1);
  EXPECT_EQ(c->inputs(0).size(), 3u);
}

// Read-triggered compactions: a seek charges the newest L0 file holding its key when another
// sorted run holds it too; once an L0 file has been charged its allowed seeks (at least 100),
// all of L0 goes into L1, unless L1's share is too wide.
TEST_F(VersionSetTest, ReadCompactionTakesL0OnceAFileExhaustsItsSeeks) {
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  VersionEdit e;
  e.AddFile(0, Meta(31, "b", "d", 6, 6));
  e.AddFile(0, Meta(30, "a", "b", 5, 5));
  e.AddFile(0, Meta(32, "x", "y", 7, 7));
  e.AddFile(1, Meta(10, "a", "c"));
  e.AddFile(1, Meta(11, "d", "f"));
  e.AddFile(1, Meta(12, "g", "i"));
  e.AddFile(2, Meta(20, "g", "h"));
  vs->SetLastSequence(7);
  ASSERT_TRUE(vs->LogAndApply(&e).ok());
  auto v = vs->current();
  auto number = [](const FileMetaData* f) { return f == nullptr ? 0 : f->number; };
  EXPECT_EQ(number(v->L0FileOverlappingOtherRuns("a")), 30u);  // and L1's 10
  EXPECT_EQ(number(v->L0FileOverlappingOtherRuns("b")), 31u);  // the newest of 31, 30, 10
  EXPECT_EQ(number(v->L0FileOverlappingOtherRuns("d")), 31u);  // and L1's 11
  EXPECT_EQ(number(v->L0FileOverlappingOtherRuns("e")), 0u);   // L1's 11 alone
  EXPECT_EQ(number(v->L0FileOverlappingOtherRuns("g")), 0u);   // L1 and L2: no L0 file
  EXPECT_EQ(number(v->L0FileOverlappingOtherRuns("x")), 0u);   // L0's 32 alone
  // Not due by sizes, and no file has exhausted its seeks (files of ~1 KB: 100 allowed).
  EXPECT_LT(MaxCompactionScore(vs->config(0), *v), 1);
  bool blocked = true;
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {}, &blocked), nullptr);
  EXPECT_FALSE(blocked);
  const FileMetaData* f30 = v->L0FileOverlappingOtherRuns("a");
  EXPECT_EQ(AllowedSeeks(*f30, options_.read_compaction_bytes_per_seek), 100u);
  f30->seeks.Charge(99);
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {}, &blocked), nullptr);
  f30->seeks.Charge(1);
  auto c = PickReadCompaction(vs->config(0), v, {}, &blocked);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 0);
  EXPECT_EQ(c->output_level(), 1);
  EXPECT_EQ(c->inputs(0).size(), 3u);  // all of L0
  ASSERT_EQ(c->inputs(1).size(), 3u);  // L0 spans a-y: all of L1
  EXPECT_EQ(c->inputs(1)[0]->number, 10u);
  EXPECT_EQ(c->inputs(1)[2]->number, 12u);
  // Running, its inputs are busy: nothing to run, and the picker says one waits.
  c->MarkBeingCompacted(true);
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {c.get()}, &blocked), nullptr);
  EXPECT_TRUE(blocked);
  c->MarkBeingCompacted(false);
  // Off: nothing, whatever the charges.
  options_.read_compaction_bytes_per_seek = 0;
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {}, &blocked), nullptr);
  EXPECT_FALSE(blocked);
  // Too wide (L1's share over 10 × target_file_size_base): refused, and still refused once the
  // compaction would fit.
  options_.read_compaction_bytes_per_seek = 16384;
  options_.target_file_size_base = 200;  // 10 × 200 < L1's 3,033 bytes
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {}, &blocked), nullptr);
  EXPECT_FALSE(blocked);
  EXPECT_TRUE(f30->read_compaction_refused);
  options_.target_file_size_base = 64 << 20;
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {}, &blocked), nullptr);
  // Another L0 file exhausted: the refusal was 30's; 31's compaction (the same) fits now.
  v->L0FileOverlappingOtherRuns("d")->seeks.Charge(100);
  c = PickReadCompaction(vs->config(0), v, {}, &blocked);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->inputs(0).size(), 3u);
  // 35 × L0's bytes: an L0 file of 10 bytes may not pull in L1's 2,021 bytes under a-e.
  VersionEdit small;
  for (uint64_t n : {30, 31, 32}) small.DeleteFile(0, n);
  FileMetaData tiny = Meta(33, "a", "e", 8, 8);
  tiny.file_size = 10;
  small.AddFile(0, tiny);
  vs->SetLastSequence(8);
  ASSERT_TRUE(vs->LogAndApply(&small).ok());
  v = vs->current();
  v->L0FileOverlappingOtherRuns("a")->seeks.Charge(100);
  EXPECT_EQ(PickReadCompaction(vs->config(0), v, {}, &blocked), nullptr);
  EXPECT_FALSE(blocked);
  EXPECT_TRUE(v->L0FileOverlappingOtherRuns("a")->read_compaction_refused);
}

// An iterator's sampler charges about one seek per seek to the L0 file it lands in (one in 16,
// times 16), only where another run holds the key too, and calls due once: when the charges
// reach the file's allowed seeks.
TEST_F(VersionSetTest, ReadSamplerChargesTheL0FileOfOverlappingSeeks) {
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  VersionEdit e;
  e.AddFile(0, Meta(30, "a", "c", 5, 5));
  e.AddFile(1, Meta(10, "b", "d"));
  vs->SetLastSequence(5);
  ASSERT_TRUE(vs->LogAndApply(&e).ok());
  auto v = vs->current();
  const FileMetaData& f30 = *v->files(0)[0];
  int due = 0;
  ReadSampler sampler(v.get(), 16384, 1, [&] { due++; });
  for (int i = 0; i < 5000; i++) sampler.Seeked("a");  // L0's 30 alone: nothing
  EXPECT_EQ(f30.seeks.charged(), 0u);
  for (int i = 0; i < 5000; i++) sampler.Seeked(i % 2 == 0 ? "b" : "c");
  EXPECT_GT(f30.seeks.charged(), 4000u);
  EXPECT_LT(f30.seeks.charged(), 6000u);
  EXPECT_EQ(f30.seeks.charged() % ReadSampler::kSeekSamplePeriod, 0u);
  EXPECT_EQ(due, 1);  // at 100, not again
  // Another iterator's sampler seeds other samples; the file's count is shared.
  ReadSampler other(v.get(), 16384, 2, [&] { due++; });
  const uint64_t before = f30.seeks.charged();
  for (int i = 0; i < 1000; i++) other.Seeked("b");
  EXPECT_GT(f30.seeks.charged(), before);
  EXPECT_EQ(due, 1);
}

// Pending compaction bytes: nothing while every level is under its target; all of L0 and L1
// once L0 reaches its trigger; a level over its target adds its excess and the part of the next
// level it overlaps in proportion.
TEST_F(VersionSetTest, PendingCompactionBytesEstimate) {
  options_.level0_file_num_compaction_trigger = 2;
  options_.max_bytes_for_level_base = 10000;
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  VersionEdit e;
  e.AddFile(0, Meta(5, "a", "z"));  // 1,005 bytes
  e.AddFile(1, Meta(10, "a", "c"));
  e.AddFile(1, Meta(11, "d", "f"));
  e.AddFile(1, Meta(12, "g", "i"));  // L1: 3,033 bytes
  e.AddFile(2, Meta(20, "a", "b"));
  e.AddFile(2, Meta(21, "c", "c"));  // L2: 2,041 bytes
  ASSERT_TRUE(vs->LogAndApply(&e).ok());
  EXPECT_EQ(EstimatePendingCompactionBytes(vs->config(0), *vs->current()), 0u);
  VersionEdit e2;
  e2.AddFile(0, Meta(6, "b", "y"));  // L0: 2 files, 2,011 bytes: at the trigger
  ASSERT_TRUE(vs->LogAndApply(&e2).ok());
  EXPECT_EQ(EstimatePendingCompactionBytes(vs->config(0), *vs->current()), 2011u + 3033u);

  options_.level0_file_num_compaction_trigger = 4;
  options_.max_bytes_for_level_base = 1000;  // L1 is 2,033 bytes over; L2's target is 10,000
  auto vs2 = NewSet();
  ASSERT_TRUE(vs2->Recover().ok());
  // 2,033 × (1 + 2,041 / 3,033) = 3,401; L2 with L1's excess (4,074 bytes) is under target.
  EXPECT_EQ(EstimatePendingCompactionBytes(vs2->config(0), *vs2->current()), 3401u);
}

TEST_F(VersionSetTest, ManifestRollsOverWhenLarge) {
  options_.max_manifest_file_size = 2000;
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  const uint64_t first = vs->manifest_file_number();
  for (int i = 0; i < 100; i++) {
    VersionEdit e;
    e.AddFile(0, Meta(vs->NewFileNumber(), "k" + std::to_string(i), "k" + std::to_string(i)));
    ASSERT_TRUE(vs->LogAndApply(&e).ok());
  }
  EXPECT_NE(vs->manifest_file_number(), first);
  EXPECT_LE(fs_.FileSize(ManifestFileName("/db", vs->manifest_file_number())), 2000u + 6000u);
  auto again = NewSet();
  ASSERT_TRUE(again->Recover().ok());
  EXPECT_EQ(again->current()->files(0).size(), 100u);
}

TEST_F(VersionSetTest, FailedManifestWriteIsNotInstalledAndNextEditStartsFresh) {
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  const uint64_t first = vs->manifest_file_number();
  fs_.SetErrorRate(test::FaultOp::kSync, 1, "MANIFEST");
  VersionEdit e;
  e.AddFile(0, Meta(vs->NewFileNumber(), "a", "b"));
  EXPECT_TRUE(vs->LogAndApply(&e).IsIOError());
  EXPECT_EQ(Shape(*vs), "");
  fs_.DisableAllFaults();
  VersionEdit e2;
  e2.AddFile(0, Meta(vs->NewFileNumber(), "c", "d"));
  ASSERT_TRUE(vs->LogAndApply(&e2).ok());
  EXPECT_NE(vs->manifest_file_number(), first);
  auto again = NewSet();
  ASSERT_TRUE(again->Recover().ok());
  EXPECT_EQ(Shape(*again), "L0:4, ");
}

TEST_F(VersionSetTest, DamagedCurrentOrManifestIsCorruption) {
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    VersionEdit e;
    e.AddFile(1, Meta(vs->NewFileNumber(), "a", "b"));
    ASSERT_TRUE(vs->LogAndApply(&e).ok());
  }
  std::string current;
  ASSERT_TRUE(ReadFileToString(&fs_, "/db/CURRENT", &current).ok());
  const std::string manifest = "/db/" + current.substr(0, current.size() - 1);
  const std::string good_manifest = fs_.FileContents(manifest);

  // Each is Corruption naming what is wrong.
  auto expect_corruption = [&](const char* what, std::vector<std::string> needles) {
    SCOPED_TRACE(what);
    ExpectCorruption(needles);
  };
  fs_.SetFileContents("/db/CURRENT", "");
  expect_corruption("empty CURRENT", {"CURRENT is empty", "/db"});
  fs_.SetFileContents("/db/CURRENT", current.substr(0, current.size() - 1));
  expect_corruption("CURRENT without newline", {"CURRENT", "newline", "/db"});
  fs_.SetFileContents("/db/CURRENT", "MANIFEST-999999\n");
  expect_corruption("CURRENT naming a missing MANIFEST", {"missing MANIFEST: MANIFEST-999999"});
  fs_.SetFileContents("/db/CURRENT", "garbage\n");
  expect_corruption("CURRENT naming something else", {"CURRENT", "garbage"});
  ASSERT_TRUE(fs_.DeleteFile("/db/CURRENT").ok());
  expect_corruption("no CURRENT", {"CURRENT is missing", "/db"});
  fs_.SetFileContents("/db/CURRENT", current);

  // A flipped bit inside the MANIFEST's records.
  std::string bad = good_manifest;
  bad[10] ^= 1;
  fs_.SetFileContents(manifest, bad);
  expect_corruption("MANIFEST bit flip", {manifest + ": offset 0"});
  // A torn last record is an unacknowledged edit: recovery keeps the state before it.
  fs_.SetFileContents(manifest, good_manifest.substr(0, good_manifest.size() - 3));
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->Recover().ok());
    EXPECT_EQ(Shape(*vs), "");
  }
}

TEST_F(VersionSetTest, InconsistentEditsAreCorruption) {
  auto write_manifest = [&](const std::vector<VersionEdit>& edits) {
    std::vector<std::string> records;
    for (const auto& e : edits) records.push_back(Encode(e));
    WriteManifest(records);
  };
  const VersionEdit base = BaseEdit();

  VersionEdit overlap = base;
  overlap.AddFile(1, Meta(10, "a", "m"));
  overlap.AddFile(1, Meta(11, "k", "z"));
  write_manifest({overlap});
  ExpectCorruption({kManifest, "files 10 and 11 overlap in L1"});
  // Overlap between files added by different edits, with the edges touching.
  VersionEdit first = base;
  first.AddFile(2, Meta(10, "a", "k"));
  VersionEdit touching;
  touching.AddFile(2, Meta(11, "k", "z"));
  write_manifest({first, touching});
  ExpectCorruption({kManifest, "files 10 and 11 overlap in L2"});
  // A file ending in a range-deletion sentinel at k holds nothing of k: the next may start there.
  VersionEdit sentinel = base;
  FileMetaData ends_at_k = Meta(10, "a", "a");
  ends_at_k.largest.clear();
  AppendRangeDeletionSentinel(&ends_at_k.largest, "k");
  ends_at_k.num_range_deletions = 1;
  sentinel.AddFile(2, ends_at_k);
  sentinel.AddFile(2, Meta(11, "k", "z"));
  write_manifest({sentinel});
  ASSERT_TRUE(NewSet()->Recover().ok());
  // But not past it.
  VersionEdit past = base;
  ends_at_k.largest.clear();
  AppendRangeDeletionSentinel(&ends_at_k.largest, "l");
  past.AddFile(2, ends_at_k);
  past.AddFile(2, Meta(11, "k", "z"));
  write_manifest({past});
  ExpectCorruption({kManifest, "files 10 and 11 overlap in L2"});
  // L0 files may overlap.
  VersionEdit l0 = base;
  l0.AddFile(0, Meta(10, "a", "m"));
  l0.AddFile(0, Meta(11, "k", "z"));
  write_manifest({l0});
  ASSERT_TRUE(NewSet()->Recover().ok());

  // The same file number twice: on two levels, or added twice to one level (in one edit or
  // in two), which would otherwise silently keep one of the two descriptions.
  VersionEdit dup = base;
  dup.AddFile(1, Meta(10, "a", "b"));
  dup.AddFile(2, Meta(10, "c", "d"));
  write_manifest({dup});
  ExpectCorruption({kManifest, "file 10 listed twice"});
  VersionEdit dup_level = base;
  dup_level.AddFile(1, Meta(10, "a", "b"));
  dup_level.AddFile(1, Meta(10, "c", "d"));
  write_manifest({dup_level});
  ExpectCorruption({std::string(kManifest) + ": record at offset 0", "file 10 added to L1 twice"});
  VersionEdit once = base;
  once.AddFile(0, Meta(10, "a", "b"));
  VersionEdit again;
  again.AddFile(0, Meta(10, "a", "b"));
  write_manifest({once, again});
  ExpectCorruption({std::string(kManifest) + ": record at offset " +
                        std::to_string(log::kHeaderSize + Encode(once).size()),
                    "file 10 added to L0 twice"});
  // Deleted, then added again: a file moved within one edit is fine.
  VersionEdit moved;
  moved.DeleteFile(0, 10);
  moved.AddFile(1, Meta(10, "a", "b"));
  write_manifest({once, moved});
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->Recover().ok());
    EXPECT_EQ(Shape(*vs), "L1:10, ");
  }

  VersionEdit other = base;
  other.SetComparatorName("some.other.Comparator");
  write_manifest({other});
  Status s = NewSet()->Recover();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("some.other.Comparator"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(BytewiseComparator()->Name()), std::string::npos) << s.ToString();

  VersionEdit partial;
  partial.AddFile(0, Meta(10, "a", "b"));
  write_manifest({partial});  // no log number, next file or sequence anywhere
  EXPECT_TRUE(NewSet()->Recover().IsCorruption());
}

// Records that pass their checksum but do not decode as a VersionEdit (cut short inside a
// field, or holding a tag this version does not know) fail recovery, naming the MANIFEST and
// the record's offset.
TEST_F(VersionSetTest, UndecodableManifestRecordsAreCorruption) {
  const std::string base = Encode(BaseEdit());
  const std::string at_second = std::string(kManifest) + ": record at offset " +
                                std::to_string(log::kHeaderSize + base.size());
  VersionEdit add;
  add.AddFile(1, Meta(10, "a", "b"));
  const std::string full = Encode(add);
  for (size_t cut : {size_t{1}, size_t{3}, full.size() / 2, full.size() - 1}) {
    SCOPED_TRACE("edit cut to " + std::to_string(cut) + " bytes");
    WriteManifest({base, full.substr(0, cut)});
    ExpectCorruption({at_second, "VersionEdit"});
  }
  std::string unknown = full;
  PutVarint32(&unknown, 99);
  PutVarint64(&unknown, 7);
  WriteManifest({base, unknown});
  ExpectCorruption({at_second, "unknown tag 99"});
  WriteManifest({base + unknown});
  ExpectCorruption({std::string(kManifest) + ": record at offset 0", "unknown tag 99"});
}

// A MANIFEST cut inside its only record holds no state at all: not a torn tail to drop.
TEST_F(VersionSetTest, ManifestWithoutACompleteRecordIsCorruption) {
  VersionEdit base = BaseEdit();
  base.AddFile(1, Meta(10, "a", "b"));
  WriteManifest({Encode(base)});
  const std::string good = fs_.FileContents(kManifest);
  for (size_t cut : {size_t{0}, size_t{3}, size_t{log::kHeaderSize}, good.size() - 1}) {
    SCOPED_TRACE("MANIFEST cut to " + std::to_string(cut) + " bytes");
    fs_.SetFileContents(kManifest, good.substr(0, cut));
    ExpectCorruption({kManifest, "no complete state"});
  }
}

// ---- Merging and level iterators under the iterator contract ----

class IteratorsTest : public VersionSetTest {
 protected:
  // Writes a table with the given entries; returns its metadata.
  std::shared_ptr<FileMetaData> WriteTable(uint64_t number, const test::Entries& entries) {
    std::unique_ptr<WritableFile> f;
    EXPECT_TRUE(fs_.NewWritableFile(TableFileName("/db", number), FileOptions(), &f).ok());
    TableBuilderOptions o;
    o.comparator = &icmp_;
    o.block_size = 128;
    TableBuilder b(o, f.get());
    for (const auto& [k, v] : entries) EXPECT_TRUE(b.Add(k, v).ok());
    EXPECT_TRUE(b.Finish().ok());
    EXPECT_TRUE(f->Close().ok());
    auto meta = std::make_shared<FileMetaData>();
    meta->number = number;
    meta->file_size = b.FileSize();
    meta->smallest = entries.front().first;
    meta->largest = entries.back().first;
    return meta;
  }
};

TEST_F(IteratorsTest, LevelAndMergingIteratorsKeepTheContract) {
  Random rnd(9);
  // Level: 6 files of disjoint key ranges. Merge: the level plus 3 overlapping "L0" tables.
  test::Entries all;
  FileList level;
  for (int f = 0; f < 6; f++) {
    test::Entries entries;
    for (int i = 0; i < 30; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%03d-%02d", f, i);
      entries.emplace_back(IKey(key, 100 + f * 30 + i), "L" + std::to_string(f));
    }
    level.push_back(WriteTable(10 + f, entries));
    all.insert(all.end(), entries.begin(), entries.end());
  }
  auto targets_for = [&](const test::Entries& entries) {
    std::vector<std::string> t = {IKey("", kMaxSequenceNumber), IKey("zzz", 0)};
    for (const auto& [k, v] : entries) {
      t.push_back(k);
      t.push_back(IKey(ExtractUserKey(k).ToString() + "x", kMaxSequenceNumber));
    }
    return t;
  };
  {
    auto it = NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, level);
    auto targets = targets_for(all);
    test::CheckIteratorContract(it.get(), all, &icmp_, 1, &targets);
  }
  std::vector<std::unique_ptr<InternalIterator>> children;
  children.push_back(NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, level));
  FileList l0;
  for (int t = 0; t < 3; t++) {
    test::Entries entries;
    for (int i = 0; i < 50; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%03d-%02d", static_cast<int>(rnd.Uniform(6)),
                    static_cast<int>(rnd.Uniform(40)));
      entries.emplace_back(IKey(key, 1000 + t * 100 + i), "T" + std::to_string(t));
    }
    std::sort(entries.begin(), entries.end(),
              [&](const auto& a, const auto& b) { return icmp_.Compare(a.first, b.first) < 0; });
    auto meta = WriteTable(20 + t, entries);
    children.push_back(table_cache_->NewIterator(ReadOptions(), *meta));
    l0.push_back(meta);
    all.insert(all.end(), entries.begin(), entries.end());
  }
  std::sort(all.begin(), all.end(),
            [&](const auto& a, const auto& b) { return icmp_.Compare(a.first, b.first) < 0; });
  auto merged = NewMergingIterator(&icmp_, std::move(children));
  auto targets = targets_for(all);
  test::CheckIteratorContract(merged.get(), all, &icmp_, 2, &targets);

  // The same merge reading each seek's blocks together (the file system's reader).
  children.clear();
  children.push_back(NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, level));
  for (const auto& meta : l0) {
    children.push_back(table_cache_->NewIterator(ReadOptions(), *meta));
  }
  MergingIteratorOptions together;
  together.async_fs = std::shared_ptr<FileSystem>(&fs_, [](FileSystem*) {});
  SetPerfLevel(PerfLevel::kEnableCount);
  get_perf_context()->Reset();
  auto batched = NewMergingIterator(&icmp_, std::move(children), together);
  test::CheckIteratorContract(batched.get(), all, &icmp_, 3, &targets);
  EXPECT_GT(get_perf_context()->iter_async_batch_count, 0u);
  EXPECT_GE(get_perf_context()->iter_async_read_count,
            2 * get_perf_context()->iter_async_batch_count);
  SetPerfLevel(PerfLevel::kDisable);
}

// An iterator over sorted internal keys that fails (invalid, Corruption) on reaching the
// entry at fail_at, in either direction.
class FailingIterator final : public InternalIterator {
 public:
  FailingIterator(const InternalKeyComparator* icmp, std::vector<std::string> keys, size_t fail_at)
      : icmp_(icmp), keys_(std::move(keys)), fail_at_(fail_at) {}
  bool Valid() const override { return pos_ < keys_.size() && status_.ok(); }
  void SeekToFirst() override { Go(0); }
  void SeekToLast() override { Go(keys_.size() - 1); }
  void Seek(const Slice& target) override {
    size_t i = 0;
    while (i < keys_.size() && icmp_->Compare(keys_[i], target) < 0) i++;
    Go(i);
  }
  void SeekForPrev(const Slice& target) override {
    size_t i = keys_.size();
    while (i > 0 && icmp_->Compare(keys_[i - 1], target) > 0) i--;
    Go(i - 1);  // wraps to "invalid" before the first
  }
  void Next() override { Go(pos_ + 1); }
  void Prev() override { Go(pos_ - 1); }
  Slice key() const override { return keys_[pos_]; }
  Slice value() const override { return "v"; }
  Status status() const override { return status_; }

 private:
  void Go(size_t i) {
    pos_ = i;
    status_ = pos_ == fail_at_ ? Status::Corruption("unreadable block") : Status::OK();
  }
  const InternalKeyComparator* const icmp_;
  const std::vector<std::string> keys_;
  const size_t fail_at_;
  size_t pos_ = 0;
  Status status_;
};

// A child that fails ends the merged iteration (with its status) in both directions: the
// others must not go on without it, or older versions it hides would show.
TEST_F(IteratorsTest, MergingIteratorStopsAtAChildError) {
  auto merged = [&] {
    std::vector<std::unique_ptr<InternalIterator>> children;
    children.push_back(std::make_unique<FailingIterator>(
        &icmp_, std::vector<std::string>{IKey("a", 1), IKey("c", 1), IKey("e", 1)}, 99));
    children.push_back(std::make_unique<FailingIterator>(
        &icmp_, std::vector<std::string>{IKey("b", 2), IKey("d", 2), IKey("f", 2)}, 1));
    return NewMergingIterator(&icmp_, std::move(children));
  };
  auto user_keys = [](InternalIterator* it, bool forward) {
    std::string seen;
    for (; it->Valid(); forward ? it->Next() : it->Prev())
      seen += ExtractUserKey(it->key()).ToString();
    return seen;
  };
  auto it = merged();
  it->SeekToFirst();
  EXPECT_EQ(user_keys(it.get(), true), "ab");  // "d" fails: not "abce"
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  it->SeekToLast();
  EXPECT_EQ(user_keys(it.get(), false), "f");  // stepping back, "d" fails: not "fedcba"
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  it->Seek(IKey("c", kMaxSequenceNumber));  // the failing child lands on "d" at once
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  it->Seek(IKey("e", kMaxSequenceNumber));  // past the failure: a fresh start, no error
  EXPECT_EQ(user_keys(it.get(), true), "ef");
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  // Changing direction re-seeks the other children around the current key: from "e"
  // backwards, the failing child is sought to "d".
  it->Seek(IKey("e", kMaxSequenceNumber));
  ASSERT_TRUE(it->Valid());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
}

// Bytewise order under another name: a family created with it refuses the bytewise comparator.
class RenamedBytewise final : public Comparator {
 public:
  const char* Name() const override { return "test.RenamedBytewise"; }
  int Compare(const Slice& a, const Slice& b) const override {
    return BytewiseComparator()->Compare(a, b);
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

class VersionSetFamilyTest : public VersionSetTest {
 protected:
  FamilyConfig Config(const InternalKeyComparator* icmp) {
    return FamilyConfig{&options_, icmp, table_cache_.get()};
  }
  // Resolves every family with icmp, recording the names asked for.
  VersionSet::FamilyResolver Resolver(const InternalKeyComparator* icmp) {
    return [this, icmp](const FamilyInfo& f, FamilyConfig* config) {
      resolved_.push_back(f.name);
      *config = Config(icmp);
      return Status::OK();
    };
  }
  static std::string Shape(const VersionSet& vs, uint32_t id) {
    std::string out;
    auto v = vs.current(id);
    for (int level = 0; level < v->num_levels(); level++) {
      for (const auto& f : v->files(level)) out += fmt::format("L{}:{} ", level, f->number);
    }
    return out;
  }
  std::vector<std::string> resolved_;
};

// Families are created, changed together in one record, dropped, and recovered; ids are never
// reused, also after a reopen; ListColumnFamilies reads the same records.
TEST_F(VersionSetFamilyTest, FamiliesAreRecordedAndRecovered) {
  uint32_t a = 0, b = 0;
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    ASSERT_TRUE(vs->CreateColumnFamily("a", Config(&icmp_), 1, &a).ok());
    ASSERT_TRUE(vs->CreateColumnFamily("b", Config(&icmp_), 1, &b).ok());
    EXPECT_EQ(a, 1u);
    EXPECT_EQ(b, 2u);
    VersionEdit e0, ea, eb;
    e0.AddFile(0, Meta(vs->NewFileNumber(), "a", "c", 1, 1));
    ea.SetColumnFamily(a);
    ea.AddFile(1, Meta(vs->NewFileNumber(), "d", "f", 2, 2));
    ea.SetLogNumber(vs->NewFileNumber());
    eb.SetColumnFamily(b);
    eb.AddFile(0, Meta(vs->NewFileNumber(), "a", "z", 3, 3));
    vs->SetLastSequence(3);
    ASSERT_TRUE(vs->LogAndApply({&e0, &ea, &eb}).ok());
    EXPECT_EQ(Shape(*vs, 0), "L0:3 ");
    EXPECT_EQ(Shape(*vs, a), "L1:4 ");
    EXPECT_EQ(Shape(*vs, b), "L0:6 ");
    EXPECT_EQ(vs->log_number(a), 5u);
    EXPECT_EQ(vs->log_number(), 0u);  // the default family still needs every WAL
    ASSERT_TRUE(vs->DropColumnFamily(b).ok());
    EXPECT_FALSE(vs->HasFamily(b));
    // An edit of the dropped family, or one that adds a family, is refused.
    VersionEdit late;
    late.SetColumnFamily(b);
    EXPECT_TRUE(vs->LogAndApply(&late).IsCorruption());
    VersionEdit add;
    add.SetColumnFamily(9);
    add.AddColumnFamily("x");
    EXPECT_TRUE(vs->LogAndApply(&add).IsCorruption());
  }
  std::vector<std::string> names;
  ASSERT_TRUE(VersionSet::ListColumnFamilies(&fs_, "/db", &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"default", "a"}));
  // Without a resolver, a non-default family cannot be opened.
  Status s = NewSet()->Recover();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("column family a is not opened"), std::string::npos);

  options_.max_manifest_file_size = 1;  // every later edit rolls the MANIFEST over
  for (int round = 0; round < 2; round++) {
    auto vs = NewSet();
    resolved_.clear();
    ASSERT_TRUE(vs->Recover(Resolver(&icmp_)).ok());
    EXPECT_EQ(resolved_, (std::vector<std::string>{"a"}));
    ASSERT_EQ(vs->Families().size(), 2u);
    EXPECT_EQ(vs->Families()[1].id, a);
    EXPECT_EQ(Shape(*vs, 0), "L0:3 ");
    EXPECT_EQ(Shape(*vs, a), "L1:4 ");
    EXPECT_EQ(vs->log_number(a), 5u);
    EXPECT_EQ(vs->last_sequence(), 3u);
    // The dropped family's id is not handed out again.
    uint32_t c = 0;
    ASSERT_TRUE(vs->CreateColumnFamily(fmt::format("c{}", round), Config(&icmp_), 5, &c).ok());
    EXPECT_EQ(c, 3u + round);
    ASSERT_TRUE(vs->DropColumnFamily(c).ok());
  }
}

// A MANIFEST of a DB that never had a family other than the default one holds no family
// fields: builds that predate families open it.
TEST_F(VersionSetFamilyTest, DefaultOnlyManifestHasNoFamilyFields) {
  auto vs = NewSet();
  ASSERT_TRUE(vs->CreateNew().ok());
  VersionEdit e;
  e.AddFile(0, Meta(vs->NewFileNumber(), "a", "b"));
  ASSERT_TRUE(vs->LogAndApply(&e).ok());
  std::unique_ptr<SequentialFile> file;
  const std::string name = ManifestFileName("/db", vs->manifest_file_number());
  ASSERT_TRUE(fs_.NewSequentialFile(name, FileOptions(), &file).ok());
  log::Reader reader(std::move(file), name);
  Slice record;
  std::string scratch;
  int records = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    VersionEdit d;
    ASSERT_TRUE(d.DecodeFrom(record).ok());
    EXPECT_EQ(d.column_family(), 0u);
    EXPECT_FALSE(d.max_column_family().has_value());
    records++;
  }
  EXPECT_EQ(records, 2);
}

// A family opened with another comparator than it was created with, a family the resolver
// refuses, and records that break the family rules.
TEST_F(VersionSetFamilyTest, FamilyMismatchesAndDamageAreNamed) {
  RenamedBytewise renamed;
  InternalKeyComparator renamed_icmp(&renamed);
  {
    auto vs = NewSet();
    ASSERT_TRUE(vs->CreateNew().ok());
    uint32_t id = 0;
    ASSERT_TRUE(vs->CreateColumnFamily("r", Config(&renamed_icmp), 1, &id).ok());
  }
  Status s = NewSet()->Recover(Resolver(&icmp_));
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("column family r was created with comparator test.RenamedBytewise"),
            std::string::npos)
      << s.ToString();
  s = NewSet()->Recover([](const FamilyInfo& f, FamilyConfig*) {
    return Status::InvalidArgument("refused " + f.name);
  });
  EXPECT_NE(s.ToString().find("refused r"), std::string::npos) << s.ToString();
  ASSERT_TRUE(NewSet()->Recover(Resolver(&renamed_icmp)).ok());

  VersionEdit base = BaseEdit();
  VersionEdit add;
  add.SetColumnFamily(4);
  add.AddColumnFamily("x");
  VersionEdit again = add;
  WriteManifest(
      {Encode(base), VersionEdit::EncodeRecord({add}), VersionEdit::EncodeRecord({again})});
  ExpectCorruption(
      {std::string(kManifest) + ": record at offset", "column family 4 created twice"});
  VersionEdit drop;
  drop.SetColumnFamily(4);
  drop.DropColumnFamily();
  VersionEdit after;
  after.SetColumnFamily(4);
  after.AddFile(0, Meta(10, "a", "b"));
  WriteManifest({Encode(base), VersionEdit::EncodeRecord({add}), VersionEdit::EncodeRecord({drop}),
                 VersionEdit::EncodeRecord({after})});
  ExpectCorruption({"an edit of column family 4, which is not live"});
  // Re-adding a dropped id is also "created twice".
  WriteManifest({Encode(base), VersionEdit::EncodeRecord({add}), VersionEdit::EncodeRecord({drop}),
                 VersionEdit::EncodeRecord({add})});
  ExpectCorruption({"column family 4 created twice"});
  // A record of a family that was never created.
  WriteManifest({Encode(base), VersionEdit::EncodeRecord({after})});
  ExpectCorruption({"an edit of column family 4, which is not live"});
  // One file number in two families.
  VersionEdit in_default = base;
  in_default.AddFile(0, Meta(10, "a", "b"));
  WriteManifest(
      {Encode(in_default), VersionEdit::EncodeRecord({add}), VersionEdit::EncodeRecord({after})});
  s = NewSet()->Recover(Resolver(&icmp_));
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("file 10 listed twice"), std::string::npos) << s.ToString();
  // A torn last record is dropped whole: neither the file nor the family it adds survives.
  VersionEdit file_with_add = in_default;
  file_with_add.SetNextFileNumber(100);
  WriteManifest({Encode(base), VersionEdit::EncodeRecord({file_with_add, add})});
  std::string contents;
  ASSERT_TRUE(ReadFileToString(&fs_, kManifest, &contents).ok());
  fs_.SetFileContents(kManifest, contents.substr(0, contents.size() - 3));
  auto vs = NewSet();
  ASSERT_TRUE(vs->Recover(Resolver(&icmp_)).ok());
  EXPECT_EQ(vs->Families().size(), 1u);
  EXPECT_EQ(VersionSetTest::Shape(*vs), "");
}

}  // namespace
}  // namespace shale
