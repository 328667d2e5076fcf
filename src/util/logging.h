// The library's own messages to an info log (shale/logger.h), formatted with fmt and only when
// the logger writes the level: a DB without a logger, or one set above the level, pays one
// branch.
// Thread safety: as the logger's.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

#include "shale/logger.h"

namespace shale {

template <typename... Args>
void LogTo(Logger* info_log, InfoLogLevel level, fmt::format_string<Args...> format,
           Args&&... args) {
  if (info_log == nullptr || !info_log->Enabled(level)) return;
  const std::string message = fmt::format(format, std::forward<Args>(args)...);
  Log(level, info_log, "%s", message.c_str());
}

template <typename... Args>
void LogInfo(Logger* info_log, fmt::format_string<Args...> format, Args&&... args) {
  LogTo(info_log, INFO_LEVEL, format, std::forward<Args>(args)...);
}
template <typename... Args>
void LogWarn(Logger* info_log, fmt::format_string<Args...> format, Args&&... args) {
  LogTo(info_log, WARN_LEVEL, format, std::forward<Args>(args)...);
}
template <typename... Args>
void LogError(Logger* info_log, fmt::format_string<Args...> format, Args&&... args) {
  LogTo(info_log, ERROR_LEVEL, format, std::forward<Args>(args)...);
}
template <typename... Args>
void LogHeader(Logger* info_log, fmt::format_string<Args...> format, Args&&... args) {
  LogTo(info_log, HEADER_LEVEL, format, std::forward<Args>(args)...);
}

}  // namespace shale
