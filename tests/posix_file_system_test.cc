// The POSIX file system's writable files: plain appends, reopening, zero-filled space ahead of
// the data (FileOptions::zero_fill_ahead) and appends through a shared mapping
// (FileOptions::mmap_appends), checked against the real file on disk.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "shale/file_system.h"
#include "src/env/mapped_appends.h"
#include "tests/db_test_util.h"

namespace shale {
namespace {

class PosixFileSystemTest : public ::testing::Test {
 protected:
  // The file's size as stored (stat), and its bytes as a reader sees them.
  uint64_t StoredSize() {
    struct stat st;
    EXPECT_EQ(::stat(path_.c_str(), &st), 0);
    return static_cast<uint64_t>(st.st_size);
  }
  std::string Contents() {
    std::string data;
    EXPECT_TRUE(ReadFileToString(fs_.get(), path_, &data).ok());
    return data;
  }

  test::ScratchDir dir_;
  std::shared_ptr<FileSystem> fs_ = FileSystem::Default();
  std::string path_ = dir_.path() + "/f";
};

TEST_F(PosixFileSystemTest, AppendsAndReopenContinueAtTheEnd) {
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_->NewWritableFile(path_, FileOptions(), &f).ok());
  ASSERT_TRUE(f->Append("hello ").ok());
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->Append(std::string(100000, 'x')).ok());  // larger than the buffer
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_EQ(f->GetFileSize(), 100006u);
  ASSERT_TRUE(f->Close().ok());
  ASSERT_TRUE(fs_->ReopenWritableFile(path_, FileOptions(), &f).ok());
  EXPECT_EQ(f->GetFileSize(), 100006u);
  ASSERT_TRUE(f->Append("!").ok());
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(Contents(), "hello " + std::string(100000, 'x') + "!");
}

// Starting writeback as the file grows (FileOptions::bytes_per_sync) leaves its bytes as
// written: appends small and large, across page and buffer boundaries, then a reopen.
TEST_F(PosixFileSystemTest, WritebackStartsLeaveTheBytesAsWritten) {
  for (uint64_t bytes_per_sync : {uint64_t{1}, uint64_t{4096}, uint64_t{100000}}) {
    SCOPED_TRACE(bytes_per_sync);
    FileOptions options;
    options.bytes_per_sync = bytes_per_sync;
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(fs_->NewWritableFile(path_, options, &f).ok());
    std::string expected;
    for (int i = 0; i < 300; i++) {
      const size_t n = i % 7 == 0 ? 70000 + i : 1 + (i * 977) % 5000;
      const std::string data(n, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(f->Append(data).ok());
      expected += data;
      if (i % 50 == 49) {
        ASSERT_TRUE(f->Sync().ok());
      }
    }
    ASSERT_TRUE(f->Close().ok());
    ASSERT_EQ(Contents(), expected);
    ASSERT_TRUE(fs_->ReopenWritableFile(path_, options, &f).ok());
    ASSERT_TRUE(f->Append("end").ok());
    ASSERT_TRUE(f->Close().ok());
    ASSERT_EQ(Contents(), expected + "end");
  }
}

TEST_F(PosixFileSystemTest, ZeroFillAheadKeepsZerosPastTheDataUntilClose) {
  FileOptions options;
  options.zero_fill_ahead = 64 << 10;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_->NewWritableFile(path_, options, &f).ok());
  std::string expected;
  auto append = [&](const std::string& data) {
    ASSERT_TRUE(f->Append(data).ok());
    expected += data;
  };
  append("first");
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_EQ(StoredSize(), 5u);  // a file synced once has no zeros
  append(std::string(1000, 'a'));
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_EQ(StoredSize(), 1005u + (64 << 10));
  // Later data overwrites the zeros; the stored size stays until the data nears its end.
  for (int i = 0; i < 40; i++) {
    append(std::string(1000 + i, static_cast<char>('b' + i % 20)));
    ASSERT_TRUE(f->Sync().ok());
    const uint64_t stored = StoredSize();
    EXPECT_GE(stored, f->GetFileSize() + (32 << 10)) << i;
    // What a reader sees after a crash now: the data, then only zeros.
    const std::string seen = Contents();
    ASSERT_EQ(seen.size(), stored);
    ASSERT_EQ(seen.substr(0, expected.size()), expected) << i;
    ASSERT_EQ(seen.find_first_not_of('\0', expected.size()), std::string::npos) << i;
  }
  // Data larger than the zeros ahead grows the file through them.
  append(std::string(200000, 'z'));
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_EQ(f->GetFileSize(), expected.size());
  ASSERT_TRUE(f->Close().ok());
  EXPECT_EQ(StoredSize(), expected.size());
  EXPECT_EQ(Contents(), expected);
}

