// The POSIX file system's writable files: plain appends, reopening, and zero-filled space
// ahead of the data (FileOptions::zero_fill_ahead), checked against the real file on disk.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "shale/file_system.h"
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

}  // namespace
}  // namespace shale
