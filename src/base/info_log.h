// The DB's own info log file (LOG, names in src/base/filename.h): a Logger that writes one
// line per message, "YYYY/MM/DD-HH:MM:SS.uuuuuu <thread id> <message>" (local time, the id the
// kernel gives the thread), to a file of a FileSystem. Lines gather in a buffer that is written
// out (to the OS) once it holds 8 KiB, at a message a second or more after the last write, at
// every warning or worse, and at Flush and Close (a DB flushes once it has opened and after each
// flush and compaction): a process crash loses at most the lines since. The file is never
// synced (a power loss may lose its tail; nothing else depends on it). Writing in buffers keeps
// a DB's Open (some 80 lines of options) to a write or two.
//
// Opening sets the live log aside as LOG.old.<micros> (if there is one) and starts a new one;
// with max_log_file_size > 0 the log is set aside and started again each time it grows past
// that size, and with log_file_time_to_roll > 0 at the first message once it is that many
// seconds old. Either way the oldest old logs are deleted so that, the live one included, at most
// keep_log_file_num remain. A failure to write, rename or delete loses messages or leaves a
// file behind, and nothing else: the logger reports it to nobody (its own messages are the way
// it would).
//
// Thread safety: Logv, Flush and Close may be called from any threads at once (one mutex).
// Ownership: holds the FileSystem (shared) and the open file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/file_system.h"
#include "shale/logger.h"
#include "shale/status.h"
#include "src/util/mutex.h"
#include "src/util/thread_annotations.h"

namespace shale {

struct InfoLogOptions {
  std::shared_ptr<FileSystem> fs;
  std::string dbname;
  std::string db_log_dir;  // empty: the DB directory
  InfoLogLevel level = INFO_LEVEL;
  uint64_t max_log_file_size = 0;      // 0: no limit
  uint64_t log_file_time_to_roll = 0;  // seconds; 0: no limit
  uint64_t keep_log_file_num = 1000;   // >= 1
};

class FileLogger final : public Logger {
 public:
  // Sets the live log aside and opens a new one (creating db_log_dir if it is missing).
  [[nodiscard]] static Status Open(InfoLogOptions options, std::shared_ptr<Logger>* result);
  ~FileLogger() override;

  void Logv(const char* format, va_list ap) override;
  // As Logger's, then a warning or worse is written out at once.
  void Logv(InfoLogLevel log_level, const char* format, va_list ap) override;
  void Flush() override;
  [[nodiscard]] Status Close() override;

  // Deletes the oldest of the old logs so that at most keep - 1 remain (beside the live one).
  static void DeleteOldLogs(const InfoLogOptions& options, uint64_t keep);

 private:
  explicit FileLogger(InfoLogOptions options);
  // Sets the live log aside (renaming it) and opens a new one in file_.
  Status Start() REQUIRES(mu_);
  // Writes buffer_ to file_.
  void WriteOut() REQUIRES(mu_);

  const InfoLogOptions options_;
  Mutex mu_;
  std::unique_ptr<WritableFile> file_ GUARDED_BY(mu_);
  uint64_t size_ GUARDED_BY(mu_) = 0;               // bytes of the live log, buffered ones included
  std::string buffer_ GUARDED_BY(mu_);              // lines not yet written out
  uint64_t last_write_micros_ GUARDED_BY(mu_) = 0;  // NowMicros of the last write out
  uint64_t started_micros_ GUARDED_BY(mu_) = 0;     // NowMicros when the live log was started
};

}  // namespace shale
