// The fault-injecting file system itself: durability model, crash modes, and fault injection.
#include "tests/fault_injection_fs.h"

#include <gtest/gtest.h>

namespace shale::test {
namespace {

class FaultInjectionFsTest : public ::testing::Test {
 protected:
  FaultInjectionFsTest() { EXPECT_TRUE(fs_.CreateDirIfMissing("/d").ok()); }

  std::unique_ptr<WritableFile> Create(const std::string& path, const std::string& data, bool sync,
                                       bool sync_dir) {
    std::unique_ptr<WritableFile> f;
    EXPECT_TRUE(fs_.NewWritableFile(path, FileOptions(), &f).ok());
    EXPECT_TRUE(f->Append(data).ok());
    if (sync) {
      EXPECT_TRUE(f->Sync().ok());
    }
    if (sync_dir) {
      std::unique_ptr<Directory> d;
      EXPECT_TRUE(fs_.NewDirectory("/d", &d).ok());
      EXPECT_TRUE(d->Fsync().ok());
    }
    return f;
  }
  std::string Read(const std::string& path) {
    std::string data;
    Status s = ReadFileToString(&fs_, path, &data);
    return s.ok() ? data : "ERROR:" + s.ToString();
  }

  FaultInjectionFileSystem fs_{42};
};

TEST_F(FaultInjectionFsTest, UnsyncedDataIsDroppedAtCrash) {
  auto f = Create("/d/a", "hello", /*sync=*/false, /*sync_dir=*/true);
  EXPECT_EQ(Read("/d/a"), "hello");
  fs_.Crash(CrashMode::kDropUnsynced);
  EXPECT_EQ(Read("/d/a"), "");
}

TEST_F(FaultInjectionFsTest, SyncedDataSurvivesAndLaterAppendsDoNot) {
  auto f = Create("/d/a", "durable", /*sync=*/true, /*sync_dir=*/true);
  ASSERT_TRUE(f->Append("+volatile").ok());
  EXPECT_EQ(fs_.FileDurableSize("/d/a"), 7u);
  EXPECT_EQ(fs_.FileSize("/d/a"), 16u);
  fs_.Crash(CrashMode::kDropUnsynced);
  EXPECT_EQ(Read("/d/a"), "durable");
  // The old handle is dead.
  EXPECT_TRUE(f->Append("x").IsIOError());
  EXPECT_TRUE(f->Sync().IsIOError());
}

TEST_F(FaultInjectionFsTest, TornPrefixKeepsAPrefix) {
  std::string volatile_part(10000, 'v');
  for (size_t i = 0; i < volatile_part.size(); i++)
    volatile_part[i] = static_cast<char>('a' + i % 26);
  bool saw_partial = false;
  for (int round = 0; round < 20; round++) {
    std::string path = "/d/t" + std::to_string(round);
    auto f = Create(path, "base", true, true);
    ASSERT_TRUE(f->Append(volatile_part).ok());
    fs_.Crash(CrashMode::kTornPrefix);
    std::string got = Read(path);
    ASSERT_GE(got.size(), 4u);
    ASSERT_EQ(got, ("base" + volatile_part).substr(0, got.size()));
    if (got.size() > 4 && got.size() < 4 + volatile_part.size()) saw_partial = true;
  }
  EXPECT_TRUE(saw_partial);
}

TEST_F(FaultInjectionFsTest, RandomBlocksZeroWhole4KiBHoles) {
  const std::string original(64 * 1024, 'x');
  bool saw_hole = false;
  for (int round = 0; round < 10; round++) {
    std::string path = "/d/r" + std::to_string(round);
    auto f = Create(path, std::string(100, 's'), true, true);
    ASSERT_TRUE(f->Append(original).ok());
    fs_.Crash(CrashMode::kRandomBlocks);
    std::string got = Read(path);
    ASSERT_GE(got.size(), 100u);
    EXPECT_EQ(got.substr(0, 100), std::string(100, 's'));  // synced bytes intact
    // Every 4 KiB block after the synced prefix is all original or all zero.
    for (size_t b = 0; b < got.size(); b += 4096) {
      size_t from = std::max<size_t>(b, 100);
      size_t to = std::min(b + 4096, got.size());
      if (from >= to) continue;
      std::string block = got.substr(from, to - from);
      bool zero = block == std::string(block.size(), '\0');
      bool orig = block == std::string(block.size(), 'x');
      ASSERT_TRUE(zero || orig) << "block at " << b;
      if (zero) saw_hole = true;
    }
  }
  EXPECT_TRUE(saw_hole);
}

TEST_F(FaultInjectionFsTest, DirectoryRevertUndoesUnsyncedEntries) {
  auto durable = Create("/d/durable", "1", true, /*sync_dir=*/true);
  auto fresh = Create("/d/fresh", "2", true, /*sync_dir=*/false);
  ASSERT_TRUE(fs_.RenameFile("/d/durable", "/d/renamed").ok());
  fs_.Crash(CrashMode::kDropUnsynced, /*revert_directories=*/true);
  EXPECT_FALSE(fs_.Exists("/d/fresh"));  // created, never made durable in its directory
  EXPECT_FALSE(fs_.Exists("/d/renamed"));
  EXPECT_EQ(Read("/d/durable"), "1");  // the rename was reverted
}

TEST_F(FaultInjectionFsTest, DirectorySyncMakesRenamesAndDeletesDurable) {
  auto a = Create("/d/a", "A", true, true);
  auto b = Create("/d/b", "B", true, true);
  ASSERT_TRUE(fs_.RenameFile("/d/a", "/d/c").ok());
  ASSERT_TRUE(fs_.DeleteFile("/d/b").ok());
  std::unique_ptr<Directory> d;
  ASSERT_TRUE(fs_.NewDirectory("/d", &d).ok());
  ASSERT_TRUE(d->Fsync().ok());
  fs_.Crash(CrashMode::kDropUnsynced, true);
  EXPECT_EQ(Read("/d/c"), "A");
  EXPECT_FALSE(fs_.Exists("/d/a"));
  EXPECT_FALSE(fs_.Exists("/d/b"));
}

TEST_F(FaultInjectionFsTest, FailExactlyOperationK) {
  auto f = Create("/d/a", "", false, false);
  const uint64_t base = fs_.operation_count();
  fs_.FailOperationNumber(base + 3);
  EXPECT_TRUE(f->Append("1").ok());
  EXPECT_TRUE(f->Append("2").ok());
  EXPECT_TRUE(f->Append("3").IsIOError());
  EXPECT_TRUE(f->Append("4").ok());
  EXPECT_EQ(fs_.InjectedCount(FaultKind::kIOError), 1u);
  EXPECT_EQ(Read("/d/a"), "124");
}

TEST_F(FaultInjectionFsTest, OneInNRateAndPattern) {
  auto log = Create("/d/x.log", "", false, false);
  auto other = Create("/d/x.sst", "", false, false);
  fs_.SetErrorRate(FaultOp::kWrite, 4, ".log");
  int failures = 0;
  for (int i = 0; i < 4000; i++) {
    if (!log->Append("z").ok()) failures++;
    ASSERT_TRUE(other->Append("z").ok());
  }
  EXPECT_GT(failures, 800);
  EXPECT_LT(failures, 1200);
  EXPECT_EQ(fs_.InjectedCount(FaultKind::kIOError), static_cast<uint64_t>(failures));
  fs_.DisableAllFaults();
  EXPECT_TRUE(log->Append("z").ok());
}

TEST_F(FaultInjectionFsTest, SpaceQuotaWritesAPrefixThenFails) {
  fs_.SetSpaceQuota(10);
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_.NewWritableFile("/d/a", FileOptions(), &f).ok());
  ASSERT_TRUE(f->Append("123456").ok());
  Status s = f->Append("789abc");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_NE(s.ToString().find("No space"), std::string::npos);
  EXPECT_EQ(Read("/d/a"), "123456789a");
  EXPECT_EQ(fs_.InjectedCount(FaultKind::kNoSpace), 1u);
  fs_.SetSpaceQuota(UINT64_MAX);
  EXPECT_TRUE(f->Append("!").ok());
}

TEST_F(FaultInjectionFsTest, FailedSyncMakesNothingDurable) {
  auto f = Create("/d/a", "data", false, true);
  fs_.SetErrorRate(FaultOp::kSync, 1);
  EXPECT_TRUE(f->Sync().IsIOError());
  fs_.DisableAllFaults();
  fs_.Crash(CrashMode::kDropUnsynced);
  EXPECT_EQ(Read("/d/a"), "");
}

TEST_F(FaultInjectionFsTest, ReadBitFlipsAndShortReads) {
  auto f = Create("/d/a", std::string(1000, '\0'), true, true);
  fs_.SetReadBitFlipRate(1);
  std::unique_ptr<RandomAccessFile> r;
  ASSERT_TRUE(fs_.NewRandomAccessFile("/d/a", FileOptions(), &r).ok());
  char scratch[1000];
  Slice got;
  ASSERT_TRUE(r->Read(0, 1000, &got, scratch).ok());
  int bits = 0;
  for (size_t i = 0; i < got.size(); i++) bits += __builtin_popcount(static_cast<uint8_t>(got[i]));
  EXPECT_EQ(bits, 1);
  EXPECT_EQ(fs_.FileContents("/d/a"), std::string(1000, '\0'));  // stored bytes untouched
  fs_.DisableAllFaults();
  fs_.SetShortReadRate(1);
  std::unique_ptr<SequentialFile> seq;
  ASSERT_TRUE(fs_.NewSequentialFile("/d/a", FileOptions(), &seq).ok());
  ASSERT_TRUE(seq->Read(1000, &got, scratch).ok());
  EXPECT_LT(got.size(), 1000u);
  EXPECT_GT(got.size(), 0u);
  EXPECT_EQ(fs_.InjectedCount(FaultKind::kShortRead), 1u);
}

TEST_F(FaultInjectionFsTest, WriteBitFlipAndCorruptFile) {
  fs_.SetWriteBitFlipRate(1);
  auto f = Create("/d/a", std::string(100, '\0'), true, true);
  std::string stored = fs_.FileContents("/d/a");
  EXPECT_NE(stored, std::string(100, '\0'));
  EXPECT_EQ(fs_.InjectedCount(FaultKind::kWriteBitFlip), 1u);
  fs_.DisableAllFaults();
  auto g = Create("/d/b", "AAAA", true, true);
  ASSERT_TRUE(fs_.CorruptFile("/d/b", 2, 0));
  EXPECT_EQ(Read("/d/b"), "AA@A");
  EXPECT_FALSE(fs_.CorruptFile("/d/b", 99, 0));
}

TEST_F(FaultInjectionFsTest, LocksAreExclusiveAndReleasedAtCrash) {
  std::unique_ptr<FileLock> l1;
  std::unique_ptr<FileLock> l2;
  ASSERT_TRUE(fs_.LockFile("/d/LOCK", &l1).ok());
  EXPECT_TRUE(fs_.LockFile("/d/LOCK", &l2).IsIOError());
  l1.reset();
  ASSERT_TRUE(fs_.LockFile("/d/LOCK", &l2).ok());
  fs_.Crash(CrashMode::kDropUnsynced);
  std::unique_ptr<FileLock> l3;
  EXPECT_TRUE(fs_.LockFile("/d/LOCK", &l3).ok());
  l2.reset();  // a stale lock's release must not free the new holder's lock
  std::unique_ptr<FileLock> l4;
  EXPECT_TRUE(fs_.LockFile("/d/LOCK", &l4).IsIOError());
}

TEST_F(FaultInjectionFsTest, ChildrenAndMetadata) {
  auto a = Create("/d/a", "1", true, true);
  ASSERT_TRUE(fs_.CreateDirIfMissing("/d/sub").ok());
  std::vector<std::string> names;
  ASSERT_TRUE(fs_.GetChildren("/d", &names).ok());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "sub"}));
  uint64_t size = 0;
  ASSERT_TRUE(fs_.GetFileSize("/d/a", &size).ok());
  EXPECT_EQ(size, 1u);
  EXPECT_TRUE(fs_.FileExists("/d/nope").IsNotFound());
  EXPECT_TRUE(fs_.GetChildren("/nope", &names).IsNotFound());
  std::unique_ptr<WritableFile> f;
  EXPECT_TRUE(fs_.NewWritableFile("/nope/x", FileOptions(), &f).IsNotFound());
}

