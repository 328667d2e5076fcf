// The POSIX FileSystem: open(2)/pread(2)/write(2)/fdatasync(2) with EINTR handled, a 64 KiB
// user-space buffer in front of appends (or appends copied into a shared mapping, on request),
// O_DIRECT on request, flock(2) for LOCK files, and io_uring for asynchronous reads
// (src/env/io_uring_reader.h).
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>

#include "shale/file_system.h"
#include "src/env/io_uring_reader.h"
#include "src/env/mapped_appends.h"
#include "src/env/window_preparer.h"
#include "src/env/zero_fill_ahead.h"

namespace shale {
namespace {

Status PosixError(const std::string& context, int err) {
  if (err == ENOENT) return Status::NotFound(context, std::strerror(err));
  return Status::IOError(context, std::strerror(err));
}

// Owns a file descriptor; closes it on destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Closes now; returns close(2)'s errno or 0.
  int Reset() {
    int err = 0;
    if (fd_ >= 0 && ::close(fd_) != 0) err = errno;
    fd_ = -1;
    return err;
  }

 private:
  int fd_;
};

// Buffered appends. With FileOptions::zero_fill_ahead, Sync() keeps zeros written past the
// data (pwrite of a shared zero page) and the data then overwrites them through the file
// offset, so most fdatasyncs find the file's size and blocks already durable. Close() cuts the
// zeros off again. With FileOptions::bytes_per_sync, writes start the writeback of every
// bytes_per_sync of whole pages they complete.
//
// Mapped appends (FileOptions::mmap_appends; shape and copy order in src/env/mapped_appends.h):
// the file keeps zeros written ahead of its data, and appends copy into a shared mapping of the
// window that holds them (the window's zeroed pages are faulted in writable at once,
// MADV_POPULATE_WRITE). The zeros' pages are in the page cache with their blocks reserved, and
// only file systems that overwrite in place map (OverwritesInPlace), so a copy never faults on a
// block allocation: a full disk shows as a short zero write, never as SIGBUS. (An IO error
// that shuts the file system down can still fault a copy: the process then ends as at a kill,
// with what it wrote before in the page cache.) If zeros cannot be written or a window cannot be
// mapped, and from the second Sync() on, the file goes on with write(2) from the end of its data.
// Once the data passes the middle of its first window, a WindowPreparer thread maps each next
// window and writes its zeros while the appends fill the current one, and unmaps the windows
// left behind; the file takes the next window as far as it is ready and writes the rest of its
// zeros itself. The file's own zeros stay below the window the thread is asked for, and the
// thread is stopped before the file leaves mapped mode or closes.
// Close() unmaps and cuts the zeros off. fdatasync writes back the pages dirtied through the
// mapping as it does those written with write(2).
//
// Thread safety: one thread at a time (a mapped file's WindowPreparer writes only in the window
// it is asked for, which no append has reached).
class PosixWritableFile final : public WritableFile {
 public:
  static constexpr size_t kBufferSize = 64 << 10;
  static constexpr uint64_t kMapWindow = MappedAppends::kWindow;

  PosixWritableFile(std::string path, int fd, uint64_t size, uint64_t zero_fill_ahead,
                    uint64_t bytes_per_sync = 0, bool mmap_appends = false)
      : path_(std::move(path)),
        fd_(fd),
        size_(size),
        zero_fill_(zero_fill_ahead),
        bytes_per_sync_(bytes_per_sync),
        written_(size),
        writeback_from_(size),
        mapped_(mmap_appends && size == 0) {
    if (!mapped_) buffer_.reserve(kBufferSize);
  }
  ~PosixWritableFile() override { Close().PermitUncheckedError(); }

  Status Append(const Slice& data) override { return AppendJoined(data, Slice()); }

