// IO errors at docs/reliability.md's rates during a randomized workload: read faults 1 in 32,
// write and fsync faults 1 in 128. Background work is driven from the test thread (explicit
// Flush and CompactRange, no automatic compactions), so every file-system operation belongs to
// one API call, and every call during which a fault was injected must report a non-OK status.
// Results that are OK must agree with a model of the acknowledged writes (a write that failed
// may or may not have happened). A failed write leaves the DB read-only until Resume(); after
// all of it, a reopen without faults has every acknowledged write.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "src/util/random.h"
#include "tests/db_test_util.h"
#include "tests/fault_injection_fs.h"

namespace shale::test {
namespace {

constexpr char kDbName[] = "/db";
constexpr int kKeys = 200;

std::string KeyOf(uint64_t k) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05llu", static_cast<unsigned long long>(k));
  return buf;
}

// What a key may hold: its acknowledged value (nullopt: absent) and, after failed writes, the
// values those may have left.
struct KeyModel {
  std::optional<std::string> acked;
  std::vector<std::optional<std::string>> maybe;
  bool Allows(const std::optional<std::string>& v) const {
    if (v == acked) return true;
    for (const auto& m : maybe) {
      if (v == m) return true;
    }
    return false;
  }
};

class DBIOErrorTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<FaultInjectionFileSystem>(GetParam());
    ASSERT_TRUE(fs_->CreateDirIfMissing(kDbName).ok());
    options_.create_if_missing = true;
    options_.file_system = fs_;
    // The DB's messages go to memory: a failed write of a LOG file is by design nobody's error
    // (docs/info-log.md), so the file stays off the faulty file system.
    options_.info_log = logger_;
    options_.disable_auto_compactions = true;
    options_.write_buffer_size = 1 << 20;          // switches only at the explicit flushes
    options_.block_cache = NewLRUCache(64 << 10);  // small: reads keep reaching the files
    ASSERT_TRUE(DB::Open(options_, kDbName, &db_).ok());
  }

  void FaultsOn() {
    fs_->SetErrorRate(FaultOp::kRead, 32);
    fs_->SetErrorRate(FaultOp::kWrite, 128);
    fs_->SetErrorRate(FaultOp::kSync, 128);
  }

  // Runs one call; if a fault was injected during it, its status must not be OK.
  template <typename F>
  Status Call(const char* what, F&& call) {
    const uint64_t before = fs_->TotalInjected();
    Status s = call();
    const uint64_t injected = fs_->TotalInjected() - before;
    calls_++;
    if (injected > 0) {
      faulted_calls_++;
      injected_ += injected;
      EXPECT_TRUE(!s.ok() && !s.IsNotFound())
          << what << ": " << injected << " fault(s) injected, status " << s.ToString();
    }
    if (!s.ok() && !s.IsNotFound()) failed_calls_++;
    // Nothing failed underneath: the call must not fail either (no error sticks around).
    if (injected == 0 && !s.ok() && !s.IsNotFound()) {
      ADD_FAILURE() << what << " failed with no fault injected: " << s.ToString();
    }
    return s;
  }

  void CheckValue(uint64_t k, const Status& s, const Slice& value) {
    if (!s.ok() && !s.IsNotFound()) return;  // an error: checked by Call
    std::optional<std::string> got;
    if (s.ok()) got = value.ToString();
    EXPECT_TRUE(model_[k].Allows(got))
        << KeyOf(k) << " read " << (got ? *got : "<absent>") << ", acknowledged "
        << (model_[k].acked ? *model_[k].acked : "<absent>");
  }

  std::shared_ptr<FaultInjectionFileSystem> fs_;
  std::shared_ptr<MemoryLogger> logger_ = std::make_shared<MemoryLogger>();
  Options options_;
  std::unique_ptr<DB> db_;
  std::map<uint64_t, KeyModel> model_;
  uint64_t calls_ = 0, faulted_calls_ = 0, failed_calls_ = 0, injected_ = 0;
  uint64_t read_only_checks_ = 0, resumes_ = 0;
};

