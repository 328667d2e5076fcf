#include "tests/fault_injection_fs.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <thread>

#include "src/env/mapped_appends.h"
#include "src/env/zero_fill_ahead.h"

namespace shale::test {

// ---------------------------------------------------------------- handles

class FaultInjectionFileSystem::Writable final : public WritableFile {
 public:
  Writable(FaultInjectionFileSystem* fs, uint64_t generation, std::shared_ptr<FileState> file,
           std::string path, uint64_t size, uint64_t zero_fill_ahead, bool mmap_appends)
      : fs_(fs),
        generation_(generation),
        file_(std::move(file)),
        path_(std::move(path)),
        size_(size),
        mapped_(mmap_appends && size == 0),
        positional_(zero_fill_ahead > 0 || mmap_appends),
        zero_fill_(zero_fill_ahead) {}
  Status Append(const Slice& data) override {
    if (closed_) return Status::IOError(path_, "append to a closed file");
    // Mapped appends keep zeros ahead from the first append on (src/env/mapped_appends.h).
    // Zeros short of the append's end end mapped appends, as in the POSIX file (whose later
    // appends then use write(2)).
    const uint64_t end = size_ + data.size();
    if (mapped_ && end > zeros_end_) {
      zeros_end_ = fs_->FillZeros(generation_, file_, zeros_end_, MappedAppends::ZerosFor(end));
      if (zeros_end_ < end) mapped_ = false;
    }
    // Plain files append at the end, as O_APPEND does; zero-filled ones write over the zeros.
    Status s = fs_->Write(generation_, file_, path_, positional_ ? size_ : kAtEnd, data);
    if (s.ok()) size_ += data.size();
    return s;
  }
  Status Flush() override { return closed_ ? Status::IOError(path_, "closed") : Status::OK(); }
  Status Sync() override {
    if (closed_) return Status::IOError(path_, "sync after close");
    // As the POSIX file, which appends with write(2) from the second sync on.
    uint64_t from, to;
    const bool zeros_due = zero_fill_.Due(size_, &from, &to);  // counts this sync
    if (mapped_ && !MappedAppends::MapsAfterSyncs(zero_fill_.syncs())) mapped_ = false;
    if (zeros_due) {
      // As the POSIX file: best effort (what fits under the quota, never a fault).
      zero_fill_.Filled(fs_->FillZeros(generation_, file_, from, to), to);
    }
    return fs_->Sync(generation_, file_, path_);
  }
  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    if (std::max(zero_fill_.filled(), zeros_end_) > size_) {
      return fs_->Truncate(generation_, file_, size_);
    }
    return Status::OK();
  }
  uint64_t GetFileSize() const override { return size_; }

 private:
  FaultInjectionFileSystem* const fs_;
  const uint64_t generation_;
  const std::shared_ptr<FileState> file_;
  const std::string path_;
  uint64_t size_;
  bool mapped_;            // FileOptions::mmap_appends, until zeros fall short or a 2nd sync
  const bool positional_;  // writes at size_ (the file may hold zeros past it)
  ZeroFillAhead zero_fill_;
  uint64_t zeros_end_ = 0;  // mapped: the end of the zeros written ahead
  bool closed_ = false;
};

class FaultInjectionFileSystem::Sequential final : public SequentialFile {
 public:
  Sequential(FaultInjectionFileSystem* fs, uint64_t generation, std::shared_ptr<FileState> file,
             std::string path)
      : fs_(fs), generation_(generation), file_(std::move(file)), path_(std::move(path)) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    Status s =
        fs_->Read(generation_, file_, path_, offset_, n, /*sequential=*/true, result, scratch);
    if (s.ok()) offset_ += result->size();
    return s;
  }
  Status Skip(uint64_t n) override {
    offset_ += n;
    return Status::OK();
  }

 private:
  FaultInjectionFileSystem* const fs_;
  const uint64_t generation_;
  const std::shared_ptr<FileState> file_;
  const std::string path_;
  uint64_t offset_ = 0;
};