  Status AppendJoined(const Slice& head, const Slice& body) override {
    if (fd_.get() < 0) return Status::IOError(path_, "append to a closed file");
    Slice first = head, second = body;
    if (mapped_ && AppendMapped(&first, &second)) return Status::OK();
    return AppendBuffered(first, second);
  }

  Status Flush() override {
    if (fd_.get() < 0) return Status::IOError(path_, "flush of a closed file");
    return FlushBuffer();
  }

  Status Sync() override {
    Status s = Flush();
    if (!s.ok()) return s;
    uint64_t from, to;
    const bool zeros_due = zero_fill_.Due(size_, &from, &to);  // counts this sync
    if (mapped_ && !MappedAppends::MapsAfterSyncs(zero_fill_.syncs())) LeaveMapped();
    if (fd_.get() < 0) return Status::IOError(path_, "sync of a closed file");
    // (Zero fill is first due at the second sync, when the file no longer maps.)
    if (zeros_due) zero_fill_.Filled(WriteZerosAt(fd_.get(), from, to), to);
    if (::fdatasync(fd_.get()) != 0) return PosixError(path_ + ": fdatasync", errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_.get() < 0) return Status::OK();
    Status s = FlushBuffer();
    StopPreparer();
    Unmap();
    const uint64_t zeros_end = std::max(zero_fill_.filled(), zeros_end_);
    if (zeros_end > 0) {
      // Cut the zeros off at the end of what was written (after a failed write that is short
      // of size_: the file then ends in the partial record, as an appended one would). Mapped
      // appends leave the file offset at 0: their data ends at size_.
      const off_t end = mapped_ ? static_cast<off_t>(size_) : ::lseek(fd_.get(), 0, SEEK_CUR);
      if (end < 0 || (static_cast<uint64_t>(end) < zeros_end && ::ftruncate(fd_.get(), end) != 0)) {
        if (s.ok()) s = PosixError(path_ + ": ftruncate", errno);
      }
    }
    int err = fd_.Reset();
    if (s.ok() && err != 0) s = PosixError(path_ + ": close", err);
    return s;
  }

  uint64_t GetFileSize() const override { return size_; }

 private:
  // Copies *head then *body into the mapping, writing zeros and mapping windows ahead as
  // needed; the part inside each window in the order of MappedAppends::CopyFirstWordLast. False
  // if that failed: *head and *body are then what is left to append, and the file appends with
  // write(2) from the end of its data (mapped_ is false).
  bool AppendMapped(Slice* head, Slice* body) {
    const uint64_t end = size_ + head->size() + body->size();
    // The file's own zeros stay below the window the preparer is asked for.
    const uint64_t own_end = std::min(end, prepared_from_);
    if (own_end > zeros_end_ &&
        ExtendZeros(std::min(MappedAppends::ZerosFor(end), prepared_from_)) < own_end) {
      return LeaveMapped();
    }
    while (size_ < end) {
      if (map_ == nullptr || size_ >= map_base_ + kMapWindow) {
        if (!NextWindow(size_ / kMapWindow * kMapWindow)) return LeaveMapped();
        // The zeros of the window taken, as far as the preparer had them, then the file's own.
        const uint64_t piece_end = std::min(end, map_base_ + kMapWindow);
        if (piece_end > zeros_end_ &&
            ExtendZeros(std::min(MappedAppends::ZerosFor(end), prepared_from_)) < piece_end) {
          return LeaveMapped();
        }
      }
      // The next piece: as much as fits in the window, taken from the front of head, then body.
      const size_t k = static_cast<size_t>(std::min(end, map_base_ + kMapWindow) - size_);
      const size_t from_head = std::min(k, head->size());
      MappedAppends::CopyFirstWordLast(map_ + (size_ - map_base_), Slice(head->data(), from_head),
                                       Slice(body->data(), k - from_head));
      head->remove_prefix(from_head);
      body->remove_prefix(k - from_head);
      size_ += k;
      written_ = size_;
    }
    if (preparer_ == nullptr && end > map_base_ + kMapWindow / 2) StartPreparer();
    StartWriteback();
    return true;
  }

