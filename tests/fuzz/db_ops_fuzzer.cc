// Operation sequences on a real DB, checked against a std::map model.
//
// The bytes are an options byte and then up to 200 operations (format in db_ops_format.h):
// puts, deletes, string-append merges, write batches, gets, multi-gets, iterator walks, full
// scans, flushes, range compactions, reopens, snapshots and reads at them, merge-operand reads,
// WAL syncs, waits for background work and (on the in-memory file system) simulated power
// losses. The DB is tiny (4 KiB or 32 KiB write buffer, 256-byte blocks, 4 KiB files, 4
// levels) so that flushes and compactions happen within a few operations. It lives in a fresh
// in-memory file system or temporary directory, removed at the end of each input.
// SHALE_FUZZ_VERBOSE=1 prints each operation, its time and the LSM shape after it.
//
// What must hold (any mismatch aborts with a message):
//   - every write succeeds; every read (Get, MultiGet, iterator position, merge operands, at the
//     latest state or a snapshot) matches the model, and iterators report OK;
//   - Flush, CompactRange, SyncWAL, WaitForCompact, Close and Open succeed;
//   - after Close + Open the DB holds exactly the model;
//   - after a power loss that drops unsynced data (optionally also reverting directory entries
//     to their last fsync) Open succeeds and the DB holds the state after some write at or after
//     the last synced one (a sync-write or SyncWAL): synced writes survive and the survivors are
//     a prefix of the history.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/iterator.h"
#include "shale/merge_operator.h"
#include "shale/options.h"
#include "shale/write_batch.h"
#include "tests/fault_injection_fs.h"
#include "tests/fuzz/db_ops_format.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using shale::Slice;
using shale::Status;
using shale::fuzz::DbOp;
using shale::fuzz::Fail;

using Model = std::map<std::string, std::string>;

constexpr const char* kOpNames[] = {
    "Put",      "SyncPut",      "Delete",        "Merge",   "Batch",          "Get",
    "MultiGet", "Iterate",      "Scan",          "Flush",   "CompactRange",   "Reopen",
    "Snapshot", "SnapshotRead", "MergeOperands", "SyncWAL", "WaitForCompact", "Crash"};
static_assert(std::size(kOpNames) == static_cast<size_t>(DbOp::kNumOps));

// See SHALE_FUZZ_VERBOSE above.
bool Verbose() {
  static const bool verbose = std::getenv("SHALE_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

void ApplyMerge(Model* m, const std::string& key, const std::string& operand) {
  auto it = m->find(key);
  if (it == m->end()) {
    (*m)[key] = operand;
  } else {
    it->second += "," + operand;
  }
}

std::string Printable(const std::string& s) { return Slice(s).ToString(/*hex=*/true); }

// A value for messages: short ones whole, long ones by length, head and tail.
std::string Brief(const std::string& v) {
  if (v.size() <= 40) return Printable(v);
  return std::to_string(v.size()) + " bytes " + Printable(v.substr(0, 16)) + ".." +
         Printable(v.substr(v.size() - 16));
}

// The keys on which got and want differ.
std::string Diff(const Model& got, const Model& want) {
  Model keys = got;
  keys.insert(want.begin(), want.end());
  std::string out;
  for (const auto& [k, unused] : keys) {
    auto g = got.find(k);
    auto w = want.find(k);
    const bool same =
        (g == got.end()) == (w == want.end()) && (g == got.end() || g->second == w->second);
    if (!same) {
      out += " [" + Printable(k) + ": DB " + (g == got.end() ? "absent" : Brief(g->second)) +
             ", model " + (w == want.end() ? "absent" : Brief(w->second)) + "]";
    }
  }
  return out.empty() ? " (none)" : out;
}

// Reads operands from the fuzzer input; bytes past the end read as zero.
// Thread safety: one thread. Does not own the bytes.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::string Key() { return std::string(shale::fuzz::kKeys[Byte() % shale::fuzz::kNumKeys]); }
  std::string Value(int op) {
    const uint8_t len = Byte();
    if (len >= shale::fuzz::kBigValue) {
      std::string v = std::to_string(op) + ":";
      v.resize(static_cast<size_t>(len - shale::fuzz::kBigValue + 1) * 32,
               static_cast<char>('a' + op % 26));
      return v;
    }
    const size_t n = std::min<size_t>(len % 48, size_ - std::min(pos_, size_));
    std::string v(reinterpret_cast<const char*>(data_) + std::min(pos_, size_), n);
    pos_ += n;
    return v;
  }

 private:
  const uint8_t* const data_;
  const size_t size_;
  size_t pos_ = 0;
};

// The per-process parent of the POSIX-mode DB directories, removed at exit.
const std::string& PosixBase() {
  static const std::string base = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string path =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/shale-db-ops-fuzzer.XXXXXX";
    if (mkdtemp(path.data()) == nullptr) Fail("mkdtemp failed for " + path);
    return path;
  }();
  static const bool registered = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(PosixBase(), ec);
    });
    return true;
  }();
  (void)registered;
  return base;
}