TEST_P(DBIOErrorTest, EveryInjectedErrorReachesACallerAndNoAcknowledgedWriteIsLost) {
  Random rnd(GetParam());
  FaultsOn();
  for (int op = 0; op < 3000; op++) {
    const uint64_t choice = rnd.Uniform(100);
    if (choice < 40) {  // a write (sometimes synced)
      const uint64_t k = rnd.Uniform(kKeys);
      const bool del = rnd.OneIn(6);
      const std::string value = "v" + std::to_string(op) + std::string(rnd.Uniform(300), 'x');
      WriteOptions wo;
      wo.sync = rnd.OneIn(4);
      Status s = Call(
          "write", [&] { return del ? db_->Delete(wo, KeyOf(k)) : db_->Put(wo, KeyOf(k), value); });
      std::optional<std::string> written;
      if (!del) written = value;
      if (s.ok()) {
        model_[k] = KeyModel{written, {}};
        continue;
      }
      model_[k].maybe.push_back(written);
      // Read-only now: a write fails without touching the files, reads still work.
      fs_->DisableAllFaults();
      EXPECT_TRUE(db_->Put(WriteOptions(), KeyOf(k), "never").IsIOError());
      read_only_checks_++;
      PinnableSlice v;
      Status r = db_->Get(ReadOptions(), KeyOf(k), &v);
      EXPECT_TRUE(r.ok() || r.IsNotFound()) << r.ToString();
      CheckValue(k, r, v);
      // Resume, retrying while the device still fails.
      FaultsOn();
      Status resumed;
      for (int attempt = 0; attempt < 20; attempt++) {
        resumed = Call("resume", [&] { return db_->Resume(); });
        if (resumed.ok()) break;
      }
      if (!resumed.ok()) {
        fs_->DisableAllFaults();
        ASSERT_TRUE(db_->Resume().ok());
        FaultsOn();
      }
      resumes_++;
    } else if (choice < 70) {  // Get
      const uint64_t k = rnd.Uniform(kKeys);
      PinnableSlice v;
      Status s = Call("get", [&] { return db_->Get(ReadOptions(), KeyOf(k), &v); });
      CheckValue(k, s, v);
    } else if (choice < 82) {  // MultiGet
      const size_t n = 1 + rnd.Uniform(16);
      std::vector<uint64_t> ks(n);
      std::vector<std::string> storage(n);
      std::vector<Slice> keys(n);
      for (size_t i = 0; i < n; i++) {
        ks[i] = rnd.Uniform(kKeys);
        keys[i] = storage[i] = KeyOf(ks[i]);
      }
      std::vector<PinnableSlice> values(n);
      std::vector<Status> statuses(n);
      ReadOptions ro;
      ro.async_io = rnd.OneIn(2);
      // One call, many statuses: a fault must show in at least one of them.
      Call("multiget", [&] {
        db_->MultiGet(ro, n, keys.data(), values.data(), statuses.data());
        for (const Status& st : statuses) {
          if (!st.ok() && !st.IsNotFound()) return st;
        }
        return Status::OK();
      }).PermitUncheckedError();  // checked inside Call
      for (size_t i = 0; i < n; i++) CheckValue(ks[i], statuses[i], values[i]);
    } else if (choice < 92) {  // a scan, from the start or from a seek (its reads batched)
      std::map<uint64_t, std::string> seen;
      const uint64_t from = rnd.OneIn(2) ? rnd.Uniform(kKeys) : 0;
      Status s = Call("scan", [&] {
        std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
        if (from == 0) {
          it->SeekToFirst();
        } else {
          it->Seek(KeyOf(from));
        }
        for (; it->Valid(); it->Next()) {
          seen[std::stoull(it->key().ToString().substr(3))] = it->value().ToString();
        }
        return it->status();
      });
      if (s.ok()) {
        for (uint64_t k = from; k < kKeys; k++) {
          auto f = seen.find(k);
          CheckValue(k, f == seen.end() ? Status::NotFound() : Status::OK(),
                     f == seen.end() ? Slice() : Slice(f->second));
        }
      }
    } else if (choice < 97) {  // flush
      Call("flush", [&] { return db_->Flush(FlushOptions()); }).PermitUncheckedError();
    } else {  // compaction
      Call("compact", [&] {
        return db_->CompactRange(CompactRangeOptions(), nullptr, nullptr);
      }).PermitUncheckedError();
    }
    // A failed flush or compaction also leaves the DB read-only: resume with faults off.
    if (choice >= 92) {
      fs_->DisableAllFaults();
      Status r = db_->Resume();
      ASSERT_TRUE(r.ok()) << r.ToString();
      FaultsOn();
    }
  }
  fs_->DisableAllFaults();
  std::printf(
      "figure: IO errors, seed %llu: %llu calls, %llu faults injected in %llu calls, all of which "
      "failed "
      "(%llu failed calls in all), %llu read-only checks, %llu resumes\n",
      static_cast<unsigned long long>(GetParam()), static_cast<unsigned long long>(calls_),
      static_cast<unsigned long long>(injected_), static_cast<unsigned long long>(faulted_calls_),
      static_cast<unsigned long long>(failed_calls_),
      static_cast<unsigned long long>(read_only_checks_),
      static_cast<unsigned long long>(resumes_));
  EXPECT_GT(faulted_calls_, 50u);  // the rates did bite
  EXPECT_GT(resumes_, 5u);
  // The errors that made the DB read-only were logged, and so were the resumes.
  EXPECT_TRUE(logger_->Has("Background error, the DB is read-only until Resume: IO error"));
  EXPECT_TRUE(logger_->Has("Resumed after a background error"));

  // Reopen without faults: every acknowledged write is there (failed ones may be too).
  ASSERT_TRUE(db_->Close().ok());
  db_.reset();
  ASSERT_TRUE(DB::Open(options_, kDbName, &db_).ok());
  for (uint64_t k = 0; k < kKeys; k++) {
    PinnableSlice v;
    Status s = db_->Get(ReadOptions(), KeyOf(k), &v);
    ASSERT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
    CheckValue(k, s, v);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, DBIOErrorTest, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace shale::test
