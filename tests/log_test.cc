// The log (WAL and MANIFEST) format: round trips across block boundaries, and every kind of
// damage docs/reliability.md lists classified correctly — never a wrong record.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "src/util/coding.h"
#include "src/util/crc32c.h"
#include "src/util/random.h"
#include "tests/fault_injection_fs.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace shale::log {
namespace {

using End = Reader::End;

class LogTest : public ::testing::Test {
 protected:
  LogTest() { EXPECT_TRUE(fs_.CreateDirIfMissing("/d").ok()); }

  void Write(const std::vector<std::string>& records) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(fs_.NewWritableFile(kPath, FileOptions(), &f).ok());
    Writer w(std::move(f));
    for (const auto& r : records) ASSERT_TRUE(w.AddRecord(r).ok());
    ASSERT_TRUE(w.Sync().ok());
    ASSERT_TRUE(w.Close().ok());
  }
  // Reads every record; returns them and sets *end / *status.
  std::vector<std::string> ReadAll(End* end, Status* status = nullptr) {
    std::unique_ptr<SequentialFile> f;
    EXPECT_TRUE(fs_.NewSequentialFile(kPath, FileOptions(), &f).ok());
    Reader r(std::move(f), kPath);
    std::vector<std::string> out;
    Slice rec;
    std::string scratch;
    while (r.ReadRecord(&rec, &scratch)) out.push_back(rec.ToString());
    *end = r.end();
    if (status != nullptr) *status = r.status();
    return out;
  }
  std::string Contents() { return fs_.FileContents(kPath); }
  // Flips each bit of good[byte] in turn: the reader must return a prefix of records, then
  // report Corruption (a single flipped bit is never mistaken for a torn or zeroed tail).
  void ExpectEachFlipIsCorruption(const std::string& good, size_t byte,
                                  const std::vector<std::string>& records) {
    for (int bit = 0; bit < 8; bit++) {
      std::string bad = good;
      bad[byte] ^= static_cast<char>(1 << bit);
      SetContents(bad);
      End end;
      std::vector<std::string> got = ReadAll(&end);
      ASSERT_LE(got.size(), records.size()) << byte << ":" << bit;
      for (size_t i = 0; i < got.size(); i++) {
        ASSERT_EQ(got[i], records[i]) << byte << ":" << bit;
      }
      ASSERT_EQ(end, End::kCorruption) << "flip at " << byte << ":" << bit;
    }
  }
  void SetContents(const std::string& s) { fs_.SetFileContents(kPath, s); }

  static std::string BigString(const std::string& partial, size_t n) {
    std::string s;
    while (s.size() < n) s += partial;
    s.resize(n);
    return s;
  }

  static constexpr char kPath[] = "/d/000001.log";
  test::FaultInjectionFileSystem fs_{7};
};

TEST_F(LogTest, EmptyLog) {
  Write({});
  End end;
  EXPECT_TRUE(ReadAll(&end).empty());
  EXPECT_EQ(end, End::kClean);
}

TEST_F(LogTest, RoundTripAcrossBlocks) {
  Random rnd(301);
  std::vector<std::string> records;
  for (int i = 0; i < 300; i++) {
    const size_t n = i % 50 == 0 ? 100000 + rnd.Uniform(3 * kBlockSize) : rnd.Skewed(14);
    records.push_back(BigString(std::to_string(i) + ".", n));
  }
  records.push_back("");
  Write(records);
  End end;
  Status s;
  EXPECT_EQ(ReadAll(&end, &s), records);
  EXPECT_EQ(end, End::kClean);
  EXPECT_TRUE(s.ok());
}

// Records that leave exactly 0..7 bytes in a block: the trailer cases.
TEST_F(LogTest, BlockTrailerSizes) {
  for (int leftover = 0; leftover <= kHeaderSize; leftover++) {
    std::vector<std::string> records = {
        std::string(static_cast<size_t>(kBlockSize - 2 * kHeaderSize - leftover), 'a'), "b", "",
        "c"};
    Write(records);
    End end;
    EXPECT_EQ(ReadAll(&end), records) << leftover;
    EXPECT_EQ(end, End::kClean);
  }
}