  // Appends head then body through the buffer. If they would overflow it, the buffer is
  // written first, and parts larger than half of it go out with one writev(2). The decision is
  // made for both parts together, so no write(2) ends between them.
  Status AppendBuffered(const Slice& head, const Slice& body) {
    const size_t n = head.size() + body.size();
    size_ += n;
    if (buffer_.size() + n > kBufferSize) {
      Status s = FlushBuffer();
      if (!s.ok()) return s;
      if (n > kBufferSize / 2) {
        s = WriteAll(head, body);
        if (s.ok()) StartWriteback();
        return s;
      }
    }
    buffer_.append(head.data(), head.size());
    buffer_.append(body.data(), body.size());
    return Status::OK();
  }

  // Writes zeros from the end of the file's zeros to `to` (page-aligned) and faults the part
  // inside the mapped window in; returns how far the zeros reach.
  uint64_t ExtendZeros(uint64_t to) {
    if (to <= zeros_end_) return zeros_end_;
    const uint64_t from = zeros_end_;
    zeros_end_ = WriteZerosAt(fd_.get(), from, to);
    if (map_ != nullptr) Populate(from, zeros_end_);
    return zeros_end_;
  }

  // Makes the window at base the current one. Once the preparer has it, its mapping and zeros
  // as far as they are ready (the window left goes back to the preparer to unmap), and the
  // next window is asked for; else (or if the preparer had not mapped it) one mapped here.
  bool NextWindow(uint64_t base) {
    if (base >= prepared_from_) {
      const WindowPreparer::Window w = preparer_->Take(base);
      zeros_end_ = std::max(zeros_end_, w.zeros_end);
      if (w.map != nullptr) {
        if (map_ != nullptr) preparer_->Retire(map_);
        map_ = w.map;
        map_base_ = base;
      }
      if (w.zeros_end < base + kMapWindow) {
        // The appends outran the thread (a busy machine): the file goes on alone, as the
        // thread would only compete with it for the processor.
        StopPreparer();
        preparer_failed_ = true;
      } else {
        prepared_from_ = base + kMapWindow;
        preparer_->Prepare(prepared_from_);
      }
      if (w.map != nullptr) return true;
    }
    return MapWindow(base);
  }

  // Starts the preparer, asking for the first window past the file's own zeros. Without a
  // thread (none can start) the file maps its windows and writes its zeros itself.
  void StartPreparer() {
    if (preparer_failed_) return;
    const uint64_t first =
        (std::max(zeros_end_, map_base_ + kMapWindow) + kMapWindow - 1) / kMapWindow * kMapWindow;
    try {
      preparer_ = std::make_unique<WindowPreparer>(fd_.get(), kMapWindow, MappedAppends::kStep);
    } catch (const std::system_error&) {
      preparer_failed_ = true;
      return;
    }
    prepared_from_ = first;
    preparer_->Prepare(first);
  }

  // Ends the preparer (after its step in progress; it unmaps what it holds): from here on only
  // this object writes to the file. The zeros then reach zeros_end_ at most.
  void StopPreparer() {
    if (preparer_ == nullptr) return;
    zeros_end_ = std::max(zeros_end_, preparer_->Stop());
    preparer_.reset();
    prepared_from_ = kNever;
  }

  // Maps the window starting at base (replacing the current one) and faults in its zeros.
  bool MapWindow(uint64_t base) {
    Unmap();
    void* p = ::mmap(nullptr, kMapWindow, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(),
                     static_cast<off_t>(base));
    if (p == MAP_FAILED) return false;
    map_ = static_cast<char*>(p);
    map_base_ = base;
    Populate(std::max(base, size_ / 4096 * 4096), zeros_end_);
    return true;
  }

