// FaultInjectionFileSystem: an in-memory FileSystem for tests that can lose, tear and corrupt
// data the way machines do, deterministically from a seed.
//
// Model:
//   - Each file holds bytes [0, synced) that are durable and bytes [synced, size) that are
//     volatile (written but not yet synced). Sync() makes all of a file durable.
//   - The namespace (which path names which file) has a current view and a durable view per
//     directory; Directory::Fsync() makes a directory's entries (creates, renames, deletes)
//     durable. Directories themselves are durable once created.
//   - Bytes of [0, synced) overwritten since the last sync (FileOptions::zero_fill_ahead files
//     write over their zeros) are volatile too: a crash may bring their durable bytes back.
//   - Crash(mode, revert_directories) invalidates every open handle and lock, then applies the
//     mode to every file's volatile bytes: kDropUnsynced drops them, kTornPrefix keeps a random
//     prefix (cut at a 512-byte sector boundary inside overwritten bytes, as a device tears),
//     kRandomBlocks keeps random 4 KiB blocks and zeroes (or reverts) the rest. With
//     revert_directories, the namespace returns to its durable view (new files vanish, renames
//     and deletes are undone).
// Faults (all off by default; counted per kind so a test can check each reached a caller):
//   - EIO at a rate ("1 in N") per operation kind, optionally only for paths containing a
//     pattern, or exactly at operation number k (every operation counts, so a test can walk
//     every index);
//   - ENOSPC: a byte quota over all stored bytes; the write that crosses it stores a prefix
//     and fails;
//   - short reads from sequential files, bit flips in read buffers, bit flips in data being
//     written, and CorruptFile() to flip a stored bit directly.
//
// Thread safety: every method is thread-safe (one mutex). File handles are used by one thread
// at a time, like the POSIX ones.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/file_system.h"
#include "src/util/mutex.h"
#include "src/util/random.h"

namespace shale::test {

enum class CrashMode { kDropUnsynced, kTornPrefix, kRandomBlocks };

// Operation kinds for error injection and counting.
enum class FaultOp : int {
  kRead = 0,  // sequential and random-access reads
  kWrite,     // Append / Flush
  kSync,      // WritableFile::Sync
  kOpen,      // creating or opening files and directories
  kRename,
  kDelete,
  kDirSync,   // Directory::Fsync
  kMetadata,  // FileExists, GetChildren, GetFileSize, CreateDirIfMissing, LockFile
  kNumOps
};

// What was injected.
enum class FaultKind : int {
  kIOError = 0,
  kNoSpace,
  kShortRead,
  kReadBitFlip,
  kWriteBitFlip,
  kNumKinds
};

class FaultInjectionFileSystem final : public FileSystem {
 public:
  explicit FaultInjectionFileSystem(uint64_t seed = 301);
  // One whose directories down to path's parent exist (for a DB at path).
  static std::shared_ptr<FaultInjectionFileSystem> WithParentsOf(const std::string& path,
                                                                 uint64_t seed = 301);
  ~FaultInjectionFileSystem() override;

  // ---- FileSystem ----
  const char* Name() const override { return "FaultInjectionFileSystem"; }
  Status NewWritableFile(const std::string& path, const FileOptions& options,
                         std::unique_ptr<WritableFile>* result) override;
  Status ReopenWritableFile(const std::string& path, const FileOptions& options,
                            std::unique_ptr<WritableFile>* result) override;
  Status NewSequentialFile(const std::string& path, const FileOptions& options,
                           std::unique_ptr<SequentialFile>* result) override;
  Status NewRandomAccessFile(const std::string& path, const FileOptions& options,
                             std::unique_ptr<RandomAccessFile>* result) override;
  Status NewDirectory(const std::string& path, std::unique_ptr<Directory>* result) override;
  Status FileExists(const std::string& path) override;
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override;
  Status DeleteFile(const std::string& path) override;
  Status CreateDirIfMissing(const std::string& dir) override;
  Status DeleteDir(const std::string& dir) override;
  Status GetFileSize(const std::string& path, uint64_t* size) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override;
  // The default synchronous reader (so reads on the async path see every fault), unless
  // SetAsyncReaderUnavailable made it fail.
  Status NewAsyncReader(std::unique_ptr<AsyncReader>* reader) override;

  // ---- Crashes ----
  void Crash(CrashMode mode, bool revert_directories = false);

  // ---- Faults ----
  // EIO on 1 in one_in operations of kind op (0: never) on paths containing pattern ("": all).
  void SetErrorRate(FaultOp op, uint32_t one_in, const std::string& pattern = "");
  // The operation with this number (see operation_count) fails with EIO; 0 disables.
  void FailOperationNumber(uint64_t k);
  // Stored bytes may not exceed quota (UINT64_MAX: unlimited).
  void SetSpaceQuota(uint64_t bytes);
  void SetShortReadRate(uint32_t one_in);
  void SetReadBitFlipRate(uint32_t one_in);
  void SetWriteBitFlipRate(uint32_t one_in);
  // Every WritableFile::Sync takes this long (a slow device); what it makes durable is what
  // had been written when it started.
  void SetSyncLatency(std::chrono::microseconds latency);
  // NewAsyncReader fails with why (OK: works again), as when io_uring cannot be set up.
  void SetAsyncReaderUnavailable(const Status& why);
  // Turns every fault above off (the counters stay).
  void DisableAllFaults();
  // Flips one stored bit of path. false if the file or offset does not exist.
  bool CorruptFile(const std::string& path, uint64_t offset, int bit);

