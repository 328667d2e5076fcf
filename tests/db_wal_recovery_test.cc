// WAL recovery on damaged logs, per recovery mode (docs/reliability.md, "WAL recovery modes"), by
// editing log files on disk between a Close and an Open.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "src/util/coding.h"
#include "src/util/crc32c.h"
#include "tests/db_test_util.h"
#include "wal/log_format.h"

namespace shale::test {
namespace {

namespace fs = std::filesystem;

class DBWalRecoveryTest : public DBTestBase {
 protected:
  std::vector<fs::path> Logs() {
    std::vector<fs::path> logs;
    for (const auto& e : fs::directory_iterator(dbname_)) {
      if (e.path().extension() == ".log") logs.push_back(e.path());
    }
    std::sort(logs.begin(), logs.end());
    return logs;
  }
  // The newest non-empty log.
  fs::path LastLog() {
    auto logs = Logs();
    for (auto it = logs.rbegin(); it != logs.rend(); ++it) {
      if (fs::file_size(*it) > 0) return *it;
    }
    ADD_FAILURE() << "no log with data";
    return {};
  }
  // Copies the DB's directory to dbname_ + suffix, as a kill would leave it if the DB is open.
  std::string CopyDbDir(const std::string& suffix) {
    const std::string copy = dbname_ + suffix;
    fs::remove_all(copy);
    fs::copy(dbname_, copy);
    return copy;
  }
  static std::string ReadAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void WriteAll(const fs::path& p, const std::string& data) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  // Where each physical record of a log starts (records that all fit in the first block).
  static std::vector<size_t> RecordOffsets(const std::string& data) {
    std::vector<size_t> offsets;
    for (size_t at = 0; at + log::kHeaderSize <= data.size();) {
      offsets.push_back(at);
      at += log::kHeaderSize + (static_cast<uint8_t>(data[at + 4]) |
                                (static_cast<size_t>(static_cast<uint8_t>(data[at + 5])) << 8));
    }
    return offsets;
  }
  // A whole (kFull) physical record holding payload, with a matching checksum.
  static std::string FullRecord(const std::string& payload) {
    const std::string typed = std::string(1, static_cast<char>(log::kFullType)) + payload;
    std::string record(log::kHeaderSize, '\0');
    EncodeFixed32(record.data(), crc32c::Mask(crc32c::Value(typed.data(), typed.size())));
    record[4] = static_cast<char>(payload.size() & 0xff);
    record[5] = static_cast<char>(payload.size() >> 8);
    record[6] = static_cast<char>(log::kFullType);
    return record + payload;
  }
  // Writes n keys k0..k(n-1), each in its own WAL record, and closes.
  void WriteKeysAndClose(int n) {
    Open();
    for (int i = 0; i < n; i++)
      ASSERT_TRUE(Put("k" + std::to_string(i), std::string(100, 'v')).ok());
    Close();
  }
  int CountKeys() {
    int n = 0;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    return n;
  }
  // Opens, expects exactly k0..k(keys-1), and closes.
  void ExpectPrefixAfterOpen(int keys) {
    Open();
    int n;
    EXPECT_TRUE(IsPrefix(&n));
    EXPECT_EQ(n, keys);
    Close();
  }
  // true if the keys present are exactly k0..k(n-1) for some n (a prefix of the history).
  bool IsPrefix(int* n) {
    *n = CountKeys();
    for (int i = 0; i < *n; i++) {
      if (Get("k" + std::to_string(i)) == "NOT_FOUND") return false;
    }
    return true;
  }
};

TEST_F(DBWalRecoveryTest, TornTailIsDroppedByDefault) {
  WriteKeysAndClose(50);
  fs::path log = LastLog();
  std::string data = ReadAll(log);
  WriteAll(log, data.substr(0, data.size() - 30));  // cut the last record
  Open();
  int n;
  EXPECT_TRUE(IsPrefix(&n));
  EXPECT_EQ(n, 49);
  // New writes after the dropped tail survive the next reopen.
  ASSERT_TRUE(Put("after", "x", /*sync=*/true).ok());
  Reopen();
  EXPECT_EQ(Get("after"), "x");
  EXPECT_EQ(CountKeys(), 50);
}

TEST_F(DBWalRecoveryTest, TornTailFailsAbsoluteConsistency) {
  WriteKeysAndClose(10);
  fs::path log = LastLog();
  std::string data = ReadAll(log);
  WriteAll(log, data.substr(0, data.size() - 3));
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(".log"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("offset"), std::string::npos) << s.ToString();
}

TEST_F(DBWalRecoveryTest, ZeroedTailIsDropped) {
  WriteKeysAndClose(20);
  fs::path log = LastLog();
  std::string data = ReadAll(log);
  WriteAll(log, data + std::string(5000, '\0'));
  Open();
  EXPECT_EQ(CountKeys(), 20);
}

TEST_F(DBWalRecoveryTest, MidLogCorruptionPerMode) {
  WriteKeysAndClose(50);
  fs::path log = LastLog();
  std::string data = ReadAll(log);
  data[data.size() / 2] ^= 0x10;  // a payload byte of a record in the middle
  WriteAll(log, data);

  options_.wal_recovery_mode = WALRecoveryMode::kTolerateCorruptedTailRecords;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(log.filename().string() + ": offset "), std::string::npos)
      << s.ToString();
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  EXPECT_TRUE(TryOpen().IsCorruption());