  // Faults in the pages of [from, to) inside the mapped window, writable: the copies that
  // follow then take no page faults. Best effort (a page left out faults on its first copy).
  void Populate(uint64_t from, uint64_t to) {
    from = std::max(from, map_base_);
    to = std::min(to, map_base_ + kMapWindow);
    if (from >= to) return;
    (void)::madvise(map_ + (from - map_base_), static_cast<size_t>(to - from), MADV_POPULATE_WRITE);
  }

  void Unmap() {
    if (map_ == nullptr) return;
    ::munmap(map_, kMapWindow);
    map_ = nullptr;
  }

  // Ends mapped appends: later appends use write(2) from the end of the data.
  bool LeaveMapped() {
    StopPreparer();
    Unmap();
    mapped_ = false;
    written_ = size_;
    // (A regular file's offset can always be set; if not, the file is closed: nothing may land
    // at the wrong offset, and later calls report the closed file.)
    if (::lseek(fd_.get(), static_cast<off_t>(size_), SEEK_SET) < 0) (void)fd_.Reset();
    buffer_.reserve(kBufferSize);
    return false;
  }

  Status FlushBuffer() {
    if (buffer_.empty()) return Status::OK();
    Status s = WriteAll(buffer_, Slice());
    buffer_.clear();
    if (s.ok()) StartWriteback();
    return s;
  }

  // With bytes_per_sync: once that many bytes of whole pages have been written since the last
  // start, asks the kernel to start writing them back (it returns without waiting). The page
  // being appended to is left out (it would be written again). A failure costs only the head
  // start: Sync() reports the errors that matter.
  void StartWriteback() {
    if (bytes_per_sync_ == 0) return;
    constexpr uint64_t kPage = 4096;
    const uint64_t end = written_ / kPage * kPage;
    if (end < writeback_from_ + bytes_per_sync_) return;
    (void)::sync_file_range(fd_.get(), static_cast<off_t>(writeback_from_),
                            static_cast<off_t>(end - writeback_from_), SYNC_FILE_RANGE_WRITE);
    writeback_from_ = end;
  }

  // Writes head then body at the file offset (writev(2), again after a short write).
  Status WriteAll(Slice head, Slice body) {
    while (!head.empty() || !body.empty()) {
      std::array<iovec, 2> iov = {iovec{const_cast<char*>(head.data()), head.size()},
                                  iovec{const_cast<char*>(body.data()), body.size()}};
      const int first = head.empty() ? 1 : 0;
      ssize_t done = ::writev(fd_.get(), iov.data() + first, 2 - first);
      if (done < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_ + ": write", errno);
      }
      written_ += static_cast<uint64_t>(done);
      const size_t left = static_cast<size_t>(done);
      const size_t from_head = std::min(left, head.size());
      head.remove_prefix(from_head);
      body.remove_prefix(left - from_head);
    }
    return Status::OK();
  }

  const std::string path_;
  Fd fd_;
  uint64_t size_;  // data appended (the file offset once the buffer is written)
  ZeroFillAhead zero_fill_;
  const uint64_t bytes_per_sync_;
  uint64_t written_;         // bytes handed to the kernel (the file offset)
  uint64_t writeback_from_;  // where the next writeback start begins
  std::string buffer_;
  bool mapped_;             // appends copy into map_ (FileOptions::mmap_appends)
  uint64_t zeros_end_ = 0;  // mapped appends: the end of the zeros written past the data
  char* map_ = nullptr;     // the mapped window [map_base_, map_base_ + kMapWindow)
  uint64_t map_base_ = 0;
  static constexpr uint64_t kNever = ~uint64_t{0};
  // Mapped appends past the middle of their first window: the window at prepared_from_ is
  // being prepared by preparer_ (after fd_: destroyed first).
  std::unique_ptr<WindowPreparer> preparer_;
  uint64_t prepared_from_ = kNever;
  bool preparer_failed_ = false;  // its thread could not start
};