// A file with zeros written ahead (FileOptions::zero_fill_ahead) overwrites durable bytes: the
// overwrites are volatile until the next sync, and each crash mode treats them so.
class ZeroFilledFileTest : public FaultInjectionFsTest {
 protected:
  static constexpr size_t kSynced = 200;  // "a" * 100 + "b" * 100, then 8 KiB of zeros
  static constexpr size_t kZeros = 8192;
  // Creates path with two syncs (the second writes the zeros), then appends more.
  std::unique_ptr<WritableFile> CreateZeroFilled(const std::string& path, const std::string& more) {
    FileOptions options;
    options.zero_fill_ahead = kZeros;
    std::unique_ptr<WritableFile> f;
    EXPECT_TRUE(fs_.NewWritableFile(path, options, &f).ok());
    EXPECT_TRUE(f->Append(std::string(100, 'a')).ok());
    EXPECT_TRUE(f->Sync().ok());
    EXPECT_EQ(fs_.FileSize(path), 100u);  // synced once: no zeros yet
    EXPECT_TRUE(f->Append(std::string(100, 'b')).ok());
    EXPECT_TRUE(f->Sync().ok());
    EXPECT_EQ(fs_.FileDurableSize(path), kSynced + kZeros);
    EXPECT_TRUE(f->Append(more).ok());
    std::unique_ptr<Directory> d;
    EXPECT_TRUE(fs_.NewDirectory("/d", &d).ok());
    EXPECT_TRUE(d->Fsync().ok());
    return f;
  }
  static std::string Base() { return std::string(100, 'a') + std::string(100, 'b'); }
};