// One input's run: the DB, its model, the history since the last power loss and the held
// snapshots. Ownership: owns the DB and its file system. Thread safety: one thread (the DB's
// background threads only touch the DB).
class Runner {
 public:
  explicit Runner(uint8_t options_byte) : options_byte_(options_byte) {
    posix_ = (options_byte & 0x80) != 0;
    options_.create_if_missing = true;
    options_.merge_operator = shale::MergeOperators::CreateStringAppendOperator(',');
    options_.write_buffer_size = 4 << 10;  // about one arena block: a flush every few writes
    options_.max_background_jobs = 2;
    options_.target_file_size_base = 4 << 10;
    options_.max_bytes_for_level_base = 16 << 10;
    options_.level0_file_num_compaction_trigger = 2;
    options_.num_levels = 4;
    options_.block_size = 256;
    options_.block_restart_interval = 4;
    options_.max_manifest_file_size = 8 << 10;
    options_.block_cache = (options_byte & 0x30) == 0x30
                               ? shale::NewLRUCache(32 << 10)
                               : shale::HyperClockCacheOptions(32 << 10, 256).MakeSharedCache();
    options_.compression = (options_byte & 0x01) != 0 ? shale::CompressionType::kZSTD
                                                      : shale::CompressionType::kNoCompression;
    options_.bloom_bits_per_key = (options_byte & 0x02) != 0 ? 0 : 10;
    options_.avoid_flush_during_recovery = (options_byte & 0x04) != 0;
    options_.memtable_bloom_size_ratio = (options_byte & 0x08) != 0 ? 0 : 1.0 / 64;
    switch ((options_byte >> 4) & 3) {
      case 1:
        options_.wal_recovery_mode = shale::WALRecoveryMode::kAbsoluteConsistency;
        break;
      case 2:
        options_.wal_recovery_mode = shale::WALRecoveryMode::kPointInTimeRecovery;
        break;
      default:
        options_.wal_recovery_mode = shale::WALRecoveryMode::kTolerateCorruptedTailRecords;
        break;
    }
    if ((options_byte & 0x40) != 0) {
      // Memtables that hold many entries (and merge chains) before they are flushed.
      options_.write_buffer_size = 32 << 10;
      options_.max_background_jobs = 1;
    }
    if (posix_) {
      path_ = PosixBase() + "/db";
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    } else {
      fs_ = std::make_shared<shale::test::FaultInjectionFileSystem>(options_byte + 1);
      options_.file_system = fs_;
      path_ = "/db";
      if (!fs_->CreateDirIfMissing(path_).ok()) Fail("cannot create the in-memory directory");
    }
    history_.push_back(model_);
    Open();
  }