  options_.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
  Open();
  int n;
  EXPECT_TRUE(IsPrefix(&n));
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 50);
  // The surviving prefix was rewritten into a fresh log: the damage is gone for good, and a
  // strict reopen now succeeds with the same contents.
  ASSERT_TRUE(Put("later", "y").ok());
  Close();
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  Open();
  EXPECT_EQ(Get("later"), "y");
  EXPECT_EQ(CountKeys(), n + 1);
  for (int i = 0; i < n; i++) EXPECT_NE(Get("k" + std::to_string(i)), "NOT_FOUND");
}

TEST_F(DBWalRecoveryTest, PointInTimeDoesNotReplayLaterLogs) {
  // Three generations of logs; corrupt the first: nothing after the corruption may appear.
  // (The logs survive reopening only while recovered data stays in the memtable.)
  options_.avoid_flush_during_recovery = true;
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("b", "2").ok());
  Reopen();
  ASSERT_TRUE(Put("c", "3").ok());
  Reopen();
  ASSERT_TRUE(Put("d", "4").ok());
  Close();
  auto logs = Logs();
  ASSERT_GE(logs.size(), 3u);
  std::string first = ReadAll(logs[0]);
  ASSERT_GT(first.size(), 20u);
  first[first.size() - 5] ^= 1;  // damage the last record of the first log ("b")
  WriteAll(logs[0], first);
  options_.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
  Open();
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Get("c"), "NOT_FOUND");
  EXPECT_EQ(Get("d"), "NOT_FOUND");
  Reopen();
  EXPECT_EQ(Contents(), "a=1");
}

TEST_F(DBWalRecoveryTest, InterruptedRelogCopyIsDeduplicated) {
  // A crash while recovery copies records into a new log leaves the old logs and a partial
  // copy (same sequence numbers); the next recovery must apply each record once.
  WriteKeysAndClose(30);
  fs::path log = LastLog();
  std::string data = ReadAll(log);
  fs::path copy = log.parent_path() / "999999.log";
  WriteAll(copy, data.substr(0, data.size() / 2));  // the copy was cut short by the crash
  Open();
  EXPECT_EQ(CountKeys(), 30);
  ASSERT_TRUE(Put("k5", "new").ok());
  Reopen();
  EXPECT_EQ(Get("k5"), "new");
  EXPECT_EQ(CountKeys(), 30);
}

TEST_F(DBWalRecoveryTest, BadBatchInsideValidRecordIsCorruption) {
  // A record with a correct checksum whose batch claims more entries than it holds.
  WriteKeysAndClose(3);
  fs::path log = LastLog();
  std::string data = ReadAll(log);
  // First record: header(7) + batch(sequence 8, count 4). Bump the count and fix the crc by
  // rewriting the record with the writer's format.
  ASSERT_GT(data.size(), 7u + 12u);
  uint16_t len = static_cast<uint8_t>(data[4]) | (static_cast<uint8_t>(data[5]) << 8);
  std::string payload = data.substr(7, len);
  payload[8] = static_cast<char>(payload[8] + 1);
  // Re-frame with a valid checksum (masked crc32c of type + payload, as log_format.h says).
  std::string typed = data.substr(6, 1) + payload;
  char crc[4];
  EncodeFixed32(crc, crc32c::Mask(crc32c::Value(typed.data(), typed.size())));
  std::string rebuilt = std::string(crc, 4) + data.substr(4, 3) + payload;
  WriteAll(log, rebuilt + data.substr(7 + len));
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("count"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(log.filename().string() + ": offset 0"), std::string::npos)
      << s.ToString();
}