TEST_F(LogTest, EveryTruncationIsATornTailWithAPrefix) {
  std::vector<std::string> records;
  for (int i = 0; i < 8; i++) records.push_back(BigString("r" + std::to_string(i), 9000));
  Write(records);
  const std::string full = Contents();
  for (size_t cut = 0; cut < full.size(); cut += 97) {
    SetContents(full.substr(0, cut));
    End end;
    std::vector<std::string> got = ReadAll(&end);
    ASSERT_LE(got.size(), records.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], records[i]) << cut;
    EXPECT_TRUE(end == End::kTruncatedTail || end == End::kClean || end == End::kZeroedTail)
        << cut << " " << static_cast<int>(end);
  }
}

TEST_F(LogTest, ZeroedTailIsRecognized) {
  Write({"one", "two"});
  SetContents(Contents() + std::string(5000, '\0'));
  End end;
  EXPECT_EQ(ReadAll(&end), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(end, End::kZeroedTail);
}

// A live log with zeros written ahead (as the DB's WAL keeps them) reads as its records and
// then a zeroed tail; closing it cuts the zeros off.
TEST_F(LogTest, ZeroFilledLogReadsItsRecordsThenAZeroedTail) {
  FileOptions options;
  options.zero_fill_ahead = 64 << 10;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_.NewWritableFile(kPath, options, &f).ok());
  Writer w(std::move(f));
  std::vector<std::string> records;
  for (int i = 0; i < 30; i++) {
    records.push_back(BigString("w" + std::to_string(i), 1000 + 997 * i));
    ASSERT_TRUE(w.AddRecord(records.back()).ok());
    ASSERT_TRUE(w.Sync().ok());
    if (i >= 1) {
      ASSERT_GT(Contents().size(), w.FileSize()) << i;
    }
    End end;
    ASSERT_EQ(ReadAll(&end), records) << i;
    ASSERT_EQ(end, i == 0 ? End::kClean : End::kZeroedTail) << i;
  }
  ASSERT_TRUE(w.Close().ok());
  End end;
  EXPECT_EQ(ReadAll(&end), records);
  EXPECT_EQ(end, End::kClean);
}

// A crash while a record was being written over zeros keeps its first sectors: the record is
// a torn tail (dropped by tolerate-corrupted-tail), wherever the cut falls, header included.
TEST_F(LogTest, RecordTornAtASectorOverZerosIsATornTail) {
  // "one" ends at offset 510, so the second record's header straddles the 512 boundary.
  const std::string first(510 - kHeaderSize, 'o');
  const std::string second = BigString("second", 5000);
  Write({first, second});
  const std::string good = Contents() + std::string(8192, '\0');
  int torn = 0;
  for (size_t cut = 512; cut < 510 + kHeaderSize + second.size(); cut += 512) {
    std::string c = good;
    std::fill(c.begin() + static_cast<std::ptrdiff_t>(cut), c.end(), '\0');
    SetContents(c);
    End end;
    Status s;
    EXPECT_EQ(ReadAll(&end, &s), std::vector<std::string>{first}) << cut;
    EXPECT_EQ(end, End::kTruncatedTail) << cut << " " << s.ToString();
    torn++;
  }
  EXPECT_EQ(torn, 10);
  // The zero-filled space may end before the record would have: a header cut at 512 (its
  // type byte still zero), the file ending soon after.
  std::string c = good.substr(0, 612);
  std::fill(c.begin() + 512, c.end(), '\0');
  SetContents(c);
  End end;
  EXPECT_EQ(ReadAll(&end), std::vector<std::string>{first});
  EXPECT_EQ(end, End::kTruncatedTail);
}

