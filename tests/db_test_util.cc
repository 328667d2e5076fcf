#include "tests/db_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <random>

namespace shale::test {

std::string NumberedKey(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "key%06llu", static_cast<unsigned long long>(i));
  return buf;
}

RunResult RunCommand(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  RunResult r{-1, ""};
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path_ = ::testing::TempDir() + "shale_test_" + std::to_string(getpid()) + "_" +
          std::to_string(counter++) + "_" + std::to_string(rd());
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

DBTestBase::DBTestBase() : dbname_(dir_.path() + "/db") { options_.create_if_missing = true; }

DBTestBase::~DBTestBase() { Close(); }

Status DBTestBase::TryOpen() {
  db_.reset();
  return DB::Open(options_, dbname_, &db_);
}

void DBTestBase::Close() {
  if (db_ != nullptr) {
    Status s = db_->Close();
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset();
  }
}

Status DBTestBase::Put(const std::string& k, const std::string& v, bool sync) {
  WriteOptions wo;
  wo.sync = sync;
  return db_->Put(wo, k, v);
}

Status DBTestBase::Delete(const std::string& k) { return db_->Delete(WriteOptions(), k); }

Status DBTestBase::Merge(const std::string& k, const std::string& v) {
  return db_->Merge(WriteOptions(), k, v);
}

std::string DBTestBase::Get(const std::string& k, const Snapshot* snapshot) {
  ReadOptions ro;
  ro.snapshot = snapshot;
  std::string value;
  Status s = db_->Get(ro, k, &value);
  if (s.IsNotFound()) return "NOT_FOUND";
  if (!s.ok()) return s.ToString();
  return value;
}

std::string DBTestBase::Contents(const Snapshot* snapshot) {
  ReadOptions ro;
  ro.snapshot = snapshot;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  std::string r;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!r.empty()) r += ' ';
    r += it->key().ToString() + "=" + it->value().ToString();
  }
  if (!it->status().ok()) r += " ERROR:" + it->status().ToString();
  return r;
}

void MemoryLogger::Logv(const char* format, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string message(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(message.data(), message.size() + 1, format, ap);
  std::lock_guard<std::mutex> l(mu_);
  messages_.push_back(std::move(message));
}

std::vector<std::string> MemoryLogger::messages() const {
  std::lock_guard<std::mutex> l(mu_);
  return messages_;
}

bool MemoryLogger::Has(const std::string& needle) const {
  std::lock_guard<std::mutex> l(mu_);
  for (const std::string& m : messages_) {
    if (m.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace shale::test