class FaultInjectionFileSystem::RandomAccess final : public RandomAccessFile {
 public:
  RandomAccess(FaultInjectionFileSystem* fs, uint64_t generation, std::shared_ptr<FileState> file,
               std::string path)
      : fs_(fs), generation_(generation), file_(std::move(file)), path_(std::move(path)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    return fs_->Read(generation_, file_, path_, offset, n, /*sequential=*/false, result, scratch);
  }

 private:
  FaultInjectionFileSystem* const fs_;
  const uint64_t generation_;
  const std::shared_ptr<FileState> file_;
  const std::string path_;
};

class FaultInjectionFileSystem::Dir final : public Directory {
 public:
  Dir(FaultInjectionFileSystem* fs, uint64_t generation, std::string path)
      : fs_(fs), generation_(generation), path_(std::move(path)) {}
  Status Fsync() override { return fs_->SyncDir(generation_, path_); }

 private:
  FaultInjectionFileSystem* const fs_;
  const uint64_t generation_;
  const std::string path_;
};

class FaultInjectionFileSystem::Lock final : public FileLock {
 public:
  Lock(FaultInjectionFileSystem* fs, uint64_t generation, std::string path)
      : fs_(fs), generation_(generation), path_(std::move(path)) {}
  ~Lock() override { fs_->Unlock(generation_, path_); }

 private:
  FaultInjectionFileSystem* const fs_;
  const uint64_t generation_;
  const std::string path_;
};

// ---------------------------------------------------------------- helpers

FaultInjectionFileSystem::FaultInjectionFileSystem(uint64_t seed) : rnd_(seed) {
  dirs_["/"] = true;
}

std::shared_ptr<FaultInjectionFileSystem> FaultInjectionFileSystem::WithParentsOf(
    const std::string& path, uint64_t seed) {
  auto fs = std::make_shared<FaultInjectionFileSystem>(seed);
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    Status s = fs->CreateDirIfMissing(path.substr(0, slash));
    assert(s.ok());
    s.PermitUncheckedError();
  }
  return fs;
}

FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

std::string FaultInjectionFileSystem::Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status FaultInjectionFileSystem::CheckGeneration(uint64_t generation) const {
  if (generation != generation_) return Status::IOError("file system crashed; handle is stale");
  return Status::OK();
}

uint64_t FaultInjectionFileSystem::StoredBytes() const {
  uint64_t total = 0;
  for (const auto& [path, file] : files_) total += file->data.size();
  return total;
}

Status FaultInjectionFileSystem::CountOp(FaultOp op, const std::string& path) {
  op_count_++;
  if (fail_op_number_ != 0 && op_count_ == fail_op_number_) {
    injected_[static_cast<int>(FaultKind::kIOError)]++;
    return Status::IOError(path, "injected EIO (operation #" + std::to_string(op_count_) + ")");
  }
  const int i = static_cast<int>(op);
  if (error_one_in_[i] != 0 &&
      (error_pattern_[i].empty() || path.find(error_pattern_[i]) != std::string::npos) &&
      rnd_.OneIn(error_one_in_[i])) {
    injected_[static_cast<int>(FaultKind::kIOError)]++;
    return Status::IOError(path, "injected EIO");
  }
  return Status::OK();
}

// ---------------------------------------------------------------- file data