  ~Runner() {
    ReleaseSnapshots();
    if (db_ != nullptr) {
      Status s = db_->Close();
      if (!s.ok()) FailAt("Close: " + s.ToString());
      db_.reset();
    }
    if (posix_) {
      Status s = shale::DestroyDB(path_, options_);
      if (!s.ok()) FailAt("DestroyDB: " + s.ToString());
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }

  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void Step(int op_index, Input* in) {
    op_ = op_index;
    const auto op = static_cast<DbOp>(in->Byte() % static_cast<uint8_t>(DbOp::kNumOps));
    op_name_ = kOpNames[static_cast<size_t>(op)];
    const auto start = std::chrono::steady_clock::now();
    switch (op) {
      case DbOp::kPut:
      case DbOp::kSyncPut: {
        const std::string key = in->Key();
        const std::string value = in->Value(op_);
        shale::WriteOptions wo;
        wo.sync = op == DbOp::kSyncPut;
        Model next = model_;
        next[key] = value;
        Written(db_->Put(wo, key, value), std::move(next), wo.sync, "Put");
        break;
      }
      case DbOp::kDelete: {
        const std::string key = in->Key();
        Model next = model_;
        next.erase(key);
        Written(db_->Delete(shale::WriteOptions(), key), std::move(next), false, "Delete");
        break;
      }
      case DbOp::kMerge: {
        const std::string key = in->Key();
        const std::string operand = in->Value(op_);
        Model next = model_;
        ApplyMerge(&next, key, operand);
        Written(db_->Merge(shale::WriteOptions(), key, operand), std::move(next), false, "Merge");
        break;
      }
      case DbOp::kBatch: {
        const int n = 1 + in->Byte() % 8;
        shale::WriteBatch batch;
        Model next = model_;
        for (int i = 0; i < n; i++) {
          const int kind = in->Byte() % 3;
          const std::string key = in->Key();
          Status s;
          if (kind == 0) {
            const std::string value = in->Value(op_);
            s = batch.Put(key, value);
            next[key] = value;
          } else if (kind == 1) {
            s = batch.Delete(key);
            next.erase(key);
          } else {
            const std::string operand = in->Value(op_);
            s = batch.Merge(key, operand);
            ApplyMerge(&next, key, operand);
          }
          if (!s.ok()) FailAt("WriteBatch: " + s.ToString());
        }
        Written(db_->Write(shale::WriteOptions(), &batch), std::move(next), false, "Write");
        break;
      }
      case DbOp::kGet:
        CheckGet(shale::ReadOptions(), in->Key(), model_, "Get");
        break;
      case DbOp::kMultiGet: {
        const uint8_t b = in->Byte();
        std::vector<std::string> keys;
        for (int i = 0; i < 1 + (b & 0x7f) % 6; i++) keys.push_back(in->Key());
        CheckMultiGet(keys, (b & 0x80) != 0);
        break;
      }
      case DbOp::kIterate: {
        const uint8_t b = in->Byte();
        shale::ReadOptions ro;
        const Model* model = &model_;
        if ((b & 0x80) != 0 && !snapshots_.empty()) {
          const auto& snap = snapshots_[in->Byte() % snapshots_.size()];
          ro.snapshot = snap.first;
          model = &snap.second;
        }
        WalkIterator(ro, *model, 1 + (b & 0x7f) % 16, in);
        break;
      }
      case DbOp::kScan:
        CheckScan(shale::ReadOptions(), model_, "Scan");
        break;
      case DbOp::kFlush:
        Expect(db_->Flush(shale::FlushOptions()), "Flush");
        break;
      case DbOp::kCompactRange: {
        const uint8_t flags = in->Byte();
        std::optional<std::string> begin, end;
        if ((flags & 1) != 0) begin = in->Key();
        if ((flags & 2) != 0) end = in->Key();
        const Slice b = begin ? Slice(*begin) : Slice();
        const Slice e = end ? Slice(*end) : Slice();
        shale::CompactRangeOptions co;
        co.bottommost_level_compaction =
            static_cast<shale::BottommostLevelCompaction>((flags >> 2) & 3);
        const shale::Status s = db_->CompactRange(co, begin ? &b : nullptr, end ? &e : nullptr);
        if (begin && end && *begin > *end) {
          // An empty range the wrong way round is the caller's mistake (db.h).
          if (!s.IsInvalidArgument()) FailAt("CompactRange begin > end: " + s.ToString());
        } else {
          Expect(s, "CompactRange");
        }
        break;
      }
      case DbOp::kReopen:
        Reopen();
        break;
      case DbOp::kSnapshot: {
        const uint8_t which = in->Byte();
        if (snapshots_.size() < 4 && (which & 0x80) == 0) {
          snapshots_.emplace_back(db_->GetSnapshot(), model_);
        } else if (!snapshots_.empty()) {
          const size_t i = which % snapshots_.size();
          db_->ReleaseSnapshot(snapshots_[i].first);
          snapshots_.erase(snapshots_.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      }
      case DbOp::kSnapshotRead: {
        const uint8_t which = in->Byte();
        const std::string key = in->Key();
        if (snapshots_.empty()) break;
        const auto& snap = snapshots_[which % snapshots_.size()];
        shale::ReadOptions ro;
        ro.snapshot = snap.first;
        CheckGet(ro, key, snap.second, "Get at a snapshot");
        CheckScan(ro, snap.second, "Scan at a snapshot");
        break;
      }
      case DbOp::kMergeOperands: {
        const std::string key = in->Key();
        CheckMergeOperands(key, in->Byte() % 4 == 0 ? 1 : 64);
        break;
      }
      case DbOp::kSyncWAL:
        Expect(db_->SyncWAL(), "SyncWAL");
        durable_ = history_.size() - 1;
        break;
      case DbOp::kWaitForCompact:
        Expect(db_->WaitForCompact(), "WaitForCompact");
        break;
      case DbOp::kCrash: {
        const uint8_t flags = in->Byte();
        if (posix_) {
          Reopen();
        } else {
          Crash((flags & 1) != 0, (flags & 2) != 0);
        }
        break;
      }
      case DbOp::kNumOps:
        break;
    }
    if (Verbose()) {
      std::string levels;
      for (int level = 0; level < options_.num_levels; level++) {
        std::string n;
        if (!db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &n)) n = "?";
        levels += (level > 0 ? "," : "") + n;
      }
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start);
      std::fprintf(stderr, "op %d %s (%lld us): %zu keys, files per level %s\n", op_, op_name_,
                   static_cast<long long>(us.count()), model_.size(), levels.c_str());
    }
  }

  void Finish() {
    op_ = -1;
    op_name_ = "finish";
    CheckScan(shale::ReadOptions(), model_, "final scan");
  }

 private:
  [[noreturn]] void FailAt(const std::string& what) const {
    Fail("db_ops: options 0x" + Printable(std::string(1, static_cast<char>(options_byte_))) +
         (posix_ ? " (POSIX)" : " (in memory)") + ", op " + std::to_string(op_) + " " + op_name_ +
         ": " + what);
  }

  void Expect(const Status& s, const char* what) const {
    if (!s.ok()) FailAt(std::string(what) + ": " + s.ToString());
  }

  void Written(const Status& s, Model next, bool sync, const char* what) {
    Expect(s, what);
    model_ = std::move(next);
    history_.push_back(model_);
    if (sync) durable_ = history_.size() - 1;
  }

  void Open() {
    Status s = shale::DB::Open(options_, path_, &db_);
    if (!s.ok()) FailAt("Open: " + s.ToString());
  }

  void ReleaseSnapshots() {
    for (const auto& [snapshot, model] : snapshots_) db_->ReleaseSnapshot(snapshot);
    snapshots_.clear();
  }

  void Reopen() {
    ReleaseSnapshots();
    Expect(db_->Close(), "Close");
    db_.reset();
    Open();
    CheckScan(shale::ReadOptions(), model_, "Scan after reopen");
  }

  void Crash(bool revert_directories, bool wait) {
    if (wait) Expect(db_->WaitForCompact(), "WaitForCompact before a crash");
    ReleaseSnapshots();
    fs_->Crash(shale::test::CrashMode::kDropUnsynced, revert_directories);
    db_->Close().PermitUncheckedError();  // the handles are dead: errors are expected
    db_.reset();
    Open();
    const Model got = Scan(shale::ReadOptions(), "Scan after a crash");
    for (size_t i = history_.size(); i-- > durable_;) {
      if (history_[i] == got) {
        model_ = got;
        history_.assign(1, model_);
        durable_ = 0;
        return;
      }
    }
    FailAt(std::string("after a crash") + (revert_directories ? " reverting directories" : "") +
           " the DB holds no state from write " + std::to_string(durable_) +
           " (the last synced) to " + std::to_string(history_.size() - 1) +
           "; differences from the last synced state:" + Diff(got, history_[durable_]) +
           "; from the latest:" + Diff(got, model_));
  }

  void CheckGet(const shale::ReadOptions& ro, const std::string& key, const Model& model,
                const char* what) const {
    std::string value;
    Status s = db_->Get(ro, key, &value);
    auto it = model.find(key);
    if (s.IsNotFound()) {
      if (it != model.end()) FailAt(std::string(what) + " " + Printable(key) + ": NotFound");
      return;
    }
    Expect(s, what);
    if (it == model.end() || it->second != value) {
      FailAt(std::string(what) + " " + Printable(key) + ": got " + Printable(value) + ", model " +
             (it == model.end() ? "absent" : Printable(it->second)));
    }
  }

  void CheckMultiGet(const std::vector<std::string>& keys, bool async) const {
    shale::ReadOptions ro;
    ro.async_io = async;
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<std::string> values;
    std::vector<Status> statuses = db_->MultiGet(ro, slices, &values);
    if (statuses.size() != keys.size() || values.size() != keys.size()) {
      FailAt("MultiGet returned the wrong number of results");
    }
    for (size_t i = 0; i < keys.size(); i++) {
      auto it = model_.find(keys[i]);
      if (statuses[i].IsNotFound()) {
        if (it != model_.end()) FailAt("MultiGet " + Printable(keys[i]) + ": NotFound");
        continue;
      }
      Expect(statuses[i], "MultiGet");
      if (it == model_.end() || it->second != values[i]) {
        FailAt("MultiGet " + Printable(keys[i]) + ": got " + Printable(values[i]));
      }
    }
  }

  // The whole DB through an iterator, forward; a backward pass must give the same entries.
  Model Scan(const shale::ReadOptions& ro, const char* what) const {
    Model got;
    std::unique_ptr<shale::Iterator> it = db_->NewIterator(ro);
    std::string prev;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string key = it->key().ToString();
      if (!got.empty() && !(prev < key)) FailAt(std::string(what) + ": keys out of order");
      got.emplace(key, it->value().ToString());
      prev = std::move(key);
    }
    Expect(it->status(), what);
    auto expect = got.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++expect) {
      if (expect == got.rend() || it->key() != Slice(expect->first) ||
          it->value() != Slice(expect->second)) {
        FailAt(std::string(what) + ": backward scan differs from forward scan");
      }
    }
    Expect(it->status(), what);
    if (expect != got.rend()) FailAt(std::string(what) + ": backward scan ended early");
    return got;
  }

  void CheckScan(const shale::ReadOptions& ro, const Model& model, const char* what) const {
    const Model got = Scan(ro, what);
    if (got != model) {
      FailAt(std::string(what) + ": DB differs from the model:" + Diff(got, model));
    }
  }

  void WalkIterator(const shale::ReadOptions& ro, const Model& model, int steps, Input* in) {
    std::unique_ptr<shale::Iterator> it = db_->NewIterator(ro);
    auto pos = model.end();  // end(): not valid
    for (int i = 0; i < steps; i++) {
      int step = in->Byte() % 6;
      if (pos == model.end() && step >= 4) step -= 4;  // Next/Prev need a valid position
      const char* what = "";
      switch (step) {
        case 0:
          it->SeekToFirst();
          pos = model.begin();
          what = "SeekToFirst";
          break;
        case 1:
          it->SeekToLast();
          pos = model.empty() ? model.end() : std::prev(model.end());
          what = "SeekToLast";
          break;
        case 2: {
          const std::string target = in->Key();
          it->Seek(target);
          pos = model.lower_bound(target);
          what = "Seek";
          break;
        }
        case 3: {
          const std::string target = in->Key();
          it->SeekForPrev(target);
          auto ub = model.upper_bound(target);
          pos = ub == model.begin() ? model.end() : std::prev(ub);
          what = "SeekForPrev";
          break;
        }
        case 4:
          it->Next();
          ++pos;
          what = "Next";
          break;
        case 5:
          it->Prev();
          pos = pos == model.begin() ? model.end() : std::prev(pos);
          what = "Prev";
          break;
      }
      Expect(it->status(), what);
      if (it->Valid() != (pos != model.end())) {
        FailAt(std::string("iterator ") + what + (it->Valid() ? ": valid" : ": not valid") +
               ", model " + (pos != model.end() ? "at " + Printable(pos->first) : "at the end"));
      }
      if (pos != model.end() &&
          (it->key() != Slice(pos->first) || it->value() != Slice(pos->second))) {
        FailAt(std::string("iterator ") + what + ": at " + Printable(it->key().ToString()) +
               ", model at " + Printable(pos->first));
      }
    }
  }

  // Merge operands, oldest first (a base value first), joined by ',' give the model's value;
  // compaction may have combined some, so there are at most as many as the value has parts.
  void CheckMergeOperands(const std::string& key, int room) const {
    shale::GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = room;
    std::vector<shale::PinnableSlice> operands(64);
    int n = -1;
    Status s = db_->GetMergeOperands(shale::ReadOptions(), key, operands.data(), &gmo, &n);
    auto it = model_.find(key);
    if (it == model_.end()) {
      if (!s.IsNotFound()) FailAt("GetMergeOperands of an absent key: " + s.ToString());
      return;
    }
    const std::string& want = it->second;
    const int most = 1 + static_cast<int>(std::count(want.begin(), want.end(), ','));
    if (n < 1 || n > most) FailAt("GetMergeOperands: " + std::to_string(n) + " operands");
    if (n > room) {
      if (!s.IsIncomplete()) FailAt("GetMergeOperands without room: " + s.ToString());
      return;
    }
    Expect(s, "GetMergeOperands");
    std::string joined;
    for (int i = 0; i < n; i++) joined += (i > 0 ? "," : "") + operands[i].ToString();
    if (joined != want) {
      FailAt("GetMergeOperands of " + Printable(key) + " joined to " + Printable(joined) +
             ", model " + Printable(want));
    }
  }

  const uint8_t options_byte_;
  bool posix_ = false;
  shale::Options options_;
  std::string path_;
  std::shared_ptr<shale::test::FaultInjectionFileSystem> fs_;
  std::unique_ptr<shale::DB> db_;
  Model model_;
  // States after each write since the last power loss (history_[0]: the state then);
  // history_[durable_] is the newest one a sync made durable.
  std::vector<Model> history_;
  size_t durable_ = 0;
  std::vector<std::pair<const shale::Snapshot*, Model>> snapshots_;
  int op_ = -1;
  const char* op_name_ = "open";
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Input in(data + 1, size - 1);
  Runner runner(data[0]);
  for (int op = 0; op < shale::fuzz::kMaxOps && !in.empty(); op++) runner.Step(op, &in);
  runner.Finish();
  return 0;
}
