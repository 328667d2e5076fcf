// WindowPreparer: the windows a mapped file takes come mapped and writable with their zeros
// written as far as the thread got, what is written through them lands in the file, the
// windows handed back are unmapped, and a window taken early, one never asked for, a failure
// and a stop each give what the thread has, never more. Runs under TSan (the appending thread
// against the preparing one).
#include "src/env/window_preparer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "shale/file_system.h"
#include "tests/db_test_util.h"

namespace shale {
namespace {

constexpr uint64_t kWindow = 64 << 10;
constexpr uint64_t kStep = 16 << 10;

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
  // Takes the window at base once the thread has it whole (polling: Take stops the thread).
  WindowPreparer::Window TakeWhole(WindowPreparer* preparer, uint64_t base) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      struct stat st;
      if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) >= base + kWindow) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // its last populate
    return preparer->Take(base);
  }

  test::ScratchDir dir_;
  std::string path_ = dir_.path() + "/f";
  int fd_ = -1;
};

// Window after window, as a mapped file takes them: each comes mapped, its zeros written as
// far as the thread got (whole, when the thread had the time), the bytes written into it are
// the file's, and a window never asked for comes empty.
TEST_F(ConcurrentWindowPreparerTest, TakenWindowsAreMappedZeroedAndTheFiles) {
  const int fd = Open(O_RDWR);
  WindowPreparer preparer(fd, kWindow, kStep);
  const WindowPreparer::Window none = preparer.Take(kWindow);  // not asked for
  EXPECT_EQ(none.map, nullptr);
  EXPECT_EQ(none.zeros_end, kWindow);
  std::string expected(kWindow, '\0');  // the first window: the file's own (here: zeros)
  preparer.Prepare(kWindow);
  char* previous = nullptr;
  for (uint64_t base = kWindow; base < 20 * kWindow; base += kWindow) {
    const WindowPreparer::Window w = TakeWhole(&preparer, base);
    ASSERT_NE(w.map, nullptr) << base;
    EXPECT_EQ(w.zeros_end, base + kWindow) << base;
    if (previous != nullptr) preparer.Retire(previous);
    preparer.Prepare(base + kWindow);  // while this one is written
    EXPECT_EQ(std::string(w.map, kWindow), std::string(kWindow, '\0')) << base;
    const std::string data(kWindow - 100, static_cast<char>('a' + base / kWindow % 26));
    std::memcpy(w.map + 100, data.data(), data.size());
    expected += std::string(100, '\0') + data;
    previous = w.map;
  }
  preparer.Retire(previous);
  const uint64_t zeros_end = preparer.Stop();  // the last window asked for: some of it, or all
  EXPECT_GE(zeros_end, 20 * kWindow);
  EXPECT_LE(zeros_end, 21 * kWindow);
  EXPECT_EQ(preparer.Stop(), zeros_end);  // idempotent
  const std::string seen = Contents();
  ASSERT_GE(seen.size(), expected.size());
  EXPECT_EQ(seen.compare(0, expected.size(), expected), 0);
  EXPECT_EQ(seen.find_first_not_of('\0', expected.size()), std::string::npos);
}

// A window taken at once comes with whatever the thread had done (nothing, its mapping, some
// steps), never zeros past what it wrote: the file writes the rest of them itself.
TEST_F(ConcurrentWindowPreparerTest, AWindowTakenEarlyHasOnlyWhatTheThreadWrote) {
  const int fd = Open(O_RDWR);
  WindowPreparer preparer(fd, kWindow, kStep);
  for (uint64_t base = kWindow; base < 200 * kWindow; base += kWindow) {
    preparer.Prepare(base);
    const WindowPreparer::Window w = preparer.Take(base);
    ASSERT_GE(w.zeros_end, base);
    ASSERT_LE(w.zeros_end, base + kWindow);
    ASSERT_EQ(w.zeros_end % kStep, 0u);
    struct stat st;
    ASSERT_EQ(::fstat(fd, &st), 0);
    if (w.zeros_end > base) {
      ASSERT_GE(static_cast<uint64_t>(st.st_size), w.zeros_end);
      ASSERT_NE(w.map, nullptr);  // it maps before it writes
    }
    if (w.map != nullptr) {
      // The written part is zeros and writable through the mapping.
      ASSERT_EQ(std::string(w.map, w.zeros_end - base), std::string(w.zeros_end - base, '\0'));
      std::memset(w.map, 'x', w.zeros_end - base);
      preparer.Retire(w.map);
    }
    // Nothing is written in a window once taken.
    std::this_thread::sleep_for(std::chrono::microseconds(base % (7 * kWindow) == 0 ? 500 : 0));
    ASSERT_EQ(::fstat(fd, &st), 0);
    ASSERT_LE(static_cast<uint64_t>(st.st_size), std::max<uint64_t>(w.zeros_end, base));
  }
  preparer.Stop();
}

// A window whose zeros cannot be written (here: a descriptor open for reading only) comes
// without them, and the thread does no more work: the file then finds the zeros short itself.
TEST_F(ConcurrentWindowPreparerTest, AFailureEndsThePreparing) {
  ASSERT_GE(Open(O_RDWR), 0);
  ::close(fd_);
  const int fd = Open(O_RDONLY);
  WindowPreparer preparer(fd, kWindow, kStep);
  preparer.Prepare(kWindow);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // (the same, had it not run yet)
  const WindowPreparer::Window w = preparer.Take(kWindow);
  EXPECT_EQ(w.map, nullptr);  // a read-only descriptor cannot be mapped shared for writing
  EXPECT_EQ(w.zeros_end, kWindow);
  preparer.Prepare(2 * kWindow);  // ignored once failed
  EXPECT_EQ(preparer.Take(2 * kWindow).zeros_end, 2 * kWindow);
  EXPECT_EQ(preparer.Stop(), 0u);
  EXPECT_EQ(Contents(), "");
}

// Stopped with a window asked for and one handed back: Take then gives nothing, a window
// handed back after the stop is unmapped at once, and the thread unmaps what it held.
TEST_F(ConcurrentWindowPreparerTest, StopEndsTheWorkInProgress) {
  const int fd = Open(O_RDWR);
  WindowPreparer preparer(fd, kWindow, kStep);
  preparer.Prepare(kWindow);
  const WindowPreparer::Window w = TakeWhole(&preparer, kWindow);
  ASSERT_NE(w.map, nullptr);
  preparer.Prepare(2 * kWindow);
  preparer.Retire(w.map);
  const uint64_t zeros_end = preparer.Stop();
  EXPECT_GE(zeros_end, 2 * kWindow);
  EXPECT_LE(zeros_end, 3 * kWindow);
  const WindowPreparer::Window after = preparer.Take(2 * kWindow);
  EXPECT_EQ(after.map, nullptr);
  EXPECT_EQ(after.zeros_end, 2 * kWindow);
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