Status FaultInjectionFileSystem::Write(uint64_t generation, const std::shared_ptr<FileState>& file,
                                       const std::string& path, uint64_t offset,
                                       const Slice& data) {
  MutexLock l(&mu_);
  Status s = CheckGeneration(generation);
  if (s.ok()) s = CountOp(FaultOp::kWrite, path);
  if (!s.ok()) return s;
  const size_t size = file->data.size();
  const size_t start = offset == kAtEnd ? size : static_cast<size_t>(offset);
  if (start > size) return Status::IOError(path, "write past the end of the file");
  size_t n = data.size();
  bool no_space = false;
  const uint64_t stored = StoredBytes();
  const size_t overwrite = std::min(n, size - start);  // bytes that take no new space
  if (quota_ != UINT64_MAX && stored + (n - overwrite) > quota_) {
    n = overwrite + (stored >= quota_ ? 0 : static_cast<size_t>(quota_ - stored));
    no_space = true;
  }
  if (start < file->synced) file->NoteOverwrite(start, std::min(start + n, file->synced));
  if (start + n > size) file->data.resize(start + n);
  if (n > 0) std::memcpy(file->data.data() + start, data.data(), n);
  file->writes++;
  if (write_flip_one_in_ != 0 && n > 0 && rnd_.OneIn(write_flip_one_in_)) {
    file->data[start + rnd_.Uniform(n)] ^= static_cast<char>(1 << rnd_.Uniform(8));
    injected_[static_cast<int>(FaultKind::kWriteBitFlip)]++;
  }
  if (no_space) {
    injected_[static_cast<int>(FaultKind::kNoSpace)]++;
    return Status::IOError(path, "No space left on device");
  }
  return Status::OK();
}

uint64_t FaultInjectionFileSystem::FillZeros(uint64_t generation,
                                             const std::shared_ptr<FileState>& file, uint64_t from,
                                             uint64_t to) {
  MutexLock l(&mu_);
  if (!CheckGeneration(generation).ok() || from > file->data.size()) return from;
  const uint64_t stored = StoredBytes();
  const uint64_t size = file->data.size();
  if (quota_ != UINT64_MAX && to > size) {
    const uint64_t room = stored >= quota_ ? 0 : quota_ - stored;
    to = std::min(to, size + room);
  }
  if (to <= from) return from;
  if (from < file->synced) file->NoteOverwrite(from, std::min<size_t>(to, file->synced));
  if (to > size) file->data.resize(to);
  std::memset(file->data.data() + from, 0, to - from);
  file->writes++;
  return to;
}

Status FaultInjectionFileSystem::Truncate(uint64_t generation,
                                          const std::shared_ptr<FileState>& file, uint64_t size) {
  MutexLock l(&mu_);
  // Not a fault point (Close never fails here): cutting off zeros that stayed would lose
  // nothing, and the DB does not rely on it.
  Status s = CheckGeneration(generation);
  if (!s.ok()) return s;
  if (size >= file->data.size()) return Status::OK();
  file->data.resize(size);
  file->synced = std::min<size_t>(file->synced, size);
  if (file->dirty_hi > size) {
    if (file->dirty_lo >= size) {
      file->ForgetOverwrites();
    } else {
      file->dirty_orig.resize(size - file->dirty_lo);
      file->dirty_hi = size;
    }
  }
  return Status::OK();
}

void FaultInjectionFileSystem::FileState::NoteOverwrite(size_t lo, size_t hi) {
  if (lo >= hi) return;
  if (dirty_lo == dirty_hi) {
    dirty_lo = lo;
    dirty_hi = hi;
    dirty_orig.assign(data, lo, hi - lo);
    return;
  }
  // Bytes of [0, synced) outside the dirty range have not changed since the sync: what is
  // there now is what is durable.
  const size_t new_lo = std::min(lo, dirty_lo);
  const size_t new_hi = std::max(hi, dirty_hi);
  std::string orig;
  if (new_lo < dirty_lo) orig.assign(data, new_lo, dirty_lo - new_lo);
  orig += dirty_orig;
  if (new_hi > dirty_hi) orig.append(data, dirty_hi, new_hi - dirty_hi);
  dirty_orig = std::move(orig);
  dirty_lo = new_lo;
  dirty_hi = new_hi;
}

void FaultInjectionFileSystem::FileState::RevertOverwrites(size_t lo, size_t hi) {
  lo = std::max(lo, dirty_lo);
  hi = std::min({hi, dirty_hi, data.size()});
  if (lo >= hi) return;
  std::memcpy(data.data() + lo, dirty_orig.data() + (lo - dirty_lo), hi - lo);
}

