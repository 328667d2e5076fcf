// Test fixture helpers for DB-level suites: a scratch directory, open/reopen/close, and
// string-returning Get. Thread safety: the fixture is used from the test thread; the DB it
// holds may be shared with threads the test starts.
#pragma once

#include <gtest/gtest.h>

#include <cstdarg>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/logger.h"
#include "shale/merge_operator.h"

namespace shale::test {

// A fresh directory under the gtest temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A Logger that keeps every message in memory (the level filter is the Logger base's): for
// tests that read what a DB logged, or that keep its info log off a faulty file system.
// Thread safety: every method may be called concurrently (the messages are guarded by mu_).
// Ownership: shared with the DB through Options::info_log; it owns copies of the messages.
class MemoryLogger : public Logger {
 public:
  explicit MemoryLogger(InfoLogLevel level = INFO_LEVEL) : Logger(level) {}
  using Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  std::vector<std::string> messages() const;
  // Whether some message contains needle.
  bool Has(const std::string& needle) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> messages_;
};

// "key000042": fixed width, so byte order is numeric order.
std::string NumberedKey(uint64_t i);

// Runs a shell command; its exit status (-1 if it did not exit normally) and its stdout and
// stderr together.
struct RunResult {
  int exit_code;
  std::string output;
};
RunResult RunCommand(const std::string& command);

class DBTestBase : public ::testing::Test {
 protected:
  DBTestBase();
  ~DBTestBase() override;

  // Opens dbname_ with options_ (create_if_missing set by default).
  Status TryOpen();
  void Open() {
    Status s = TryOpen();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Reopen() {
    Close();
    Open();
  }
  void Close();

  Status Put(const std::string& k, const std::string& v, bool sync = false);
  Status Delete(const std::string& k);
  Status Merge(const std::string& k, const std::string& v);
  // The value, "NOT_FOUND", or the error text.
  std::string Get(const std::string& k, const Snapshot* snapshot = nullptr);
  // "k1=v1 k2=v2 ..." over a whole forward scan.
  std::string Contents(const Snapshot* snapshot = nullptr);

  ScratchDir dir_;
  std::string dbname_;
  Options options_;
  std::unique_ptr<DB> db_;
};

}  // namespace shale::test
