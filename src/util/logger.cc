#include "shale/logger.h"

#include <string>

namespace shale {
namespace {

const char* const kLevelNames[NUM_INFO_LOG_LEVELS] = {"DEBUG", "INFO",  "WARN",
                                                      "ERROR", "FATAL", "HEADER"};

void LogvTo(Logger* info_log, InfoLogLevel log_level, const char* format, va_list ap) {
  if (info_log != nullptr) info_log->Logv(log_level, format, ap);
}

}  // namespace

void Logger::Logv(InfoLogLevel log_level, const char* format, va_list ap) {
  if (!Enabled(log_level)) return;
  if (log_level == INFO_LEVEL || log_level == HEADER_LEVEL || log_level >= NUM_INFO_LOG_LEVELS) {
    Logv(format, ap);
    return;
  }
  const std::string prefixed = std::string("[") + kLevelNames[log_level] + "] " + format;
  Logv(prefixed.c_str(), ap);
}

void Log(InfoLogLevel log_level, Logger* info_log, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  LogvTo(info_log, log_level, format, ap);
  va_end(ap);
}

void Log(InfoLogLevel log_level, const std::shared_ptr<Logger>& info_log, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  LogvTo(info_log.get(), log_level, format, ap);
  va_end(ap);
}

#define SHALE_DEFINE_LEVEL_LOG(name, level)                                     \
  void name(const std::shared_ptr<Logger>& info_log, const char* format, ...) { \
    va_list ap;                                                                 \
    va_start(ap, format);                                                       \
    LogvTo(info_log.get(), level, format, ap);                                  \
    va_end(ap);                                                                 \
  }
SHALE_DEFINE_LEVEL_LOG(Header, HEADER_LEVEL)
SHALE_DEFINE_LEVEL_LOG(Debug, DEBUG_LEVEL)
SHALE_DEFINE_LEVEL_LOG(Info, INFO_LEVEL)
SHALE_DEFINE_LEVEL_LOG(Warn, WARN_LEVEL)
SHALE_DEFINE_LEVEL_LOG(Error, ERROR_LEVEL)
SHALE_DEFINE_LEVEL_LOG(Fatal, FATAL_LEVEL)
#undef SHALE_DEFINE_LEVEL_LOG

}  // namespace shale