// Damage in the last record of a zero-filled log is still Corruption: its bytes run to its end,
// so it cannot be a write cut at a sector boundary.
TEST_F(LogTest, BitFlipsInAZeroFilledLogAreCorruption) {
  // The last payload ends in zero bytes, as a Put of an empty value does (its length, 0).
  const std::vector<std::string> records = {"alpha", BigString("beta", 3000),
                                            std::string("gamma") + std::string(3, '\0')};
  Write(records);
  const std::string good = Contents() + std::string(4096, '\0');
  int flipped = 0;
  for (size_t byte = 0; byte < good.size(); byte += byte < 3100 ? 1 : 61) {
    ASSERT_NO_FATAL_FAILURE(ExpectEachFlipIsCorruption(good, byte, records));
    flipped += 8;
  }
  std::printf("figure: zero-filled log: %d bits flipped, every one reported as Corruption\n",
              flipped);
}

// A process killed while a mapped append copied a record (FileOptions::mmap_appends) leaves its
// checksum zero, its length and type in place, and any part of its payload: a torn tail, whatever
// landed, for a single-fragment record and for the last fragment of a long one. The same shape
// before another record is Corruption.
TEST_F(LogTest, MappedAppendCutBeforeItsChecksumIsATornTail) {
  const std::string first = BigString("first", 500);
  for (const size_t size : {size_t{5000}, size_t{40000}}) {
    SCOPED_TRACE(size);
    const std::string second = BigString("second", size);
    Write({first, second});
    const std::string good = Contents() + std::string(8192, '\0');
    // The fragment that was being copied: the second record's only or last one.
    const size_t at = size < 30000 ? kHeaderSize + first.size() : kBlockSize;
    const size_t end = Contents().size();
    ASSERT_EQ(static_cast<uint8_t>(good[at + 6]), size < 30000 ? kFullType : kLastType);
    Random rnd(static_cast<uint32_t>(size));
    int cuts = 0;
    for (int shape = 0; shape < 40; shape++) {
      std::string c = good;
      std::fill(c.begin() + static_cast<std::ptrdiff_t>(at), c.begin() + at + 4, '\0');
      // What landed of the payload: nothing, a prefix, a suffix, or 32-byte pieces at random.
      for (size_t i = at + 8; i < end; i += 32) {
        const bool landed = shape == 0   ? false
                            : shape == 1 ? i < at + 8 + 64
                            : shape == 2 ? i + 64 >= end
                                         : rnd.OneIn(2);
        if (!landed) {
          std::fill(c.begin() + static_cast<std::ptrdiff_t>(i),
                    c.begin() + static_cast<std::ptrdiff_t>(std::min(i + 32, end)), '\0');
        }
      }
      SetContents(c);
      End got_end;
      Status s;
      ASSERT_EQ(ReadAll(&got_end, &s), std::vector<std::string>{first}) << shape;
      ASSERT_EQ(got_end, End::kTruncatedTail) << shape << " " << s.ToString();
      cuts++;
      // Followed by a record, the same damage is Corruption.
      std::string more = c.substr(0, end);
      more += good.substr(0, kHeaderSize + first.size());  // a valid record after it
      more += std::string(4096, '\0');
      SetContents(more);
      ReadAll(&got_end);
      ASSERT_EQ(got_end, End::kCorruption) << shape;
    }
    EXPECT_EQ(cuts, 40);
  }
}

// A record that begins exactly 7 bytes before a block's end starts with a header alone (an
// empty kFirst fragment). A kill inside its copy leaves that header's checksum zero; inside the
// next fragment's, that one's: both are torn tails.
TEST_F(LogTest, MappedAppendCutInAHeaderAloneIsATornTail) {
  const std::string first(kBlockSize - 2 * kHeaderSize, 'f');  // ends 7 bytes before the end
  const std::string second = BigString("second", 100);
  Write({first, second});
  const std::string good = Contents() + std::string(8192, '\0');
  const size_t alone = kBlockSize - kHeaderSize;
  ASSERT_EQ(static_cast<uint8_t>(good[alone + 6]), kFirstType);
  ASSERT_EQ(good[alone + 4] | good[alone + 5], 0);  // no payload
  ASSERT_EQ(static_cast<uint8_t>(good[kBlockSize + 6]), kLastType);
  for (const size_t cut_at : {alone, size_t{kBlockSize}}) {
    SCOPED_TRACE(cut_at);
    std::string c = good;
    std::fill(c.begin() + static_cast<std::ptrdiff_t>(cut_at),
              c.begin() + static_cast<std::ptrdiff_t>(cut_at + 4), '\0');
    // Nothing after the fragment being copied landed (the last fragment's payload: half of it).
    const size_t lost_from = cut_at == alone ? kBlockSize : kBlockSize + kHeaderSize + 50;
    std::fill(c.begin() + static_cast<std::ptrdiff_t>(lost_from), c.end(), '\0');
    SetContents(c);
    End end;
    Status s;
    EXPECT_EQ(ReadAll(&end, &s), std::vector<std::string>{first});
    EXPECT_EQ(end, End::kTruncatedTail) << s.ToString();
  }
}