TEST_F(DBWalRecoveryTest, LogEndingMidHeaderIsATornTail) {
  WriteKeysAndClose(50);
  const fs::path wal = LastLog();
  const std::string data = ReadAll(wal);
  const size_t last = RecordOffsets(data).back();
  ASSERT_GT(last, 0u);
  WriteAll(wal, data.substr(0, last + 3));  // the file ends inside the last record's header
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal.filename().string() + ": offset " + std::to_string(last)),
            std::string::npos)
      << s.ToString();
  options_.wal_recovery_mode = WALRecoveryMode::kTolerateCorruptedTailRecords;
  Open();
  int n;
  EXPECT_TRUE(IsPrefix(&n));
  EXPECT_EQ(n, 49);
}

TEST_F(DBWalRecoveryTest, ZeroedTailFailsAbsoluteConsistency) {
  WriteKeysAndClose(20);
  const fs::path wal = LastLog();
  const std::string data = ReadAll(wal);
  WriteAll(wal, data + std::string(5000, '\0'));
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal.filename().string() + ": offset " + std::to_string(data.size())),
            std::string::npos)
      << s.ToString();
  options_.wal_recovery_mode = WALRecoveryMode::kTolerateCorruptedTailRecords;
  Open();
  EXPECT_EQ(CountKeys(), 20);
}

// A log synced more than once keeps zeros written ahead of its records. A process killed
// then leaves the log ending in them: every mode that allows zero-filled logs recovers every
// write, and a last record cut at a sector boundary (its tail still zeros) is a torn tail.
TEST_F(DBWalRecoveryTest, LiveZeroFilledLogRecoversAfterAKill) {
  Open();
  for (int i = 0; i < 30; i++) {
    ASSERT_TRUE(Put("k" + std::to_string(i), std::string(1000, 'v'), /*sync=*/i < 25).ok());
  }
  // Copy the directory as a kill would leave it (the DB stays open, its log unclosed).
  const fs::path log = LastLog();
  const std::string data = ReadAll(log);
  const size_t end = data.find_last_not_of('\0') + 1;
  EXPECT_GE(data.size(), end + (256 << 10)) << "zeros ahead of the records";
  const std::string copy = dbname_ + "_killed";
  const std::string torn_copy = dbname_ + "_torn";
  for (const std::string& dir : {copy, torn_copy}) {
    fs::remove_all(dir);
    fs::copy(dbname_, dir);
  }
  Close();
  const std::string original = dbname_;
  dbname_ = copy;
  for (WALRecoveryMode mode :
       {WALRecoveryMode::kTolerateCorruptedTailRecords, WALRecoveryMode::kPointInTimeRecovery}) {
    options_.wal_recovery_mode = mode;
    options_.avoid_flush_during_recovery = mode == WALRecoveryMode::kPointInTimeRecovery;
    Open();
    EXPECT_EQ(CountKeys(), 30);
    Close();
  }
  // The last record landed only up to a sector boundary inside it.
  dbname_ = torn_copy;
  const fs::path torn_log = fs::path(torn_copy) / log.filename();
  std::string torn = ReadAll(torn_log);
  const std::vector<size_t> offsets = RecordOffsets(torn.substr(0, end));
  ASSERT_FALSE(offsets.empty());
  const size_t cut = (offsets.back() / log::kSectorSize + 1) * log::kSectorSize;
  ASSERT_LT(cut, end);
  std::fill(torn.begin() + static_cast<std::ptrdiff_t>(cut), torn.end(), '\0');
  WriteAll(torn_log, torn);
  options_.wal_recovery_mode = WALRecoveryMode::kTolerateCorruptedTailRecords;
  ExpectPrefixAfterOpen(29);
  fs::remove_all(copy);
  fs::remove_all(torn_copy);
  dbname_ = original;
}