// Forward reads. Thread safety: one thread at a time.
class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  Status Read(size_t n, Slice* result, char* scratch) override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_.get(), scratch + got, n - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_ + ": read", errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = Slice(scratch, got);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_.get(), static_cast<off_t>(n), SEEK_CUR) < 0) {
      return PosixError(path_ + ": lseek", errno);
    }
    return Status::OK();
  }

 private:
  const std::string path_;
  Fd fd_;
};

// Positional reads. Thread safety: Read may be called concurrently (pread has no shared offset).
class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  // alignment: 1 for buffered reads; for direct reads what the file's file system requires.
  PosixRandomAccessFile(std::string path, int fd, bool direct, size_t alignment)
      : path_(std::move(path)), fd_(fd), direct_(direct), alignment_(alignment) {}

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_.get(), scratch + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_ + ": pread at " + std::to_string(offset + got), errno);
      }
      if (r == 0) break;  // end of file
      got += static_cast<size_t>(r);
    }
    *result = Slice(scratch, got);
    return Status::OK();
  }

  size_t GetRequiredBufferAlignment() const override { return alignment_; }
  bool use_direct_io() const override { return direct_; }
  int fd() const override { return fd_.get(); }

 private:
  const std::string path_;
  Fd fd_;
  const bool direct_;
  const size_t alignment_;
};

// The alignment direct reads of fd need for offsets, lengths and buffers: what statx reports
// (STATX_DIOALIGN: usually the device's logical block size, 512 bytes on most disks, so that a
// 4 KiB block read costs 4.5 KiB rather than the 8 KiB of two whole pages), or 4096 where the
// kernel or file system does not say.
size_t DirectIOAlignment(int fd) {
  constexpr size_t kFallback = 4096, kMax = 64 << 10;
#ifdef STATX_DIOALIGN
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
      (sx.stx_mask & STATX_DIOALIGN) != 0 && sx.stx_dio_offset_align > 0) {
    const size_t align = std::max<size_t>(sx.stx_dio_offset_align, sx.stx_dio_mem_align);
    // A power of two, as aligned_alloc and the rounding of ranges need.
    if ((align & (align - 1)) == 0 && align <= kMax) return align;
  }
#endif
  return kFallback;
}

class PosixDirectory final : public Directory {
 public:
  PosixDirectory(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status Fsync() override {
    if (::fsync(fd_.get()) != 0) return PosixError(path_ + ": fsync", errno);
    return Status::OK();
  }

 private:
  const std::string path_;
  Fd fd_;
};

// Holds flock(LOCK_EX) on an open descriptor; closing it releases the lock.
class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::flock(fd_.get(), LOCK_UN); }

 private:
  Fd fd_;
};

class PosixFileSystem final : public FileSystem {
 public:
  const char* Name() const override { return "PosixFileSystem"; }