TEST_F(LogTest, ZeroesFollowedByDataAreCorruption) {
  Write({"one", std::string(100, 'x'), "three"});
  std::string c = Contents();
  // Zero the middle record entirely.
  const size_t start = kHeaderSize + 3;
  for (size_t i = start; i < start + kHeaderSize + 100; i++) c[i] = '\0';
  SetContents(c);
  End end;
  Status s;
  EXPECT_EQ(ReadAll(&end, &s), (std::vector<std::string>{"one"}));
  EXPECT_EQ(end, End::kCorruption);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.ToString().find("offset"), std::string::npos) << s.ToString();
}

TEST_F(LogTest, BadTypeAndBadLengthAreCorruption) {
  Write({"one", "two", "three"});
  const std::string c = Contents();
  {
    std::string bad = c;
    bad[kHeaderSize + 3 + 6] = 9;  // type of the second record
    SetContents(bad);
    End end;
    EXPECT_EQ(ReadAll(&end).size(), 1u);
    EXPECT_EQ(end, End::kCorruption);
  }
  {
    std::string bad = c;
    bad[kHeaderSize + 3 + 4] = 100;  // length of the second record, with a record after it
    SetContents(bad);
    End end;
    EXPECT_EQ(ReadAll(&end).size(), 1u);
    EXPECT_EQ(end, End::kCorruption);
  }
}

// A torn write cannot leave a whole record behind a wrong length: the last record with a
// larger length than its bytes, all of which are present, is damage, not a torn tail.
TEST_F(LogTest, DamagedLengthOfTheLastRecordIsCorruption) {
  Write({"one", "two", "three"});
  std::string bad = Contents();
  const size_t last = 2 * kHeaderSize + 3 + 3;
  bad[last + 4] = static_cast<char>(bad[last + 4] | 0x40);
  SetContents(bad);
  End end;
  Status s;
  EXPECT_EQ(ReadAll(&end, &s).size(), 2u);
  EXPECT_EQ(end, End::kCorruption);
  EXPECT_NE(s.ToString().find("offset " + std::to_string(last)), std::string::npos) << s.ToString();
  // The same record really cut short is a torn tail.
  Write({"one", "two", "three"});
  SetContents(Contents().substr(0, Contents().size() - 2));
  EXPECT_EQ(ReadAll(&end).size(), 2u);
  EXPECT_EQ(end, End::kTruncatedTail);
}

// The bytes after the last record of a block are zeroes; anything else there is damage.
TEST_F(LogTest, NonZeroBlockTrailerIsCorruption) {
  const size_t first = static_cast<size_t>(kBlockSize - 2 * kHeaderSize - 3);
  Write({std::string(first, 'a'), "b", "c"});
  std::string bad = Contents();
  const size_t trailer = kHeaderSize + first + kHeaderSize + 1;
  ASSERT_LT(trailer, static_cast<size_t>(kBlockSize));
  ASSERT_EQ(bad[trailer], '\0');
  bad[trailer] = 1;
  SetContents(bad);
  End end;
  Status s;
  EXPECT_EQ(ReadAll(&end, &s).size(), 2u);
  EXPECT_EQ(end, End::kCorruption);
  EXPECT_NE(s.ToString().find("trailer"), std::string::npos) << s.ToString();
}

