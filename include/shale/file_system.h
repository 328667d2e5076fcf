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
};

// Append-only output. Data is durable only after Sync() returns OK.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(const Slice& data) = 0;
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

// Positional input; Read is safe to call from several threads at once.
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
};

// Reads the whole file at path into *data.
Status ReadFileToString(FileSystem* fs, const std::string& path, std::string* data);
// Writes data to path (truncating it), syncing it when sync is true.
Status WriteStringToFile(FileSystem* fs, const Slice& data, const std::string& path, bool sync);

}  // namespace shale
