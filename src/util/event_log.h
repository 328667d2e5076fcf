// EventLog: one machine-readable line of the info log, RocksDB's form:
//   EVENT_LOG_v1 {"time_micros": <wall clock>, "job": <n>, "event": "<name>", ...}
// a JSON object whose fields keep the order they were added in. Values are integers, numbers,
// strings (escaped as JSON requires) or arrays of integers. docs/info-log.md lists the events
// and their fields.
// Thread safety: one per message, on one thread.
// Ownership: a temporary value that owns the line it builds; Write hands the text to the
// Logger, which copies it.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shale/logger.h"
#include "src/util/clock.h"
#include "src/util/logging.h"

namespace shale {

class EventLog {
 public:
  EventLog(std::string_view event, uint64_t job) : line_("EVENT_LOG_v1 {") {
    Add("time_micros", WallClockMicros());
    Add("job", job);
    Add("event", event);
  }

  template <typename T>
  EventLog& Add(std::string_view name, const T& value) {
    Name(name);
    if constexpr (std::is_same_v<T, bool>) {
      line_ += value ? "true" : "false";
    } else if constexpr (std::is_arithmetic_v<T>) {
      fmt::format_to(std::back_inserter(line_), "{}", value);
    } else {
      Quote(std::string_view(value));
    }
    return *this;
  }
  EventLog& Add(std::string_view name, const std::vector<uint64_t>& values) {
    Name(name);
    fmt::format_to(std::back_inserter(line_), "[{}]", fmt::join(values, ", "));
    return *this;
  }
  EventLog& Add(std::string_view name, const std::vector<int>& values) {
    Name(name);
    fmt::format_to(std::back_inserter(line_), "[{}]", fmt::join(values, ", "));
    return *this;
  }

  // Writes the line at INFO level (nothing without a logger).
  void Write(Logger* info_log) {
    if (info_log == nullptr || !info_log->Enabled(INFO_LEVEL)) return;
    line_ += '}';
    Log(INFO_LEVEL, info_log, "%s", line_.c_str());
  }

 private:
  void Name(std::string_view name) {
    if (line_.back() != '{') line_ += ", ";
    Quote(name);
    line_ += ": ";
  }
  void Quote(std::string_view s) {
    line_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        line_ += '\\';
        line_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        fmt::format_to(std::back_inserter(line_), "\\u{:04x}", static_cast<unsigned char>(c));
      } else {
        line_ += c;
      }
    }
    line_ += '"';
  }

  std::string line_;
};

}  // namespace shale