TEST_F(LogTest, FragmentOrderViolationsAreCorruption) {
  // A kMiddle fragment with no kFirst before it, written with a valid checksum.
  std::string rec;
  const std::string payload = "orphan";
  char header[kHeaderSize];
  const char type = static_cast<char>(kMiddleType);
  std::string typed = std::string(1, type) + payload;
  EncodeFixed32(header, crc32c::Mask(crc32c::Value(typed.data(), typed.size())));
  header[4] = static_cast<char>(payload.size());
  header[5] = 0;
  header[6] = type;
  SetContents(std::string(header, kHeaderSize) + payload);
  End end;
  EXPECT_TRUE(ReadAll(&end).empty());
  EXPECT_EQ(end, End::kCorruption);
}

// Flip every bit of a small log in turn: the reader returns a prefix of the true records and
// then stops; it never returns a damaged or invented record.
TEST_F(LogTest, ExhaustiveBitFlipsNeverReturnWrongRecords) {
  // The first record leaves a 4-byte trailer in block 0; the last one is fragmented.
  std::vector<std::string> records = {std::string(kBlockSize - kHeaderSize - 4, 'z'),
                                      "alpha",
                                      std::string(300, 'b'),
                                      "",
                                      "gamma",
                                      BigString("d", 40000)};
  Write(records);
  const std::string good = Contents();
  constexpr size_t kBlock = kBlockSize;
  int stopped = 0;
  for (size_t byte = 0; byte < good.size();
       byte += byte < 400 || (byte + 400 > kBlock && byte < kBlock + 400) ? 1 : 251) {
    ASSERT_NO_FATAL_FAILURE(ExpectEachFlipIsCorruption(good, byte, records));
    stopped += 8;
  }
  std::printf("figure: log records: %d bits flipped, every one reported as Corruption\n", stopped);
  EXPECT_GT(stopped, 3000);
}

TEST_F(LogTest, ReadErrorIsIOError) {
  Write({"one", "two"});
  fs_.SetErrorRate(test::FaultOp::kRead, 1);
  End end;
  Status s;
  EXPECT_TRUE(ReadAll(&end, &s).empty());
  EXPECT_EQ(end, End::kIOError);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
}

TEST_F(LogTest, ShortReadsAreNotTheEnd) {
  std::vector<std::string> records;
  for (int i = 0; i < 50; i++) records.push_back(BigString(std::to_string(i), 3000));
  Write(records);
  fs_.SetShortReadRate(1);
  End end;
  EXPECT_EQ(ReadAll(&end), records);
  EXPECT_EQ(end, End::kClean);
}

TEST_F(LogTest, ReopenedWriterContinuesMidBlock) {
  Write({"one"});
  const uint64_t size = fs_.FileSize(kPath);
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_.ReopenWritableFile(kPath, FileOptions(), &f).ok());
  Writer w(std::move(f), size);
  ASSERT_TRUE(w.AddRecord(std::string(kBlockSize, 'z')).ok());
  ASSERT_TRUE(w.Close().ok());
  End end;
  EXPECT_EQ(ReadAll(&end), (std::vector<std::string>{"one", std::string(kBlockSize, 'z')}));
  EXPECT_EQ(end, End::kClean);
}

// ---- Each kind of bad input docs/reliability.md lists for the WAL: where reading stops, how it
// ends, and a Corruption status naming the file and the offset of the bad record ----

// A physical record of type holding payload, its checksum matching.
std::string PhysicalRecord(int type, const std::string& payload) {
  const std::string typed = std::string(1, static_cast<char>(type)) + payload;
  std::string record(kHeaderSize, '\0');
  EncodeFixed32(record.data(), crc32c::Mask(crc32c::Value(typed.data(), typed.size())));
  record[4] = static_cast<char>(payload.size() & 0xff);
  record[5] = static_cast<char>(payload.size() >> 8);
  record[6] = static_cast<char>(type);
  return record + payload;
}

class LogBadInputTest : public LogTest {
 protected:
  // Reading returns exactly the records before the damage, then ends as want, with a
  // Corruption status that names the file and offset.
  void ExpectDamage(const std::vector<std::string>& before, End want, uint64_t offset) {
    End end;
    Status s;
    EXPECT_EQ(ReadAll(&end, &s), before);
    EXPECT_EQ(end, want) << s.ToString();
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(std::string(kPath) + ": offset " + std::to_string(offset)),
              std::string::npos)
        << s.ToString();
  }
};

