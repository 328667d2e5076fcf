#include "src/base/info_log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "src/base/filename.h"
#include "src/util/clock.h"

namespace shale {
namespace {

constexpr size_t kBufferBytes = 8 << 10;

}  // namespace
FileLogger::FileLogger(InfoLogOptions options)
    : Logger(options.level), options_(std::move(options)) {}

FileLogger::~FileLogger() { Close().PermitUncheckedError(); }

Status FileLogger::Open(InfoLogOptions options, std::shared_ptr<Logger>* result) {
  result->reset();
  if (options.fs == nullptr) return Status::InvalidArgument("info log: no file system");
  if (options.keep_log_file_num < 1) options.keep_log_file_num = 1;
  if (!options.db_log_dir.empty()) {
    Status s = options.fs->CreateDirIfMissing(options.db_log_dir);
    if (!s.ok()) return s;
  }
  std::shared_ptr<FileLogger> logger(new FileLogger(std::move(options)));
  {
    MutexLock l(&logger->mu_);
    Status s = logger->Start();
    if (!s.ok()) return s;
  }
  *result = std::move(logger);
  return Status::OK();
}

Status FileLogger::Start() {
  if (file_ != nullptr) {
    WriteOut();
    file_->Close().PermitUncheckedError();
    file_.reset();
  }
  FileSystem* fs = options_.fs.get();
  const std::string live = InfoLogFileName(options_.dbname, options_.db_log_dir);
  if (fs->FileExists(live).ok()) {
    // Named by the time it is set aside; a name taken already (two in one microsecond) moves on.
    uint64_t micros = WallClockMicros();
    while (fs->FileExists(OldInfoLogFileName(options_.dbname, options_.db_log_dir, micros)).ok()) {
      micros++;
    }
    fs->RenameFile(live, OldInfoLogFileName(options_.dbname, options_.db_log_dir, micros))
        .PermitUncheckedError();  // a failed rename: the new log replaces the old
  }
  DeleteOldLogs(options_, options_.keep_log_file_num);
  size_ = 0;
  started_micros_ = NowMicros();
  return fs->NewWritableFile(live, FileOptions(), &file_);
}

void FileLogger::DeleteOldLogs(const InfoLogOptions& options, uint64_t keep) {
  const std::string dir = InfoLogDir(options.dbname, options.db_log_dir);
  const std::string name = InfoLogName(options.dbname, options.db_log_dir);
  std::vector<std::string> children;
  if (!options.fs->GetChildren(dir, &children).ok()) return;
  std::vector<uint64_t> old;
  for (const std::string& child : children) {
    uint64_t micros;
    if (ParseInfoLogName(child, name, &micros) && micros > 0) old.push_back(micros);
  }
  if (old.size() < keep) return;
  std::sort(old.begin(), old.end());
  for (size_t i = 0; i + keep <= old.size(); i++) {
    options.fs->DeleteFile(OldInfoLogFileName(options.dbname, options.db_log_dir, old[i]))
        .PermitUncheckedError();  // retried at the next start
  }
}

void FileLogger::Logv(const char* format, va_list ap) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm t;
  localtime_r(&seconds, &t);
  char prefix[64];
  const int prefix_len =
      std::snprintf(prefix, sizeof(prefix), "%04d/%02d/%02d-%02d:%02d:%02d.%06ld %ld ",
                    t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                    static_cast<long>(micros), static_cast<long>(syscall(SYS_gettid)));
  std::string line(prefix, static_cast<size_t>(std::max(prefix_len, 0)));
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (n > 0) {
    const size_t at = line.size();
    line.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(line.data() + at, static_cast<size_t>(n) + 1, format, ap);
    line.resize(at + static_cast<size_t>(n));
  }
  if (line.back() != '\n') line.push_back('\n');

  MutexLock l(&mu_);
  if (file_ == nullptr) return;  // closed
  buffer_ += line;
  size_ += line.size();
  const uint64_t now_micros = NowMicros();
  const bool too_old = options_.log_file_time_to_roll > 0 &&
                       (now_micros - started_micros_) / 1000000 >= options_.log_file_time_to_roll;
  if ((options_.max_log_file_size > 0 && size_ >= options_.max_log_file_size) || too_old) {
    Start().PermitUncheckedError();  // without a new log, messages are dropped until Close
  } else if (buffer_.size() >= kBufferBytes || now_micros - last_write_micros_ >= 1000000) {
    WriteOut();
  }
}

void FileLogger::Logv(InfoLogLevel log_level, const char* format, va_list ap) {
  Logger::Logv(log_level, format, ap);
  if (log_level >= WARN_LEVEL && log_level < HEADER_LEVEL) Flush();
}

void FileLogger::Flush() {
  MutexLock l(&mu_);
  WriteOut();
}

void FileLogger::WriteOut() {
  if (file_ == nullptr || buffer_.empty()) return;
  if (file_->Append(buffer_).ok()) file_->Flush().PermitUncheckedError();
  buffer_.clear();
  last_write_micros_ = NowMicros();
}

Status FileLogger::Close() {
  MutexLock l(&mu_);
  if (file_ == nullptr) return Status::OK();
  WriteOut();
  Status s = file_->Close();
  file_.reset();
  return s;
}

}  // namespace shale
