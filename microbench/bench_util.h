// Helpers shared by the DB-level microbenchmarks: scratch directories and key formatting.
// Thread safety: the free functions keep no shared state; a ScopedDir belongs to one benchmark.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace shale::bench {

// A fresh (emptied) directory under the system temp directory.
inline std::string FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("shale_bench_" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

// A FreshDir that is removed, with everything in it, when the ScopedDir is destroyed, so every
// return path of a benchmark cleans up. Declare it before the DB that lives in it: the DB is
// then destroyed (closed) first.
// Ownership: owns the directory on disk. Thread safety: none; one benchmark owns it.
class ScopedDir {
 public:
  explicit ScopedDir(const std::string& name) : path_(FreshDir(name)) {}
  ~ScopedDir() {
    std::error_code ignored;  // cleanup is best effort: a destructor cannot report failure
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedDir(const ScopedDir&) = delete;
  ScopedDir& operator=(const ScopedDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// 16 decimal digits, so byte order equals numeric order.
inline std::string KeyOf(uint64_t i) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llu", static_cast<unsigned long long>(i));
  return buf;
}

}  // namespace shale::bench