TEST_F(ZeroFilledFileTest, OverwritesAreDroppedAtCrashUntilSynced) {
  auto f = CreateZeroFilled("/d/z", std::string(1500, 'c'));
  EXPECT_EQ(f->GetFileSize(), kSynced + 1500);
  EXPECT_EQ(fs_.FileSize("/d/z"), kSynced + kZeros);  // the data went over the zeros
  EXPECT_EQ(Read("/d/z").substr(kSynced, 1500), std::string(1500, 'c'));
  fs_.Crash(CrashMode::kDropUnsynced);
  EXPECT_EQ(Read("/d/z"), Base() + std::string(kZeros, '\0'));

  // Synced overwrites survive.
  auto g = CreateZeroFilled("/d/y", std::string(1500, 'c'));
  ASSERT_TRUE(g->Sync().ok());
  fs_.Crash(CrashMode::kDropUnsynced);
  EXPECT_EQ(Read("/d/y"), Base() + std::string(1500, 'c') + std::string(kZeros - 1500, '\0'));
}

TEST_F(ZeroFilledFileTest, TornPrefixCutsOverwritesAtSectorBoundaries) {
  const size_t n = 3000;
  bool saw_partial = false;
  for (int round = 0; round < 30; round++) {
    const std::string path = "/d/t" + std::to_string(round);
    auto f = CreateZeroFilled(path, std::string(n, 'c'));
    fs_.Crash(CrashMode::kTornPrefix);
    const std::string got = Read(path);
    ASSERT_EQ(got.size(), kSynced + kZeros);
    ASSERT_EQ(got.substr(0, kSynced), Base());
    const size_t end = got.find_first_not_of('c', kSynced);
    ASSERT_EQ(got.find_first_not_of('\0', end), std::string::npos) << round;
    ASSERT_TRUE(end == kSynced || end == kSynced + n || end % 512 == 0) << end;
    if (end > kSynced && end < kSynced + n) saw_partial = true;
  }
  EXPECT_TRUE(saw_partial);
}