void FaultInjectionFileSystem::FileState::ForgetOverwrites() {
  dirty_lo = dirty_hi = 0;
  dirty_orig.clear();
}

Status FaultInjectionFileSystem::Sync(uint64_t generation, const std::shared_ptr<FileState>& file,
                                      const std::string& path) {
  uint64_t target;
  uint64_t writes;
  std::chrono::microseconds latency;
  {
    MutexLock l(&mu_);
    Status s = CheckGeneration(generation);
    if (s.ok()) s = CountOp(FaultOp::kSync, path);
    if (!s.ok()) return s;  // a failed sync makes nothing durable
    target = file->data.size();
    writes = file->writes;
    latency = sync_latency_;
    if (latency.count() == 0) {
      file->synced = target;
      file->ForgetOverwrites();
      return Status::OK();
    }
  }
  std::this_thread::sleep_for(latency);
  MutexLock l(&mu_);
  Status s = CheckGeneration(generation);  // a crash while syncing: nothing more is durable
  if (!s.ok()) return s;
  file->synced = std::max(file->synced, std::min<uint64_t>(target, file->data.size()));
  // Overwrites during the sleep may not be covered; keep them all volatile then.
  if (file->writes == writes) file->ForgetOverwrites();
  return Status::OK();
}

void FaultInjectionFileSystem::SetSyncLatency(std::chrono::microseconds latency) {
  MutexLock l(&mu_);
  sync_latency_ = latency;
}

Status FaultInjectionFileSystem::Read(uint64_t generation, const std::shared_ptr<FileState>& file,
                                      const std::string& path, uint64_t offset, size_t n,
                                      bool sequential, Slice* result, char* scratch) {
  MutexLock l(&mu_);
  Status s = CheckGeneration(generation);
  if (s.ok()) s = CountOp(FaultOp::kRead, path);
  if (!s.ok()) return s;
  const uint64_t size = file->data.size();
  size_t len = offset >= size ? 0 : static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  if (sequential && short_read_one_in_ != 0 && len > 1 && rnd_.OneIn(short_read_one_in_)) {
    len = 1 + static_cast<size_t>(rnd_.Uniform(len - 1));
    injected_[static_cast<int>(FaultKind::kShortRead)]++;
  }
  if (len > 0) std::memcpy(scratch, file->data.data() + offset, len);
  if (read_flip_one_in_ != 0 && len > 0 && rnd_.OneIn(read_flip_one_in_)) {
    scratch[rnd_.Uniform(len)] ^= static_cast<char>(1 << rnd_.Uniform(8));
    injected_[static_cast<int>(FaultKind::kReadBitFlip)]++;
  }
  *result = Slice(scratch, len);
  return Status::OK();
}

// ---------------------------------------------------------------- namespace

Status FaultInjectionFileSystem::NewWritableFile(const std::string& path,
                                                 const FileOptions& options,
                                                 std::unique_ptr<WritableFile>* result) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kOpen, path);
  if (!s.ok()) return s;
  if (dirs_.count(Parent(path)) == 0) return Status::NotFound(path, "no such directory");
  auto file = std::make_shared<FileState>();  // a new inode; old handles keep the old one
  files_[path] = file;
  *result = std::make_unique<Writable>(this, generation_, file, path, 0, options.zero_fill_ahead,
                                       options.mmap_appends);
  return Status::OK();
}

Status FaultInjectionFileSystem::ReopenWritableFile(const std::string& path, const FileOptions&,
                                                    std::unique_ptr<WritableFile>* result) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kOpen, path);
  if (!s.ok()) return s;
  if (dirs_.count(Parent(path)) == 0) return Status::NotFound(path, "no such directory");
  auto& file = files_[path];
  if (file == nullptr) file = std::make_shared<FileState>();
  *result = std::make_unique<Writable>(this, generation_, file, path, file->data.size(),
                                       /*zero_fill_ahead=*/0, /*mmap_appends=*/false);
  return Status::OK();
}