// Mapped appends: small and large appends (whole, or joined from two parts), across steps of zeros
// and 1 MiB windows, read back while the file is open (data, then zeros: what a reader sees after a
// crash) and after Close (data only); a sync, then a second one, after which appends use write(2);
// zero_fill_ahead on top; a reopen appends with write(2).
TEST_F(PosixFileSystemTest, MappedAppendsKeepZerosPastTheDataUntilClose) {
  for (uint64_t zero_fill : {uint64_t{0}, uint64_t{1} << 20}) {
    SCOPED_TRACE(zero_fill);
    FileOptions options;
    options.mmap_appends = true;
    options.zero_fill_ahead = zero_fill;
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(fs_->NewWritableFile(path_, options, &f).ok());
    std::string expected;
    for (int i = 0; i < 400; i++) {
      // Mostly small appends; some cross a window whole (300 KiB) or straddle one.
      const size_t n = i % 97 == 5 ? 300000 : i % 31 == 0 ? 40000 + i : 1 + (i * 7919) % 3000;
      std::string data(n, static_cast<char>('a' + i % 26));
      data[0] = static_cast<char>(i);  // the first bytes are stored last: check they land
      if (i % 3 == 1) {  // as two parts (a log fragment's header and payload), split anywhere
        const size_t split = (i * 13) % (n + 1);
        ASSERT_TRUE(
            f->AppendJoined(Slice(data.data(), split), Slice(data.data() + split, n - split)).ok());
      } else {
        ASSERT_TRUE(f->Append(data).ok());
      }
      expected += data;
      ASSERT_TRUE(f->Flush().ok());
      // The second sync ends the mapping: later appends use write(2) (over zeros, if any).
      if (i == 100 || i == 300) {
        ASSERT_TRUE(f->Sync().ok());
      }
      if (i % 50 == 7 && i < 300) {
        ASSERT_EQ(f->GetFileSize(), expected.size());
        const std::string seen = Contents();
        ASSERT_GT(seen.size(), expected.size()) << i;  // zeros are kept ahead
        ASSERT_EQ(seen.compare(0, expected.size(), expected), 0) << i;
        ASSERT_EQ(seen.find_first_not_of('\0', expected.size()), std::string::npos) << i;
      }
    }
    if (zero_fill == 0) {
      // Past the second sync the file appends with write(2): no zeros are written ahead any
      // more. Those left from the mapped appends (up to two windows) are written over, and
      // the file grows only by what lands past them.
      const uint64_t before = StoredSize();
      ASSERT_GT(before, expected.size());
      for (int i = 0; i < 40; i++) {
        ASSERT_TRUE(f->Append(std::string(70000, 'w')).ok());
        expected += std::string(70000, 'w');
        ASSERT_TRUE(f->Flush().ok());
        EXPECT_EQ(StoredSize(), std::max<uint64_t>(before, expected.size())) << i;
      }
      EXPECT_GT(expected.size(), before);
    }
    ASSERT_GT(expected.size(), 2u << 20);  // several windows
    ASSERT_TRUE(f->Close().ok());
    EXPECT_EQ(StoredSize(), expected.size());
    ASSERT_EQ(Contents(), expected);
    EXPECT_FALSE(f->Append("x").ok());  // closed
    ASSERT_TRUE(fs_->ReopenWritableFile(path_, options, &f).ok());
    ASSERT_TRUE(f->Append("end").ok());
    ASSERT_TRUE(f->Close().ok());
    ASSERT_EQ(Contents(), expected + "end");
  }
}

// Appending with write(2), a joined append is never split between two writes: until Flush the
// file holds either all of it or none of it (a kill between two writes would leave a log
// fragment's header without its payload).
TEST_F(PosixFileSystemTest, AJoinedAppendGoesToTheFileWhole) {
  struct Case {
    size_t buffered, head, body;
  };
  // Buffer nearly full, then a joined append that overflows it (small, or larger than half of
  // the buffer); one that fits; one larger than the buffer.
  for (const Case& c :
       {Case{60000, 7, 10000}, Case{60000, 7, 40000}, Case{1000, 7, 2000}, Case{0, 7, 200000}}) {
    SCOPED_TRACE(std::to_string(c.buffered) + " " + std::to_string(c.body));
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(fs_->NewWritableFile(path_, FileOptions(), &f).ok());
    for (size_t i = 0; i < c.buffered; i += 1000) {  // small appends: they stay in the buffer
      ASSERT_TRUE(f->Append(std::string(1000, 'b')).ok());
    }
    const std::string head(c.head, 'h'), body(c.body, 'p');
    ASSERT_TRUE(f->AppendJoined(head, body).ok());
    const uint64_t stored = StoredSize();
    EXPECT_TRUE(stored <= c.buffered || stored == c.buffered + c.head + c.body) << stored;
    ASSERT_TRUE(f->Close().ok());
    EXPECT_EQ(Contents(), std::string(c.buffered, 'b') + head + body);
  }
}

// A joined append's copy holds the concatenation of its parts, wherever they split.
TEST(MappedAppendsTest, CopyFirstWordLastJoinsTheParts) {
  const std::string data = "0123456789abcdefghij";
  for (size_t n = 0; n <= data.size(); n++) {
    for (size_t split = 0; split <= n; split++) {
      std::string dst(n, '\0');
      MappedAppends::CopyFirstWordLast(dst.data(), Slice(data.data(), split),
                                       Slice(data.data() + split, n - split));
      ASSERT_EQ(dst, data.substr(0, n)) << n << " " << split;
    }
  }
}

// A file dropped without Close (as at a process crash, less the kill) holds its data, then the
// zeros ahead; a destructor still unmaps and cuts them off.
TEST_F(PosixFileSystemTest, MappedAppendsSurviveTheHandleAndTheDestructorCuts) {
  FileOptions options;
  options.mmap_appends = true;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(fs_->NewWritableFile(path_, options, &f).ok());
  ASSERT_TRUE(f->Append("header").ok());
  ASSERT_TRUE(f->Append(std::string(5000, 'p')).ok());
  // Another reader of the file sees every byte at once: they are in the page cache.
  std::string seen = Contents();
  ASSERT_GE(seen.size(), 5006u);
  EXPECT_EQ(seen.substr(0, 5006), "header" + std::string(5000, 'p'));
  f.reset();
  EXPECT_EQ(Contents(), "header" + std::string(5000, 'p'));
}

}  // namespace
}  // namespace shale
