// WindowPreparer: the windows a mapped file takes come zeroed, mapped and writable, what is
// written through them lands in the file, the windows handed back are unmapped, and a failure
// or a stop gives null rather than a window. Runs under TSan (the appending thread against the
// preparing one).
#include "src/env/window_preparer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "shale/file_system.h"
#include "tests/db_test_util.h"

namespace shale {
namespace {

constexpr uint64_t kWindow = 64 << 10;

class ConcurrentWindowPreparerTest : public ::testing::Test {
 protected:
  ~ConcurrentWindowPreparerTest() override {
    if (fd_ >= 0) ::close(fd_);
  }
  int Open(int flags) {
    fd_ = ::open(path_.c_str(), flags | O_CREAT | O_CLOEXEC, 0644);
    EXPECT_GE(fd_, 0);
    return fd_;
  }
  std::string Contents() {
    std::string data;
    EXPECT_TRUE(ReadFileToString(FileSystem::Default().get(), path_, &data).ok());
    return data;
  }

  test::ScratchDir dir_;
  std::string path_ = dir_.path() + "/f";
  int fd_ = -1;
};

// Window after window, as a mapped file takes them: each comes all zeros over a file that
// reaches its end, the bytes written into it are the file's, and a window never asked for is
// null.
TEST_F(ConcurrentWindowPreparerTest, TakenWindowsAreZeroedMappedAndTheFiles) {
  const int fd = Open(O_RDWR);
  WindowPreparer preparer(fd, kWindow);
  EXPECT_EQ(preparer.Take(kWindow), nullptr);  // not asked for
  std::string expected(kWindow, '\0');         // the first window: the file's own (here: zeros)
  preparer.Prepare(kWindow);
  char* previous = nullptr;
  for (uint64_t base = kWindow; base < 40 * kWindow; base += kWindow) {
    char* map = preparer.Take(base);
    ASSERT_NE(map, nullptr) << base;
    if (previous != nullptr) preparer.Retire(previous);
    preparer.Prepare(base + kWindow);  // while this one is written
    struct stat st;
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_GE(static_cast<uint64_t>(st.st_size), base + kWindow);
    EXPECT_EQ(std::string(map, kWindow), std::string(kWindow, '\0')) << base;
    const std::string data(kWindow - 100, static_cast<char>('a' + base / kWindow % 26));
    std::memcpy(map + 100, data.data(), data.size());
    expected += std::string(100, '\0') + data;
    previous = map;
  }
  EXPECT_EQ(preparer.Take(80 * kWindow), nullptr);
  preparer.Retire(previous);
  // The window asked for last is prepared or not, as the stop finds it.
  const uint64_t zeros_end = preparer.Stop();
  EXPECT_TRUE(zeros_end == 40 * kWindow || zeros_end == 41 * kWindow) << zeros_end;
  EXPECT_EQ(preparer.Stop(), zeros_end);  // idempotent
  const std::string seen = Contents();
  ASSERT_GE(seen.size(), expected.size());
  EXPECT_EQ(seen.compare(0, expected.size(), expected), 0);
  EXPECT_EQ(seen.find_first_not_of('\0', expected.size()), std::string::npos);
}

// A window whose zeros cannot be written (here: a descriptor open for reading only) is null,
// and so is every later one: the file then appends with write(2).
TEST_F(ConcurrentWindowPreparerTest, AFailedWindowIsNullAndEndsThePreparing) {
  ASSERT_GE(Open(O_RDWR), 0);
  ::close(fd_);
  const int fd = Open(O_RDONLY);
  WindowPreparer preparer(fd, kWindow);
  preparer.Prepare(kWindow);
  EXPECT_EQ(preparer.Take(kWindow), nullptr);
  preparer.Prepare(2 * kWindow);  // ignored once failed
  EXPECT_EQ(preparer.Take(2 * kWindow), nullptr);
  preparer.Stop();
  EXPECT_EQ(Contents(), "");
}

// Stopped with a window asked for and one handed back: Take gives null, a window handed back
// after the stop is unmapped at once, and the thread unmaps what it held.
TEST_F(ConcurrentWindowPreparerTest, StopEndsTheWorkInProgress) {
  const int fd = Open(O_RDWR);
  WindowPreparer preparer(fd, kWindow);
  preparer.Prepare(kWindow);
  char* map = preparer.Take(kWindow);
  ASSERT_NE(map, nullptr);
  preparer.Prepare(2 * kWindow);
  preparer.Retire(map);
  const uint64_t zeros_end = preparer.Stop();
  EXPECT_TRUE(zeros_end == 2 * kWindow || zeros_end == 3 * kWindow) << zeros_end;
  EXPECT_EQ(preparer.Take(2 * kWindow), nullptr);
  preparer.Prepare(3 * kWindow);  // ignored
  EXPECT_EQ(preparer.Take(3 * kWindow), nullptr);
  void* own = ::mmap(nullptr, kWindow, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(own, MAP_FAILED);
  preparer.Retire(static_cast<char*>(own));  // unmapped here: the thread has ended
}

// Through the file system: a mapped file of several windows takes them from its preparer (the
// appends past the middle of the first window on), and what it holds after Close is exactly
// what was appended, whether it stopped mapping at its second sync or closed mapped.
TEST_F(ConcurrentWindowPreparerTest, AMappedFileOfManyWindowsHoldsItsAppends) {
  for (const bool synced_twice : {false, true}) {
    SCOPED_TRACE(synced_twice);
    std::shared_ptr<FileSystem> fs = FileSystem::Default();
    FileOptions options;
    options.mmap_appends = true;
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(fs->NewWritableFile(path_, options, &f).ok());
    std::string expected;
    for (int i = 0; expected.size() < (6u << 20); i++) {
      std::string data(1 + (i * 7919) % 5000, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(f->Append(data).ok());
      expected += data;
      if (synced_twice && (i == 900 || i == 1500)) {
        ASSERT_TRUE(f->Sync().ok());
      }
    }
    ASSERT_TRUE(f->Close().ok());
    EXPECT_EQ(Contents(), expected);
  }
}

}  // namespace
}  // namespace shale
