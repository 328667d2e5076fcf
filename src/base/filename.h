// Names of the files in a DB directory:
//   LOCK             advisory lock held while the DB is open
//   IDENTITY         marks the directory as a shale DB (written at creation)
//   NNNNNN.log       write-ahead logs, replayed in number order at Open
//   NNNNNN.sst       table files
//   MANIFEST-NNNNNN  version edit logs; CURRENT names the live one
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

enum class FileType { kLock, kIdentity, kLog, kTable, kManifest, kCurrent, kTemp };

std::string LockFileName(const std::string& dbname);
std::string IdentityFileName(const std::string& dbname);
std::string LogFileName(const std::string& dbname, uint64_t number);
std::string TableFileName(const std::string& dbname, uint64_t number);
std::string ManifestFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string TempFileName(const std::string& dbname, uint64_t number);

// Parses a directory entry name; false for names shale does not own.
bool ParseFileName(const std::string& name, uint64_t* number, FileType* type);

// Parses the contents of dbname's CURRENT file: the file name (no directory) of the live
// MANIFEST and a newline, "MANIFEST-NNNNNN\n". On success *manifest_name is that name without
// the newline and *manifest_number its number. Corruption (naming dbname) when the contents are
// empty, do not end in a newline, or do not name a MANIFEST.
[[nodiscard]] Status ParseCurrentFile(const std::string& dbname, const Slice& contents,
                                      std::string* manifest_name, uint64_t* manifest_number);

}  // namespace shale