TEST_F(ZeroFilledFileTest, RandomBlocksKeepOrRevertWhole4KiBBlocks) {
  const size_t n = 7000;
  bool saw_hole = false;
  bool saw_kept = false;
  for (int round = 0; round < 10; round++) {
    const std::string path = "/d/r" + std::to_string(round);
    auto f = CreateZeroFilled(path, std::string(n, 'c'));
    fs_.Crash(CrashMode::kRandomBlocks);
    const std::string got = Read(path);
    ASSERT_EQ(got.size(), kSynced + kZeros);
    ASSERT_EQ(got.substr(0, kSynced), Base());
    for (size_t b = 0; b < kSynced + n; b += 4096) {
      const size_t from = std::max(b, kSynced);
      const size_t to = std::min(b + 4096, kSynced + n);
      const std::string block = got.substr(from, to - from);
      const bool zero = block == std::string(block.size(), '\0');
      const bool kept = block == std::string(block.size(), 'c');
      ASSERT_TRUE(zero || kept) << "block at " << b;
      saw_hole |= zero;
      saw_kept |= kept;
    }
  }
  EXPECT_TRUE(saw_hole);
  EXPECT_TRUE(saw_kept);
}

// Zero filling is best effort: with too little space it fills what fits, reports nothing
// (no fault is counted), stops filling, and the data keeps going.
TEST_F(ZeroFilledFileTest, FillingStopsQuietlyWhenSpaceRunsOut) {
  fs_.SetSpaceQuota(kSynced + 1000);
  FileOptions options;
  options.zero_fill_ahead = kZeros;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_.NewWritableFile("/d/q", options, &f).ok());
  ASSERT_TRUE(f->Append(std::string(100, 'a')).ok());
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->Append(std::string(100, 'b')).ok());
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_EQ(fs_.FileSize("/d/q"), kSynced + 1000);  // zeros up to the quota
  EXPECT_EQ(fs_.TotalInjected(), 0u);
  fs_.SetSpaceQuota(UINT64_MAX);
  ASSERT_TRUE(f->Append(std::string(2000, 'c')).ok());
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_EQ(fs_.FileSize("/d/q"), kSynced + 2000);  // no more zeros ahead
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(Read("/d/q"), Base() + std::string(2000, 'c'));
}

TEST_F(ZeroFilledFileTest, CloseCutsTheZerosOff) {
  auto f = CreateZeroFilled("/d/c", "tail");
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(Read("/d/c"), Base() + "tail");
  fs_.Crash(CrashMode::kDropUnsynced);
  // The unsynced overwrite is gone; the cut is modelled as durable at once.
  EXPECT_EQ(Read("/d/c"), Base() + std::string(4, '\0'));
}

}  // namespace
}  // namespace shale::test
