// Names of the files in a DB directory:
//   LOCK             advisory lock held while the DB is open
//   IDENTITY         marks the directory as a shale DB (written at creation)
//   NNNNNN.log       write-ahead logs, replayed in number order at Open
//   NNNNNN.sst       table files
//   MANIFEST-NNNNNN  version edit logs; CURRENT names the live one
//   LOG              the info log (shale/logger.h), and LOG.old.<micros>: earlier ones, named
//                    by the wall-clock time (microseconds since the epoch) they were set aside
//                    at. With Options::db_log_dir they are in that directory instead, named
//                    <prefix>_LOG and <prefix>_LOG.old.<micros>, where the prefix is the DB's
//                    absolute path with every character other than a letter, a digit, '-' and
//                    '.' replaced by '_' (one directory can then hold the logs of many DBs).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

enum class FileType { kLock, kIdentity, kLog, kTable, kManifest, kCurrent, kTemp, kInfoLog };

std::string LockFileName(const std::string& dbname);
std::string IdentityFileName(const std::string& dbname);
std::string LogFileName(const std::string& dbname, uint64_t number);
std::string TableFileName(const std::string& dbname, uint64_t number);
std::string ManifestFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string TempFileName(const std::string& dbname, uint64_t number);
// The directory that holds dbname's info logs, and the name (no directory) they start with:
// "LOG", or "<prefix>_LOG" with db_log_dir (see above).
std::string InfoLogDir(const std::string& dbname, const std::string& db_log_dir);
std::string InfoLogName(const std::string& dbname, const std::string& db_log_dir);
// Full paths of the live info log and of an old one.
std::string InfoLogFileName(const std::string& dbname, const std::string& db_log_dir);
std::string OldInfoLogFileName(const std::string& dbname, const std::string& db_log_dir,
                               uint64_t micros);
// Parses an entry of the info logs' directory: true for the live log (*micros 0) and old ones
// (*micros their time) of the logs named log_name.
bool ParseInfoLogName(const std::string& entry, const std::string& log_name, uint64_t* micros);

// Parses a directory entry name; false for names shale does not own. LOG and LOG.old.<micros>
// are kInfoLog (*number 0, or the micros).
bool ParseFileName(const std::string& name, uint64_t* number, FileType* type);

// Parses the contents of dbname's CURRENT file: the file name (no directory) of the live
// MANIFEST and a newline, "MANIFEST-NNNNNN\n". On success *manifest_name is that name without
// the newline and *manifest_number its number. Corruption (naming dbname) when the contents are
// empty, do not end in a newline, or do not name a MANIFEST.
[[nodiscard]] Status ParseCurrentFile(const std::string& dbname, const Slice& contents,
                                      std::string* manifest_name, uint64_t* manifest_number);

}  // namespace shale
