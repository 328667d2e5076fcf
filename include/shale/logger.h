// Logger: where a DB writes its informational log — what it did and why (open and recovery,
// flushes, compactions, file deletions, write stalls, background errors), one line per
// message. RocksDB's interface: an application may pass its own (Options::info_log); without
// one, DB::Open writes the file LOG in the DB directory (docs/info-log.md says where else, how
// old logs are kept and what the lines hold).
//
// A subclass implements Logv(format, ap) (printf-style). Messages below the logger's level are
// dropped before they are formatted. HEADER_LEVEL messages (what Open writes first: the
// version and the options) are always written.
//
// Thread safety: a DB calls Logv from any of its threads at once; an implementation must allow
// that. The level may be changed while others log (it is read atomically).
// Ownership: shared (std::shared_ptr) between the application and every DB it is passed to.
#pragma once

#include <atomic>
#include <cstdarg>
#include <memory>

#include "shale/status.h"

namespace shale {

enum InfoLogLevel : unsigned char {
  DEBUG_LEVEL = 0,
  INFO_LEVEL,
  WARN_LEVEL,
  ERROR_LEVEL,
  FATAL_LEVEL,
  HEADER_LEVEL,
  NUM_INFO_LOG_LEVELS,
};

class Logger {
 public:
  explicit Logger(InfoLogLevel log_level = INFO_LEVEL) : log_level_(log_level) {}
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;
  virtual ~Logger() = default;

  // Writes one message (no trailing newline needed).
  virtual void Logv(const char* format, va_list ap) = 0;
  // Writes the message if log_level is at or above the logger's level (HEADER_LEVEL always),
  // prefixed with the level's name ("[WARN] ", ...) for levels other than INFO and HEADER.
  virtual void Logv(InfoLogLevel log_level, const char* format, va_list ap);
  // Pushes written messages to their destination (a file logger's buffer to the OS).
  virtual void Flush() {}
  // Releases what the logger holds; later messages are dropped. The default does nothing.
  [[nodiscard]] virtual Status Close() { return Status::OK(); }

  InfoLogLevel GetInfoLogLevel() const { return log_level_.load(std::memory_order_relaxed); }
  void SetInfoLogLevel(InfoLogLevel log_level) {
    log_level_.store(log_level, std::memory_order_relaxed);
  }
  // True when a message at log_level would be written.
  bool Enabled(InfoLogLevel log_level) const {
    return log_level == HEADER_LEVEL || log_level >= GetInfoLogLevel();
  }

 private:
  std::atomic<InfoLogLevel> log_level_;
};

// printf-style messages to a logger (nothing when it is null).
void Log(InfoLogLevel log_level, const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
void Log(InfoLogLevel log_level, Logger* info_log, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
void Header(const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void Debug(const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void Info(const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void Warn(const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void Error(const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void Fatal(const std::shared_ptr<Logger>& info_log, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace shale