  Status NewWritableFile(const std::string& path, const FileOptions& options,
                         std::unique_ptr<WritableFile>* result) override {
    // A shared writable mapping needs a descriptor open for reading as well.
    int fd = Open(path, (options.mmap_appends ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC);
    if (fd < 0) return PosixError(path, errno);
    const bool mapped = options.mmap_appends && OverwritesInPlace(fd);
    *result = std::make_unique<PosixWritableFile>(path, fd, 0, options.zero_fill_ahead,
                                                  options.bytes_per_sync, mapped);
    return Status::OK();
  }

  Status ReopenWritableFile(const std::string& path, const FileOptions& options,
                            std::unique_ptr<WritableFile>* result) override {
    int fd = Open(path, O_WRONLY | O_CREAT | O_APPEND);
    if (fd < 0) return PosixError(path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return PosixError(path, err);
    }
    // O_APPEND writes land at the end of the file: no zeros may be kept past it.
    *result = std::make_unique<PosixWritableFile>(path, fd, static_cast<uint64_t>(st.st_size),
                                                  /*zero_fill_ahead=*/0, options.bytes_per_sync);
    return Status::OK();
  }

  Status NewSequentialFile(const std::string& path, const FileOptions&,
                           std::unique_ptr<SequentialFile>* result) override {
    int fd = Open(path, O_RDONLY);
    if (fd < 0) return PosixError(path, errno);
    *result = std::make_unique<PosixSequentialFile>(path, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& path, const FileOptions& options,
                             std::unique_ptr<RandomAccessFile>* result) override {
    int flags = O_RDONLY;
    if (options.use_direct_io) flags |= O_DIRECT;
    int fd = Open(path, flags);
    if (fd < 0) return PosixError(path, errno);
    *result = std::make_unique<PosixRandomAccessFile>(
        path, fd, options.use_direct_io, options.use_direct_io ? DirectIOAlignment(fd) : 1);
    return Status::OK();
  }

  Status NewDirectory(const std::string& path, std::unique_ptr<Directory>* result) override {
    int fd = Open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return PosixError(path, errno);
    *result = std::make_unique<PosixDirectory>(path, fd);
    return Status::OK();
  }

  Status FileExists(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return Status::OK();
    return PosixError(path, errno);
  }

  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    names->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    while (true) {
      errno = 0;
      struct dirent* entry = ::readdir(d);
      if (entry == nullptr) break;
      std::string name = entry->d_name;
      if (name != "." && name != "..") names->push_back(std::move(name));
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return PosixError(dir + ": readdir", err);
    return Status::OK();
  }

  Status DeleteFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PosixError(path + ": unlink", errno);
    return Status::OK();
  }

  Status CreateDirIfMissing(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0) return Status::OK();
    int err = errno;
    struct stat st;
    if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return Status::OK();
    }
    return PosixError(dir + ": mkdir", err);
  }

  Status DeleteDir(const std::string& dir) override {
    if (::rmdir(dir.c_str()) != 0) return PosixError(dir + ": rmdir", errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& path, uint64_t* size) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return PosixError(path, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) {
      return PosixError(src + " -> " + target + ": rename", errno);
    }
    return Status::OK();
  }

  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override {
    int fd = Open(path, O_RDWR | O_CREAT);
    if (fd < 0) return PosixError(path, errno);
    // flock locks belong to the open file description, so a second LockFile in this process
    // is refused just like one from another process.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      return Status::IOError("lock " + path,
                             err == EWOULDBLOCK ? "held by another opener" : std::strerror(err));
    }
    *lock = std::make_unique<PosixFileLock>(fd);
    return Status::OK();
  }

  Status NewAsyncReader(std::unique_ptr<AsyncReader>* reader) override {
    return NewIoUringReader(kAsyncQueueDepth, reader);
  }

 private:
  // Reads in flight per thread: a MultiGet batch's blocks at one level fit comfortably.
  static constexpr unsigned kAsyncQueueDepth = 128;

  // True if fd's file system writes a page over its own blocks (ext2/3/4, XFS, tmpfs): a copy
  // into a mapped page whose blocks are allocated then never needs new space, so it cannot
  // fault with SIGBUS on a full disk. Copy-on-write file systems (btrfs, ZFS, bcachefs) need
  // space for every rewrite, so their files append with write(2).
  static bool OverwritesInPlace(int fd) {
    struct statfs st;
    if (::fstatfs(fd, &st) != 0) return false;
    const auto type = static_cast<unsigned long>(st.f_type);
    return type == EXT4_SUPER_MAGIC || type == XFS_SUPER_MAGIC || type == TMPFS_MAGIC;
  }

  static int Open(const std::string& path, int flags) {
    int fd;
    do {
      fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    return fd;
  }
};

}  // namespace

std::shared_ptr<FileSystem> FileSystem::Default() {
  static const std::shared_ptr<FileSystem> instance = std::make_shared<PosixFileSystem>();
  return instance;
}

}  // namespace shale
