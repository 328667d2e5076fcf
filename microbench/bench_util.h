// Helpers shared by the DB-level microbenchmarks: scratch directories and key formatting.
// Thread safety: free functions without shared state.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace shale::bench {

// A fresh (emptied) directory under the system temp directory.
inline std::string FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("shale_bench_" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

// 16 decimal digits, so byte order equals numeric order.
inline std::string KeyOf(uint64_t i) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llu", static_cast<unsigned long long>(i));
  return buf;
}

}  // namespace shale::bench