// The live WAL copies its records into a shared mapping of the file: a process killed during a
// copy leaves that record's checksum zero (src/env/mapped_appends.h), part of its payload, and
// zeros after it. Both zeros-tolerant modes drop it as a torn tail and keep every earlier write.
TEST_F(DBWalRecoveryTest, MappedRecordCutByAKillIsATornTail) {
  Open();
  for (int i = 0; i < 30; i++) {
    ASSERT_TRUE(Put("k" + std::to_string(i), std::string(1000, static_cast<char>('a' + i))).ok());
  }
  const fs::path log = LastLog();
  const std::string data = ReadAll(log);  // as a kill leaves it: the DB stays open
  const size_t end = data.find_last_not_of('\0') + 1;
  ASSERT_GT(data.size(), end) << "zeros ahead of the records";
  const std::vector<size_t> offsets = RecordOffsets(data.substr(0, end));
  ASSERT_EQ(offsets.size(), 30u);
  const std::string copy = CopyDbDir("_killed");
  Close();
  const std::string original = dbname_;
  dbname_ = copy;
  const fs::path killed_log = fs::path(copy) / log.filename();
  std::string cut = data;
  std::fill(cut.begin() + static_cast<std::ptrdiff_t>(offsets.back()),
            cut.begin() + static_cast<std::ptrdiff_t>(offsets.back() + 4), '\0');
  // Of the payload, only its first 200 and last 64 bytes landed.
  std::fill(cut.begin() + static_cast<std::ptrdiff_t>(offsets.back() + 200),
            cut.begin() + static_cast<std::ptrdiff_t>(end - 64), '\0');
  for (WALRecoveryMode mode :
       {WALRecoveryMode::kTolerateCorruptedTailRecords, WALRecoveryMode::kPointInTimeRecovery}) {
    SCOPED_TRACE(static_cast<int>(mode));
    WriteAll(killed_log, cut);
    options_.wal_recovery_mode = mode;
    ExpectPrefixAfterOpen(29);
    fs::remove_all(copy);
    fs::copy(original, copy);
  }
  fs::remove_all(copy);
  dbname_ = original;
}

// Absolute consistency refuses any zeroed tail, so its logs only append: a synced log is its
// records and nothing more, and a kill leaves nothing it would refuse.
TEST_F(DBWalRecoveryTest, AbsoluteConsistencyLogsHaveNoZerosAhead) {
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  Open();
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(Put("k" + std::to_string(i), std::string(1000, 'v'), /*sync=*/true).ok());
  }
  const std::string data = ReadAll(LastLog());
  EXPECT_EQ(data.find_last_not_of('\0') + 1, data.size());
  const std::string copy = CopyDbDir("_killed");
  Close();
  const std::string original = dbname_;
  dbname_ = copy;
  Open();
  EXPECT_EQ(CountKeys(), 20);
  Close();
  fs::remove_all(copy);
  dbname_ = original;
}

TEST_F(DBWalRecoveryTest, SequenceGoingBackIsCorruption) {
  // The third record re-framed (valid checksum) with the first record's sequence number.
  WriteKeysAndClose(3);
  const fs::path wal = LastLog();
  const std::string data = ReadAll(wal);
  const std::vector<size_t> offsets = RecordOffsets(data);
  ASSERT_EQ(offsets.size(), 3u);
  const uint64_t first_seq = DecodeFixed64(data.data() + log::kHeaderSize);
  std::string payload = data.substr(offsets[2] + log::kHeaderSize);
  ASSERT_GT(DecodeFixed64(payload.data()), first_seq);
  EncodeFixed64(payload.data(), first_seq);
  WriteAll(wal, data.substr(0, offsets[2]) + FullRecord(payload));

  Status s = TryOpen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(wal.filename().string() + ": offset " + std::to_string(offsets[2])),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("sequence number goes back"), std::string::npos) << s.ToString();
  options_.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  EXPECT_TRUE(TryOpen().IsCorruption());
  // Point in time keeps the records before it.
  options_.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
  Open();
  EXPECT_EQ(CountKeys(), 2);
  EXPECT_EQ(Get("k2"), "NOT_FOUND");
}

}  // namespace
}  // namespace shale::test
