// FileSystem: every byte shale reads or writes goes through this interface.
//
// PosixFileSystem (FileSystem::Default()) is the production implementation; tests substitute a
// fault-injecting in-memory one. Paths are plain strings; directories are not created implicitly.
//
// Errors: failures return IOError (or NotFound for a missing path) with the path and errno text.
// Thread safety: a FileSystem is shared by all threads of a DB and must be thread-safe. A file
// object is used by one thread at a time, except RandomAccessFile::Read, which is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

struct FileOptions {
  // Open with O_DIRECT (reads must then use aligned offsets, lengths and buffers; see
  // RandomAccessFile::GetRequiredBufferAlignment).
  bool use_direct_io = false;
  // NewWritableFile only (0: off). From the second Sync() on (a file synced once, just
  // before it is closed, never pays for zeros), the file keeps zeros written and synced past
  // its data, at least half this many bytes, and appends overwrite them: a Sync then finds the
  // file's size and blocks already durable and makes only data durable (ext4 skips its
  // journal commit). Close() cuts the zeros off; after a crash the file ends in them, so only
  // a format whose readers stop at zeros (the WAL's) may ask for this. GetFileSize() counts
  // data only.
  uint64_t zero_fill_ahead = 0;
  // NewWritableFile only (0: off). Each time this many bytes have been written since the last
  // time, the file asks the operating system to start writing back the whole pages written so
  // far (Linux: sync_file_range with SYNC_FILE_RANGE_WRITE). No durability point: data is
  // durable only after Sync().
  uint64_t bytes_per_sync = 0;
  // NewWritableFile only. Appends may be copied into a shared memory mapping of the file
  // instead of written with write(2) (no system call per Append or Flush; a process crash
  // still keeps every appended byte, which is in the operating system's page cache). The file
  // then keeps zeros written past its data from the first Append on, as with zero_fill_ahead,
  // and the same rules hold: Close() cuts them off, after a crash the file ends in them (so only
  // a format whose readers stop at zeros may ask for this), and GetFileSize() counts data only.
  // From the second Sync() on, appends use write(2) (a file synced often gains nothing). The
  // POSIX file system maps only on file systems that overwrite in place (ext4, XFS, tmpfs).
  // A process crash during an append of at least 8 bytes that does not cross a 1 MiB
  // boundary leaves its first 4 bytes zero unless all of it landed, and its bytes 4..8 in
  // place if anything after them did (the WAL's records put their checksum first). A hint: a
  // file system may ignore it.
  bool mmap_appends = false;
};

// Append-only output. Data is durable only after Sync() returns OK.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(const Slice& data) = 0;
  // Appends head then body as one Append of their concatenation (the same rules, including
  // mapped appends' order within an append), without the caller joining them first. The
  // default joins them into a temporary string; files override it to copy each part once.
  virtual Status AppendJoined(const Slice& head, const Slice& body);
  // Hands buffered data to the operating system (survives a process crash, not a power loss).
  virtual Status Flush() = 0;
  // Makes everything appended so far durable (fdatasync).
  virtual Status Sync() = 0;
  // Flushes and closes; further calls are errors. The destructor closes without reporting.
  virtual Status Close() = 0;
  virtual uint64_t GetFileSize() const = 0;
};

// Forward-only input.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes into scratch; *result points at the bytes read (maybe fewer than n,
  // empty at end of file). *result may point elsewhere than scratch.
  virtual Status Read(size_t n, Slice* result, char* scratch) = 0;
  virtual Status Skip(uint64_t n) = 0;
};

// Positional input; Read is safe to call from several threads at once. Reads may also go
// through an AsyncReader (FileSystem::NewAsyncReader).
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset into scratch; fewer only at end of file.
  virtual Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const = 0;
  // Alignment that offsets, lengths and buffers must have (1 unless direct IO).
  virtual size_t GetRequiredBufferAlignment() const { return 1; }
  virtual bool use_direct_io() const { return false; }
  // The POSIX file descriptor, or -1 when there is none (async IO submits reads by fd).
  virtual int fd() const { return -1; }
};

