// The options a DB was opened with, written to its info log at Open: one line per option,
// "Options.<name>: <value>" (RocksDB's form), DB-wide ones first, then each column family's
// under a line naming it. Objects appear by their Name() (a cache also by its capacity), or as
// "None" when not set.
// Thread safety: pure functions of their arguments (the logger's own).
#pragma once

#include <string>

#include "shale/logger.h"
#include "shale/options.h"

namespace shale {

void LogDBOptions(Logger* info_log, const DBOptions& options);
void LogFamilyOptions(Logger* info_log, const std::string& family,
                      const ColumnFamilyOptions& options);

}  // namespace shale