TEST_F(LogBadInputTest, FileEndingMidHeaderIsATruncatedTail) {
  Write({"one", "two"});
  const std::string good = Contents();
  const size_t second = kHeaderSize + 3;
  for (size_t cut = second + 1; cut < second + kHeaderSize; cut++) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    SetContents(good.substr(0, cut));
    ExpectDamage({"one"}, End::kTruncatedTail, second);
  }
}

TEST_F(LogBadInputTest, LengthPastTheBlockEndIsCorruption) {
  // The file goes on past the first block, so this is no torn tail.
  Write({"one", "two", BigString("x", 2 * kBlockSize)});
  std::string bad = Contents();
  const size_t second = kHeaderSize + 3;
  bad[second + 4] = '\xff';
  bad[second + 5] = '\x7f';  // 32767 bytes from offset 17: past the end of the block
  SetContents(bad);
  ExpectDamage({"one"}, End::kCorruption, second);
}

TEST_F(LogBadInputTest, ChecksumMismatchIsCorruption) {
  Write({"one", "two", "three"});
  const std::string good = Contents();
  const size_t second = kHeaderSize + 3;
  for (size_t at : {second, second + 3, second + kHeaderSize + 1}) {  // checksum, payload
    SCOPED_TRACE("flip at " + std::to_string(at));
    std::string bad = good;
    bad[at] ^= 0x04;
    SetContents(bad);
    ExpectDamage({"one"}, End::kCorruption, second);
  }
}

TEST_F(LogBadInputTest, UnknownRecordTypeIsCorruption) {
  // The checksum matches: only the type is wrong.
  for (int type : {0, 5, 6, 0x7f, 0xff}) {
    SCOPED_TRACE("type " + std::to_string(type));
    SetContents(PhysicalRecord(kFullType, "one") + PhysicalRecord(type, "two") +
                PhysicalRecord(kFullType, "three"));
    ExpectDamage({"one"}, End::kCorruption, kHeaderSize + 3);
  }
}

TEST_F(LogBadInputTest, MiddleOrLastWithoutFirstIsCorruption) {
  for (int type : {kMiddleType, kLastType}) {
    SCOPED_TRACE("type " + std::to_string(type));
    SetContents(PhysicalRecord(kFullType, "one") + PhysicalRecord(type, "orphan") +
                PhysicalRecord(kFullType, "three"));
    ExpectDamage({"one"}, End::kCorruption, kHeaderSize + 3);
    SetContents(PhysicalRecord(type, "orphan") + PhysicalRecord(kFullType, "three"));
    ExpectDamage({}, End::kCorruption, 0);
  }
}

TEST_F(LogBadInputTest, FirstFollowedByFullOrFirstIsCorruption) {
  const std::string one = PhysicalRecord(kFullType, "one");
  const std::string first = PhysicalRecord(kFirstType, "begin");
  // Reported at the record that breaks the fragment sequence.
  SetContents(one + first + PhysicalRecord(kFullType, "two") + PhysicalRecord(kFullType, "three"));
  ExpectDamage({"one"}, End::kCorruption, one.size() + first.size());
  SetContents(one + first + PhysicalRecord(kFirstType, "again") + PhysicalRecord(kLastType, "end"));
  ExpectDamage({"one"}, End::kCorruption, one.size() + first.size());
}

TEST_F(LogBadInputTest, ZeroedTailEndsAtTheLastRecord) {
  Write({"one", "two"});
  const std::string good = Contents();
  for (size_t zeroes : {size_t{3}, size_t{kHeaderSize}, size_t{5000}, size_t{2 * kBlockSize}}) {
    SCOPED_TRACE(std::to_string(zeroes) + " zero bytes");
    SetContents(good + std::string(zeroes, '\0'));
    ExpectDamage({"one", "two"}, End::kZeroedTail, good.size());
  }
}

}  // namespace
}  // namespace shale::log