Status FaultInjectionFileSystem::NewSequentialFile(const std::string& path, const FileOptions&,
                                                   std::unique_ptr<SequentialFile>* result) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kOpen, path);
  if (!s.ok()) return s;
  auto it = files_.find(path);
  if (it == files_.end()) return Status::NotFound(path, "no such file");
  *result = std::make_unique<Sequential>(this, generation_, it->second, path);
  return Status::OK();
}

Status FaultInjectionFileSystem::NewRandomAccessFile(const std::string& path, const FileOptions&,
                                                     std::unique_ptr<RandomAccessFile>* result) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kOpen, path);
  if (!s.ok()) return s;
  auto it = files_.find(path);
  if (it == files_.end()) return Status::NotFound(path, "no such file");
  *result = std::make_unique<RandomAccess>(this, generation_, it->second, path);
  return Status::OK();
}

Status FaultInjectionFileSystem::NewDirectory(const std::string& path,
                                              std::unique_ptr<Directory>* result) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kOpen, path);
  if (!s.ok()) return s;
  if (dirs_.count(path) == 0) return Status::NotFound(path, "no such directory");
  *result = std::make_unique<Dir>(this, generation_, path);
  return Status::OK();
}

Status FaultInjectionFileSystem::SyncDir(uint64_t generation, const std::string& dir) {
  MutexLock l(&mu_);
  Status s = CheckGeneration(generation);
  if (s.ok()) s = CountOp(FaultOp::kDirSync, dir);
  if (!s.ok()) return s;
  // The durable view of dir's entries becomes the current one.
  for (auto it = durable_files_.begin(); it != durable_files_.end();) {
    it = Parent(it->first) == dir ? durable_files_.erase(it) : std::next(it);
  }
  for (const auto& [path, file] : files_) {
    if (Parent(path) == dir) durable_files_[path] = file;
  }
  return Status::OK();
}

Status FaultInjectionFileSystem::FileExists(const std::string& path) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kMetadata, path);
  if (!s.ok()) return s;
  if (files_.count(path) != 0 || dirs_.count(path) != 0) return Status::OK();
  return Status::NotFound(path);
}

Status FaultInjectionFileSystem::GetChildren(const std::string& dir,
                                             std::vector<std::string>* names) {
  names->clear();
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kMetadata, dir);
  if (!s.ok()) return s;
  if (dirs_.count(dir) == 0) return Status::NotFound(dir, "no such directory");
  for (const auto& [path, file] : files_) {
    if (Parent(path) == dir) names->push_back(path.substr(dir.size() + (dir == "/" ? 0 : 1)));
  }
  for (const auto& [path, present] : dirs_) {
    if (path != dir && Parent(path) == dir) {
      names->push_back(path.substr(dir.size() + (dir == "/" ? 0 : 1)));
    }
  }
  return Status::OK();
}

Status FaultInjectionFileSystem::DeleteFile(const std::string& path) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kDelete, path);
  if (!s.ok()) return s;
  if (files_.erase(path) == 0) return Status::NotFound(path, "no such file");
  return Status::OK();
}

Status FaultInjectionFileSystem::CreateDirIfMissing(const std::string& dir) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kMetadata, dir);
  if (!s.ok()) return s;
  if (files_.count(dir) != 0) return Status::IOError(dir, "exists and is not a directory");
  if (dirs_.count(Parent(dir)) == 0) return Status::NotFound(dir, "parent does not exist");
  dirs_[dir] = true;
  return Status::OK();
}

Status FaultInjectionFileSystem::DeleteDir(const std::string& dir) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kDelete, dir);
  if (!s.ok()) return s;
  for (const auto& [path, file] : files_) {
    if (Parent(path) == dir) return Status::IOError(dir, "directory not empty");
  }
  if (dirs_.erase(dir) == 0) return Status::NotFound(dir, "no such directory");
  return Status::OK();
}

Status FaultInjectionFileSystem::GetFileSize(const std::string& path, uint64_t* size) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kMetadata, path);
  if (!s.ok()) return s;
  auto it = files_.find(path);
  if (it == files_.end()) return Status::NotFound(path, "no such file");
  *size = it->second->data.size();
  return Status::OK();
}