  // ---- Inspection ----
  uint64_t operation_count() const;
  uint64_t InjectedCount(FaultKind kind) const;
  uint64_t TotalInjected() const;
  std::vector<std::string> ListFiles() const;
  // Current size (durable + volatile) and durable size; 0 if missing.
  uint64_t FileSize(const std::string& path) const;
  uint64_t FileDurableSize(const std::string& path) const;
  bool Exists(const std::string& path) const;
  std::string FileContents(const std::string& path) const;
  void SetFileContents(const std::string& path, const std::string& data);

 private:
  struct FileState {
    std::string data;
    size_t synced = 0;
    // Durable bytes [dirty_lo, dirty_hi) ⊂ [0, synced) may have been overwritten since the
    // last sync; dirty_orig holds what is durable there (a crash may bring it back).
    size_t dirty_lo = 0;
    size_t dirty_hi = 0;
    std::string dirty_orig;
    uint64_t writes = 0;  // bumped by every write, so a slow sync can tell what it covered

    // Remembers the durable bytes of [lo, hi) (hi <= synced) before they are overwritten.
    void NoteOverwrite(size_t lo, size_t hi);
    // Puts the durable bytes back over [lo, hi) where they were overwritten.
    void RevertOverwrites(size_t lo, size_t hi);
    void ForgetOverwrites();
  };
  class Writable;
  class Sequential;
  class RandomAccess;
  class Dir;
  class Lock;

  // REQUIRES: mu_ held. Counts an operation and returns the error to inject, if any.
  Status CountOp(FaultOp op, const std::string& path) REQUIRES(mu_);
  static constexpr uint64_t kAtEnd = UINT64_MAX;
  // Writes data at offset (<= the file's size; kAtEnd: at its end), overwriting or growing it.
  Status Write(uint64_t generation, const std::shared_ptr<FileState>& file, const std::string& path,
               uint64_t offset, const Slice& data) EXCLUDES(mu_);
  // Writes zeros over [from, to) (from <= the file's size), as far as the space quota lets
  // them go; never injects a fault (zero filling is best effort). Returns where they end.
  uint64_t FillZeros(uint64_t generation, const std::shared_ptr<FileState>& file, uint64_t from,
                     uint64_t to) EXCLUDES(mu_);
  // Cuts the file to size bytes (made durable at once: the model keeps no pending truncation).
  // Never injects a fault.
  Status Truncate(uint64_t generation, const std::shared_ptr<FileState>& file, uint64_t size)
      EXCLUDES(mu_);
  Status Sync(uint64_t generation, const std::shared_ptr<FileState>& file, const std::string& path)
      EXCLUDES(mu_);
  Status Read(uint64_t generation, const std::shared_ptr<FileState>& file, const std::string& path,
              uint64_t offset, size_t n, bool sequential, Slice* result, char* scratch)
      EXCLUDES(mu_);
  Status SyncDir(uint64_t generation, const std::string& dir) EXCLUDES(mu_);
  void Unlock(uint64_t generation, const std::string& path) EXCLUDES(mu_);
  Status CheckGeneration(uint64_t generation) const REQUIRES(mu_);
  uint64_t StoredBytes() const REQUIRES(mu_);
  static std::string Parent(const std::string& path);

  mutable Mutex mu_;
  Random rnd_ GUARDED_BY(mu_);
  uint64_t generation_ GUARDED_BY(mu_) = 1;  // bumped by Crash; stale handles fail
  std::map<std::string, std::shared_ptr<FileState>> files_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<FileState>> durable_files_ GUARDED_BY(mu_);
  std::map<std::string, bool> dirs_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> locks_ GUARDED_BY(mu_);  // path → generation

  uint64_t op_count_ GUARDED_BY(mu_) = 0;
  uint64_t fail_op_number_ GUARDED_BY(mu_) = 0;
  std::array<uint32_t, static_cast<int>(FaultOp::kNumOps)> error_one_in_ GUARDED_BY(mu_){};
  std::array<std::string, static_cast<int>(FaultOp::kNumOps)> error_pattern_ GUARDED_BY(mu_);
  uint64_t quota_ GUARDED_BY(mu_) = UINT64_MAX;
  uint32_t short_read_one_in_ GUARDED_BY(mu_) = 0;
  uint32_t read_flip_one_in_ GUARDED_BY(mu_) = 0;
  uint32_t write_flip_one_in_ GUARDED_BY(mu_) = 0;
  std::array<uint64_t, static_cast<int>(FaultKind::kNumKinds)> injected_ GUARDED_BY(mu_){};
  Status async_unavailable_ GUARDED_BY(mu_);
  std::chrono::microseconds sync_latency_ GUARDED_BY(mu_){0};
};

}  // namespace shale::test