// One positional read handed to an AsyncReader.
struct ReadRequest {
  uint64_t offset = 0;
  size_t len = 0;
  // Room for len bytes; for a direct-IO file, offset, len and scratch must be aligned to the
  // file's GetRequiredBufferAlignment().
  char* scratch = nullptr;
  // Set when the read completes: the bytes read (fewer than len only at end of file) and the
  // outcome (IOError with the path and errno text).
  Slice result;
  Status status;
};

// Reads that are submitted now and completed later, without a thread per read (io_uring on
// POSIX). Completions are delivered by Poll, on the thread that calls it.
// Ownership: the reader does not own files or requests; both must stay alive until the
// request's callback has run. Thread safety: a reader belongs to one thread.
class AsyncReader {
 public:
  using Callback = void (*)(ReadRequest* request, void* arg);
  virtual ~AsyncReader() = default;
  // Queues a read of request->len bytes at request->offset of file. done(request, arg) runs
  // from a later Poll once request->result and request->status are set. An error means the
  // read was not queued and done will not run.
  [[nodiscard]] virtual Status Submit(const RandomAccessFile* file, ReadRequest* request,
                                      Callback done, void* arg) = 0;
  // Hands queued reads to the device, waits until at least one read has completed (when any
  // is outstanding) and runs the callbacks of every completed read. An error means the reader
  // is unusable; requests not yet completed then complete with that error.
  [[nodiscard]] virtual Status Poll() = 0;
  // Hands reads queued so far to the device without waiting (Poll does this too); lets the
  // caller start the first reads of a batch while it prepares the rest.
  [[nodiscard]] virtual Status Flush() { return Status::OK(); }
  // Reads submitted whose callbacks have not run yet.
  virtual size_t pending() const = 0;
  // What does the reading: "io_uring", "sync", ...
  virtual const char* Name() const = 0;
};

// An open directory, for making entry changes (create, rename, delete) durable.
class Directory {
 public:
  virtual ~Directory() = default;
  virtual Status Fsync() = 0;
};

// An advisory lock held on a file; released when destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // The process-wide POSIX file system.
  static std::shared_ptr<FileSystem> Default();

  virtual const char* Name() const = 0;

  // Creates or truncates path.
  virtual Status NewWritableFile(const std::string& path, const FileOptions& options,
                                 std::unique_ptr<WritableFile>* result) = 0;
  // Opens path for appending, creating it if missing.
  virtual Status ReopenWritableFile(const std::string& path, const FileOptions& options,
                                    std::unique_ptr<WritableFile>* result) = 0;
  virtual Status NewSequentialFile(const std::string& path, const FileOptions& options,
                                   std::unique_ptr<SequentialFile>* result) = 0;
  virtual Status NewRandomAccessFile(const std::string& path, const FileOptions& options,
                                     std::unique_ptr<RandomAccessFile>* result) = 0;
  virtual Status NewDirectory(const std::string& path, std::unique_ptr<Directory>* result) = 0;

  // OK if path exists, NotFound if it does not, IOError if that cannot be told.
  virtual Status FileExists(const std::string& path) = 0;
  // Names (not paths) of the entries of dir, without "." and "..".
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* names) = 0;
  virtual Status DeleteFile(const std::string& path) = 0;
  // Creates dir; OK if it already exists as a directory.
  virtual Status CreateDirIfMissing(const std::string& dir) = 0;
  virtual Status DeleteDir(const std::string& dir) = 0;
  virtual Status GetFileSize(const std::string& path, uint64_t* size) = 0;
  // Atomically replaces target with src.
  virtual Status RenameFile(const std::string& src, const std::string& target) = 0;

  // Takes an exclusive lock on path (creating it), refused with IOError if another holder has
  // it, in this process or another.
  virtual Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) = 0;

  // A reader for asynchronous reads of this file system's files, for the calling thread. The
  // default answers each read with RandomAccessFile::Read at submission and reports it at the
  // next Poll. An error (NotSupported, IOError) says why asynchronous reads are unavailable;
  // callers then read synchronously.
  virtual Status NewAsyncReader(std::unique_ptr<AsyncReader>* reader);
};

// Reads the whole file at path into *data.
Status ReadFileToString(FileSystem* fs, const std::string& path, std::string* data);
// Writes data to path (truncating it), syncing it when sync is true.
Status WriteStringToFile(FileSystem* fs, const Slice& data, const std::string& path, bool sync);

}  // namespace shale