Status FaultInjectionFileSystem::RenameFile(const std::string& src, const std::string& target) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kRename, src);
  if (!s.ok()) return s;
  auto it = files_.find(src);
  if (it == files_.end()) return Status::NotFound(src, "no such file");
  std::shared_ptr<FileState> file = it->second;
  files_.erase(it);
  files_[target] = std::move(file);
  return Status::OK();
}

Status FaultInjectionFileSystem::NewAsyncReader(std::unique_ptr<AsyncReader>* reader) {
  {
    MutexLock l(&mu_);
    if (!async_unavailable_.ok()) return async_unavailable_;
  }
  return FileSystem::NewAsyncReader(reader);
}

void FaultInjectionFileSystem::SetAsyncReaderUnavailable(const Status& why) {
  MutexLock l(&mu_);
  async_unavailable_ = why;
}

Status FaultInjectionFileSystem::LockFile(const std::string& path,
                                          std::unique_ptr<FileLock>* lock) {
  MutexLock l(&mu_);
  Status s = CountOp(FaultOp::kMetadata, path);
  if (!s.ok()) return s;
  auto it = locks_.find(path);
  if (it != locks_.end() && it->second == generation_) {
    return Status::IOError("lock " + path, "held by another opener");
  }
  if (files_.count(path) == 0) {
    if (dirs_.count(Parent(path)) == 0) return Status::NotFound(path, "no such directory");
    files_[path] = std::make_shared<FileState>();
  }
  locks_[path] = generation_;
  *lock = std::make_unique<Lock>(this, generation_, path);
  return Status::OK();
}

void FaultInjectionFileSystem::Unlock(uint64_t generation, const std::string& path) {
  MutexLock l(&mu_);
  auto it = locks_.find(path);
  if (it != locks_.end() && it->second == generation) locks_.erase(it);
}

// ---------------------------------------------------------------- crashes and faults

void FaultInjectionFileSystem::Crash(CrashMode mode, bool revert_directories) {
  MutexLock l(&mu_);
  generation_++;
  locks_.clear();
  if (revert_directories) files_ = durable_files_;
  // Files reachable from either view lose their volatile bytes per the mode.
  std::vector<std::shared_ptr<FileState>> all;
  for (const auto& [path, file] : files_) all.push_back(file);
  for (const auto& [path, file] : durable_files_) all.push_back(file);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (const auto& file : all) {
    const size_t size = file->data.size();
    const size_t synced = std::min(file->synced, size);
    // The first volatile byte: the first overwritten durable one, or the first unsynced one.
    const size_t lo = file->dirty_lo < file->dirty_hi ? file->dirty_lo : synced;
    switch (mode) {
      case CrashMode::kDropUnsynced:
        file->RevertOverwrites(lo, synced);
        file->data.resize(synced);
        break;
      case CrashMode::kTornPrefix: {
        size_t cut = lo + static_cast<size_t>(rnd_.Uniform(size - lo + 1));
        // Overwritten sectors land whole or not at all.
        if (cut < synced) cut = std::max(lo, cut / 512 * 512);
        file->RevertOverwrites(cut, synced);
        file->data.resize(std::max(synced, cut));
        break;
      }
      case CrashMode::kRandomBlocks: {
        // Keep or lose each 4 KiB-aligned block of the volatile bytes: a lost block has its
        // durable bytes back, zeros where there were none. The file keeps the length of its
        // last kept block.
        constexpr size_t kBlock = 4096;
        size_t keep_to = synced;
        for (size_t b = lo / kBlock * kBlock; b < size; b += kBlock) {
          size_t from = std::max(b, lo);
          size_t to = std::min(b + kBlock, size);
          if (rnd_.OneIn(2)) {
            keep_to = std::max(keep_to, to);
          } else {
            file->RevertOverwrites(from, std::min(to, synced));
            if (to > synced) {
              from = std::max(from, synced);
              std::memset(file->data.data() + from, 0, to - from);
            }
          }
        }
        file->data.resize(keep_to);
        break;
      }
    }
    file->ForgetOverwrites();
    file->synced = file->data.size();
  }
  durable_files_ = files_;
}

