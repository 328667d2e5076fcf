// AsyncReader implementations: io_uring on real files (many reads beyond the queue depth,
// reads at end of file, reads submitted from callbacks, direct IO) and the default
// synchronous reader; and the coroutine driver over them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "shale/file_system.h"
#include "src/base/async_read.h"
#include "src/env/io_uring_reader.h"
#include "src/util/random.h"
#include "tests/db_test_util.h"
#include "tests/fault_injection_fs.h"

namespace shale::test {
namespace {

// A reader, or false when this machine cannot set io_uring up (seccomp, old kernel): the
// fallback path is tested separately (DBMultiGetFaultTest).
bool IoUringOrSkip(unsigned depth, std::unique_ptr<AsyncReader>* reader) {
  return NewIoUringReader(depth, reader).ok();
}

class AsyncReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/data";
    Random rnd(5);
    for (int i = 0; i < (1 << 20); i++) data_.push_back(static_cast<char>(rnd.Uniform(256)));
    ASSERT_TRUE(WriteStringToFile(fs_.get(), data_, path_, true).ok());
  }
  std::unique_ptr<RandomAccessFile> OpenFile(bool direct) {
    std::unique_ptr<RandomAccessFile> f;
    FileOptions fo;
    fo.use_direct_io = direct;
    EXPECT_TRUE(fs_->NewRandomAccessFile(path_, fo, &f).ok());
    return f;
  }
  // Reads n random ranges (some running past the end) and checks every byte.
  void CheckRandomReads(AsyncReader* reader, const RandomAccessFile* file, int n, bool aligned) {
    Random rnd(9);
    struct Read {
      ReadRequest req;
      std::unique_ptr<char, decltype(&std::free)> buf{nullptr, &std::free};
      bool done = false;
    };
    std::vector<Read> reads(n);
    for (Read& r : reads) {
      uint64_t off = rnd.Uniform(static_cast<uint32_t>(data_.size() + 100));
      size_t len = 1 + rnd.Uniform(20000);
      if (aligned) {
        off = off / 4096 * 4096;
        len = (len + 4095) / 4096 * 4096;
      }
      r.buf.reset(static_cast<char*>(std::aligned_alloc(4096, (len + 4095) / 4096 * 4096)));
      r.req.offset = off;
      r.req.len = len;
      r.req.scratch = r.buf.get();
      ASSERT_TRUE(reader
                      ->Submit(
                          file, &r.req,
                          [](ReadRequest*, void* arg) { static_cast<Read*>(arg)->done = true; }, &r)
                      .ok());
    }
    while (reader->pending() > 0) ASSERT_TRUE(reader->Poll().ok());
    for (Read& r : reads) {
      ASSERT_TRUE(r.done);
      ASSERT_TRUE(r.req.status.ok()) << r.req.status.ToString();
      const size_t expect =
          r.req.offset >= data_.size() ? 0 : std::min(r.req.len, data_.size() - r.req.offset);
      ASSERT_EQ(r.req.result.size(), expect);
      if (expect > 0) {
        ASSERT_EQ(r.req.result.ToString(), data_.substr(r.req.offset, expect));
      }
    }
  }

  ScratchDir dir_;
  std::shared_ptr<FileSystem> fs_ = FileSystem::Default();
  std::string path_;
  std::string data_;
};

TEST_F(AsyncReaderTest, IoUringReadsEveryRangeBeyondQueueDepth) {
  std::unique_ptr<AsyncReader> reader;
  if (!IoUringOrSkip(8, &reader)) GTEST_SKIP() << "io_uring unavailable here";
  EXPECT_STREQ(reader->Name(), "io_uring");
  auto file = OpenFile(false);
  CheckRandomReads(reader.get(), file.get(), 300, false);
}

TEST_F(AsyncReaderTest, IoUringWithDirectIo) {
  std::unique_ptr<AsyncReader> reader;
  if (!IoUringOrSkip(16, &reader)) GTEST_SKIP() << "io_uring unavailable here";
  auto file = OpenFile(true);
  // What the file system asks for (statx), a power of two; the reads below align to 4 KiB.
  const size_t align = file->GetRequiredBufferAlignment();
  ASSERT_GE(align, 512u);
  if (align > 4096) GTEST_SKIP() << "direct IO alignment " << align << " above 4 KiB";
  ASSERT_EQ(align & (align - 1), 0u);
  CheckRandomReads(reader.get(), file.get(), 100, true);
}

TEST_F(AsyncReaderTest, DefaultReaderAnswersAtPoll) {
  FaultInjectionFileSystem mem;
  ASSERT_TRUE(WriteStringToFile(&mem, data_, "/f", true).ok());
  std::unique_ptr<AsyncReader> reader;
  ASSERT_TRUE(mem.NewAsyncReader(&reader).ok());
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(mem.NewRandomAccessFile("/f", FileOptions(), &file).ok());
  CheckRandomReads(reader.get(), file.get(), 50, false);
  // Injected errors reach the request's status.
  mem.SetErrorRate(FaultOp::kRead, 1);
  char buf[16];
  ReadRequest req{0, sizeof(buf), buf, Slice(), Status()};
  bool done = false;
  ASSERT_TRUE(
      reader
          ->Submit(
              file.get(), &req, [](ReadRequest*, void* d) { *static_cast<bool*>(d) = true; }, &done)
          .ok());
  EXPECT_FALSE(done);  // only Poll reports
  ASSERT_TRUE(reader->Poll().ok());
  EXPECT_TRUE(done);
  EXPECT_TRUE(req.status.IsIOError());
}

// Coroutines driven by AsyncIo: each reads two ranges, then a third that depends on them.
Task ReadChain(AsyncIo* io, const RandomAccessFile* file, uint64_t base, std::string* out) {
  char a[8], b[8], c[8];
  ReadRequest ra{base, 8, a, Slice(), Status()}, rb{base + 100, 8, b, Slice(), Status()};
  ReadRequest* both[] = {&ra, &rb};
  co_await io->ReadAll(file, both, 2);
  ReadRequest rc{base + 200 + static_cast<unsigned char>(a[0]), 8, c, Slice(), Status()};
  ReadRequest* one[] = {&rc};
  co_await io->ReadAll(file, one, 1);
  *out = ra.result.ToString() + rb.result.ToString() + rc.result.ToString();
}

TEST_F(AsyncReaderTest, DriverRunsCoroutinesToCompletion) {
  std::unique_ptr<AsyncReader> reader;
  if (!IoUringOrSkip(4, &reader)) GTEST_SKIP() << "io_uring unavailable here";
  auto file = OpenFile(false);
  AsyncIo io(reader.get(), nullptr);
  std::vector<std::string> out(20);
  for (size_t i = 0; i < out.size(); i++) io.Spawn(ReadChain(&io, file.get(), i * 1000, &out[i]));
  io.RunUntilDone();
  for (size_t i = 0; i < out.size(); i++) {
    const uint64_t base = i * 1000;
    const uint64_t third = base + 200 + static_cast<unsigned char>(data_[base]);
    EXPECT_EQ(out[i], data_.substr(base, 8) + data_.substr(base + 100, 8) + data_.substr(third, 8));
  }
}

}  // namespace
}  // namespace shale::test
