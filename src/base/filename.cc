#include "src/base/filename.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>

namespace shale {
namespace {

std::string Numbered(const std::string& dbname, uint64_t number, const char* suffix) {
  return fmt::format("{}/{:06}.{}", dbname, number, suffix);
}

// Parses all of s as a decimal number.
bool ParseNumber(std::string_view s, uint64_t* number) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *number);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }
std::string IdentityFileName(const std::string& dbname) { return dbname + "/IDENTITY"; }
std::string LogFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "log");
}
std::string TableFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "sst");
}
std::string ManifestFileName(const std::string& dbname, uint64_t number) {
  return fmt::format("{}/MANIFEST-{:06}", dbname, number);
}
std::string CurrentFileName(const std::string& dbname) { return dbname + "/CURRENT"; }
std::string TempFileName(const std::string& dbname, uint64_t number) {
  return Numbered(dbname, number, "dbtmp");
}

std::string InfoLogDir(const std::string& dbname, const std::string& db_log_dir) {
  return db_log_dir.empty() ? dbname : db_log_dir;
}

std::string InfoLogName(const std::string& dbname, const std::string& db_log_dir) {
  if (db_log_dir.empty()) return "LOG";
  std::error_code ec;
  std::string prefix = std::filesystem::absolute(dbname, ec).lexically_normal().string();
  if (ec) prefix = dbname;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  for (char& c : prefix) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.';
    if (!kept) c = '_';
  }
  return prefix + "_LOG";
}

std::string InfoLogFileName(const std::string& dbname, const std::string& db_log_dir) {
  return InfoLogDir(dbname, db_log_dir) + "/" + InfoLogName(dbname, db_log_dir);
}

std::string OldInfoLogFileName(const std::string& dbname, const std::string& db_log_dir,
                               uint64_t micros) {
  return fmt::format("{}.old.{}", InfoLogFileName(dbname, db_log_dir), micros);
}

bool ParseInfoLogName(const std::string& entry, const std::string& log_name, uint64_t* micros) {
  std::string_view s(entry);
  *micros = 0;
  if (!s.starts_with(log_name)) return false;
  s.remove_prefix(log_name.size());
  if (s.empty()) return true;
  return s.starts_with(".old.") && ParseNumber(s.substr(5), micros);
}

bool ParseFileName(const std::string& name, uint64_t* number, FileType* type) {
  std::string_view s(name);
  *number = 0;
  if (ParseInfoLogName(name, "LOG", number)) {
    *type = FileType::kInfoLog;
    return true;
  }
  if (s == "LOCK") {
    *type = FileType::kLock;
    return true;
  }
  if (s == "IDENTITY") {
    *type = FileType::kIdentity;
    return true;
  }
  if (s == "CURRENT") {
    *type = FileType::kCurrent;
    return true;
  }
  if (s.starts_with("MANIFEST-")) {
    *type = FileType::kManifest;
    return ParseNumber(s.substr(9), number);
  }
  size_t dot = s.find('.');
  if (dot == std::string_view::npos || !ParseNumber(s.substr(0, dot), number)) return false;
  std::string_view suffix = s.substr(dot + 1);
  if (suffix == "log") {
    *type = FileType::kLog;
  } else if (suffix == "sst") {
    *type = FileType::kTable;
  } else if (suffix == "dbtmp") {
    *type = FileType::kTemp;
  } else {
    return false;
  }
  return true;
}

Status ParseCurrentFile(const std::string& dbname, const Slice& contents,
                        std::string* manifest_name, uint64_t* manifest_number) {
  if (contents.empty() || contents[contents.size() - 1] != '\n') {
    return Status::Corruption("CURRENT is empty or does not end in a newline", dbname);
  }
  std::string name(contents.data(), contents.size() - 1);
  FileType type;
  if (!ParseFileName(name, manifest_number, &type) || type != FileType::kManifest) {
    return Status::Corruption("CURRENT does not name a MANIFEST: " + name, dbname);
  }
  *manifest_name = std::move(name);
  return Status::OK();
}

}  // namespace shale