void FaultInjectionFileSystem::SetErrorRate(FaultOp op, uint32_t one_in,
                                            const std::string& pattern) {
  MutexLock l(&mu_);
  error_one_in_[static_cast<int>(op)] = one_in;
  error_pattern_[static_cast<int>(op)] = pattern;
}

void FaultInjectionFileSystem::FailOperationNumber(uint64_t k) {
  MutexLock l(&mu_);
  fail_op_number_ = k;
}

void FaultInjectionFileSystem::SetSpaceQuota(uint64_t bytes) {
  MutexLock l(&mu_);
  quota_ = bytes;
}

void FaultInjectionFileSystem::SetShortReadRate(uint32_t one_in) {
  MutexLock l(&mu_);
  short_read_one_in_ = one_in;
}

void FaultInjectionFileSystem::SetReadBitFlipRate(uint32_t one_in) {
  MutexLock l(&mu_);
  read_flip_one_in_ = one_in;
}

void FaultInjectionFileSystem::SetWriteBitFlipRate(uint32_t one_in) {
  MutexLock l(&mu_);
  write_flip_one_in_ = one_in;
}

void FaultInjectionFileSystem::DisableAllFaults() {
  MutexLock l(&mu_);
  fail_op_number_ = 0;
  error_one_in_.fill(0);
  quota_ = UINT64_MAX;
  short_read_one_in_ = 0;
  read_flip_one_in_ = 0;
  write_flip_one_in_ = 0;
}

bool FaultInjectionFileSystem::CorruptFile(const std::string& path, uint64_t offset, int bit) {
  MutexLock l(&mu_);
  auto it = files_.find(path);
  if (it == files_.end() || offset >= it->second->data.size()) return false;
  it->second->data[offset] ^= static_cast<char>(1 << (bit & 7));
  return true;
}

uint64_t FaultInjectionFileSystem::operation_count() const {
  MutexLock l(&mu_);
  return op_count_;
}

uint64_t FaultInjectionFileSystem::InjectedCount(FaultKind kind) const {
  MutexLock l(&mu_);
  return injected_[static_cast<int>(kind)];
}

uint64_t FaultInjectionFileSystem::TotalInjected() const {
  MutexLock l(&mu_);
  uint64_t total = 0;
  for (uint64_t n : injected_) total += n;
  return total;
}

std::vector<std::string> FaultInjectionFileSystem::ListFiles() const {
  MutexLock l(&mu_);
  std::vector<std::string> names;
  for (const auto& [path, file] : files_) names.push_back(path);
  return names;
}

uint64_t FaultInjectionFileSystem::FileSize(const std::string& path) const {
  MutexLock l(&mu_);
  auto it = files_.find(path);
  return it == files_.end() ? 0 : it->second->data.size();
}

uint64_t FaultInjectionFileSystem::FileDurableSize(const std::string& path) const {
  MutexLock l(&mu_);
  auto it = files_.find(path);
  return it == files_.end() ? 0 : std::min(it->second->synced, it->second->data.size());
}

bool FaultInjectionFileSystem::Exists(const std::string& path) const {
  MutexLock l(&mu_);
  return files_.count(path) != 0;
}

std::string FaultInjectionFileSystem::FileContents(const std::string& path) const {
  MutexLock l(&mu_);
  auto it = files_.find(path);
  return it == files_.end() ? std::string() : it->second->data;
}

void FaultInjectionFileSystem::SetFileContents(const std::string& path, const std::string& data) {
  MutexLock l(&mu_);
  auto& file = files_[path];
  if (file == nullptr) file = std::make_shared<FileState>();
  file->data = data;
  file->synced = data.size();
  file->ForgetOverwrites();
}

}  // namespace shale::test
