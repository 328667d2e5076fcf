// shale_stress: concurrent writers and readers against one DB, checked against an expected
// state kept outside the DB, so that a run killed at any moment (kill -9) can be reopened and
// verified. tools/crash_test.sh drives it in a loop.
//
//   shale_stress --db=DIR --expected_state=FILE [--writers=8 --readers=2 --duration=S ...]
//   shale_stress --db=DIR --expected_state=FILE --verify_only
//
// Keys are "k" + 8 digits in [0, --max_key); writer w owns the keys with key % writers == w, so
// each key has one writer and its history is a sequence of versions. A value is its version as
// 8 little-endian bytes, then bytes derived from (key, version): any wrong or torn value shows.
// Merges go through an operator that adds its operands to the version and rederives the bytes,
// so a merge is one more version too. Keys with key % 8 == 7 are written by Put and
// SingleDelete only, as SingleDelete's contract asks: Put while deleted, SingleDelete while live.
// A deletion is a Delete, or a DeleteRange over the key alone (to the next key: no key lies
// between), so range tombstones go through the WAL, flushes and compactions too.
//
// Expected-state file (mmap'ed, shared with the killed process through the page cache):
//   header: magic "SHSTRESS" (8 bytes), max_key (8), value_size (8)
//   then one 64-bit word per key: low 32 bits the committed state, high 32 bits the pending one.
//   A state is 0 (never written) or version << 1 | deleted.
// Before a write a writer stores the pending state; after the DB acknowledges it, the new state
// as committed with no pending. Every acknowledged write has reached the kernel (the WAL is
// written through on every group), so after kill -9 each key must hold its committed state, or
// its pending one if it has one: anything else is a lost write or an unexpected value.
//
// With --column_families=N (> 1) the DB holds the default family and N - 1 more ("cf1", ...):
// every write goes to each family in one batch (the same key and value, so each family keeps
// the same history), and verification requires every family to hold exactly what the default
// one holds: a batch that survived a crash in some families and not in others shows. Readers
// and CompactRange pick a family at random.
//
// Each run first verifies the whole DB (a full scan and a MultiGet of every key, checked
// against each other and the expected state), folds the pending states that survived into the
// committed ones, then runs until --duration or --ops_per_writer. While it runs, readers check
// Get, MultiGet and range scans against the states before and after each read. The seed is
// printed; --seed replays a run's choices (thread timing aside).
//
// Exit status: 0 verified (and ran), 1 verification or a read check failed, 2 bad flags,
// 3 the DB or the expected state could not be opened.
#include <fcntl.h>
#include <fmt/format.h>
#include <gflags/gflags.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/column_family.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/write_batch.h"
#include "src/util/coding.h"
#include "src/util/hash.h"
#include "src/util/random.h"
#include "tools/tool_flags.h"

DEFINE_string(db, "", "DB directory (required)");
DEFINE_string(expected_state, "", "Expected-state file, outside the DB (required)");
DEFINE_bool(verify_only, false, "Verify the DB against the expected state and exit");
DEFINE_bool(destroy, false, "Start from an empty DB and expected state");
DEFINE_int32(writers, 8, "Writer threads");
DEFINE_int32(readers, 2, "Reader threads");
DEFINE_uint64(max_key, 10000, "Key space: keys 0 .. max_key-1");
DEFINE_int32(value_size, 64, "Value size in bytes (>= 8)");
DEFINE_double(duration, 10, "Seconds to run after verifying (0: until --ops_per_writer)");
DEFINE_uint64(ops_per_writer, 0, "Operations per writer (0: until --duration)");
DEFINE_double(sync_fraction, 0.05, "Fraction of writes with sync = true");
DEFINE_uint64(seed, 0, "Random seed (0: from the clock); printed either way");
DEFINE_int64(write_buffer_size, 64 << 10, "Memtable size: small, so flushes and compactions run");
DEFINE_uint64(target_file_size_base, 256 << 10, "Table file size");
DEFINE_uint64(max_bytes_for_level_base, 1 << 20, "L1 size");
DEFINE_int32(max_background_jobs, 2, "Background jobs (4: up to 3 compactions at once)");
DEFINE_int32(subcompactions, 1, "Parts an L0 compaction is split into");
DEFINE_bool(level_compaction_dynamic_level_bytes, false, "Size levels from the bottom");
DEFINE_uint64(read_compaction_bytes_per_seek,
              shale::ColumnFamilyOptions().read_compaction_bytes_per_seek,
              "Seeks that find an L0 file over other sorted runs compact L0 after the file's "
              "size over this many of them (at least 100); 0: no read-triggered compactions");
DEFINE_bool(enable_write_thread_adaptive_yield, shale::Options().enable_write_thread_adaptive_yield,
            "Queued writers spin briefly before they sleep");
DEFINE_bool(enable_pipelined_write, shale::Options().enable_pipelined_write,
            "A write group's memtable insert overlaps the next group's WAL write");
DEFINE_string(cache_type, "hyper_clock_cache", "Block cache: hyper_clock_cache or lru_cache");
DEFINE_uint64(cache_size, 256 << 10,
              "Block cache capacity: small, so readers and writers evict blocks all the time");
DEFINE_int32(column_families, 1,
             "Column families (the default one and N - 1 more); every write goes to all");
DEFINE_bool(atomic_flush, false, "Flush column families together (Options::atomic_flush)");
DEFINE_uint32(memtable_max_range_deletions, 0,
              "Switch a memtable once it holds this many range tombstones (0: no limit)");
DEFINE_uint64(bytes_per_sync, 0, "Table files start writeback every this many bytes (0: off)");
DEFINE_uint64(max_sequential_skip_in_iterations, shale::Options().max_sequential_skip_in_iterations,
              "Iterators seek past a run of versions of one key longer than this");
DEFINE_uint64(compact_range_one_in, 0,
              "Each writer runs CompactRange over a random key range (random "
              "bottommost_level_compaction) once in this many operations (0: never)");

namespace shale::stress {
namespace {

constexpr char kMagic[8] = {'S', 'H', 'S', 'T', 'R', 'E', 'S', 'S'};
constexpr size_t kHeaderSize = 24;

uint32_t State(uint32_t version, bool deleted) { return version << 1 | (deleted ? 1 : 0); }
uint32_t VersionOf(uint32_t state) { return state >> 1; }
bool IsDeleted(uint32_t state) { return state == 0 || (state & 1) != 0; }

std::string KeyOf(uint64_t k) { return fmt::format("k{:08}", k); }

// The value of key at version: 8 bytes of version, then bytes that depend on both.
std::string ValueOf(const Slice& key, uint64_t version, size_t size) {
  std::string v(size, '\0');
  EncodeFixed64(v.data(), version);
  uint64_t h = Hash64(key, version);
  for (size_t i = 8; i < size; i++) {
    if ((i & 7) == 0) h = h * 0x9e3779b97f4a7c15ull + i;
    v[i] = static_cast<char>('a' + (h >> ((i & 7) * 8)) % 26);
  }
  return v;
}

// The version a stored value claims, or -1 if it is not a well-formed value of key.
int64_t VersionOfValue(const Slice& key, const Slice& value, size_t size) {
  if (value.size() != size) return -1;
  const uint64_t version = DecodeFixed64(value.data());
  if (version > UINT32_MAX / 2 || value != Slice(ValueOf(key, version, size))) return -1;
  return static_cast<int64_t>(version);
}

// Merge = add the operands (each a fixed64 increment) to the base's version and rederive the
// value, so a merge is one more version of the key. Thread safety: stateless.
class VersionAddOperator final : public MergeOperator {
 public:
  explicit VersionAddOperator(size_t value_size) : value_size_(value_size) {}
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    uint64_t version = 0;
    if (in.existing_value != nullptr) {
      const int64_t v = VersionOfValue(in.key, *in.existing_value, value_size_);
      if (v < 0) return false;
      version = static_cast<uint64_t>(v);
    }
    for (const Slice& op : in.operand_list) {
      if (op.size() != 8) return false;
      version += DecodeFixed64(op.data());
    }
    out->new_value = ValueOf(in.key, version, value_size_);
    return true;
  }
  bool PartialMerge(const Slice&, const Slice& left, const Slice& right,
                    std::string* out) const override {
    if (left.size() != 8 || right.size() != 8) return false;
    out->assign(8, '\0');
    EncodeFixed64(out->data(), DecodeFixed64(left.data()) + DecodeFixed64(right.data()));
    return true;
  }
  const char* Name() const override { return "ShaleStressVersionAdd"; }

 private:
  const size_t value_size_;
};

// The mmap'ed expected state. Thread safety: each key's word is written by its one writer and
// read by anyone, through atomics. Ownership: owns the mapping.
class ExpectedState {
 public:
  ~ExpectedState() {
    if (base_ != nullptr) ::munmap(base_, size_);
  }
  // Opens path, creating it (all keys never written) when fresh.
  static std::unique_ptr<ExpectedState> Open(const std::string& path, bool fresh, uint64_t max_key,
                                             uint64_t value_size, std::string* error) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | (fresh ? O_TRUNC : 0), 0644);
    if (fd < 0) {
      *error = fmt::format("{}: {}", path, std::strerror(errno));
      return nullptr;
    }
    struct stat st;
    ::fstat(fd, &st);
    const size_t size = kHeaderSize + 8 * max_key;
    const bool created = st.st_size == 0;
    if (created && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      *error = fmt::format("{}: {}", path, std::strerror(errno));
      ::close(fd);
      return nullptr;
    }
    if (!created && static_cast<size_t>(st.st_size) != size) {
      *error = fmt::format("{}: {} bytes, expected {} for --max_key={}", path, st.st_size, size,
                           max_key);
      ::close(fd);
      return nullptr;
    }
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) {
      *error = fmt::format("{}: mmap: {}", path, std::strerror(errno));
      return nullptr;
    }
    auto state = std::unique_ptr<ExpectedState>(new ExpectedState(p, size));
    char* header = static_cast<char*>(p);
    if (created) {
      std::memcpy(header, kMagic, 8);
      EncodeFixed64(header + 8, max_key);
      EncodeFixed64(header + 16, value_size);
    } else if (std::memcmp(header, kMagic, 8) != 0 || DecodeFixed64(header + 8) != max_key ||
               DecodeFixed64(header + 16) != value_size) {
      *error = fmt::format("{}: not an expected-state file for --max_key={} --value_size={}", path,
                           max_key, value_size);
      return nullptr;
    }
    return state;
  }

  uint64_t Load(uint64_t k) const { return Word(k).load(std::memory_order_acquire); }
  static uint32_t Committed(uint64_t word) { return static_cast<uint32_t>(word); }
  static uint32_t Pending(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
  void SetPending(uint64_t k, uint32_t pending) {
    Word(k).store(uint64_t{pending} << 32 | Committed(Load(k)), std::memory_order_release);
  }
  void Commit(uint64_t k, uint32_t committed) {
    Word(k).store(committed, std::memory_order_release);
  }

 private:
  ExpectedState(void* base, size_t size) : base_(base), size_(size) {}
  std::atomic<uint64_t>& Word(uint64_t k) const {
    static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free);
    return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(base_) + kHeaderSize)[k];
  }

  void* base_;
  size_t size_;
};

struct Counters {
  std::atomic<uint64_t> writes{0}, syncs{0}, batches{0}, merges{0}, deletes{0}, single_deletes{0},
      range_deletes{0};
  std::atomic<uint64_t> gets{0}, multigets{0}, scans{0}, failures{0}, compact_ranges{0};
};

class Stress {
 public:
  // families: the handles of every family, the default one first.
  Stress(uint64_t seed, ExpectedState* expected, DB* db, std::vector<ColumnFamilyHandle*> families)
      : seed_(seed),
        expected_(expected),
        db_(db),
        families_(std::move(families)),
        value_size_(FLAGS_value_size) {}

  // Checks every key against the expected state and folds surviving pending states in.
  // Returns the number of bad keys.
  uint64_t Verify() {
    // One snapshot for every family and both read paths, so they must agree exactly.
    const Snapshot* snap = db_->GetSnapshot();
    uint64_t bad = 0;
    std::vector<std::vector<uint32_t>> states(families_.size());
    for (size_t f = 0; f < families_.size(); f++) bad += ReadStates(snap, f, &states[f]);
    // Every family holds what the default one does: writes go to all of them in one batch.
    for (size_t f = 1; f < families_.size(); f++) {
      for (uint64_t k = 0; k < FLAGS_max_key; k++) {
        const uint32_t a = states[0][k], b = states[f][k];
        if (a != b && !(IsDeleted(a) && IsDeleted(b))) {
          Report(fmt::format("key {}: family {} holds {}, the default family {}", KeyOf(k),
                             families_[f]->GetName(), Describe(b), Describe(a)));
          bad++;
        }
      }
    }
    db_->ReleaseSnapshot(snap);
    return CheckExpected(states[0], bad);
  }

 private:
  static constexpr uint32_t kBadState = UINT32_MAX;

  // Reads every key of family f at snap by a full scan and by MultiGet, which must agree,
  // into (*states)[k] (kBadState where the value is malformed or a read failed). Returns the
  // number of bad keys.
  uint64_t ReadStates(const Snapshot* snap, size_t f, std::vector<uint32_t>* states) {
    const uint64_t n = FLAGS_max_key;
    ColumnFamilyHandle* family = families_[f];
    states->assign(n, 0);
    ReadOptions ro;
    ro.snapshot = snap;
    std::map<uint64_t, std::string> scanned;
    uint64_t bad = 0;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro, family);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->key().ToString();
      uint64_t k = 0;
      if (key.size() != 9 || key[0] != 'k' || std::sscanf(key.c_str() + 1, "%8lu", &k) != 1 ||
          k >= n || KeyOf(k) != key) {
        Report(fmt::format("unexpected key '{}' in the DB", key));
        bad++;
        continue;
      }
      scanned[k] = it->value().ToString();
    }
    if (!it->status().ok()) {
      Report("scan failed: " + it->status().ToString());
      bad++;
    }
    it.reset();

    constexpr size_t kBatch = 64;
    for (uint64_t first = 0; first < n; first += kBatch) {
      const size_t m = static_cast<size_t>(std::min<uint64_t>(kBatch, n - first));
      std::vector<std::string> key_storage(m);
      std::vector<Slice> keys(m);
      for (size_t i = 0; i < m; i++) keys[i] = key_storage[i] = KeyOf(first + i);
      std::vector<PinnableSlice> values(m);
      std::vector<Status> statuses(m);
      db_->MultiGet(ro, family, m, keys.data(), values.data(), statuses.data());
      for (size_t i = 0; i < m; i++) {
        const uint64_t k = first + i;
        auto s = scanned.find(k);
        // The state the DB holds for k.
        uint32_t& actual = (*states)[k];
        if (statuses[i].ok()) {
          const int64_t v = VersionOfValue(keys[i], values[i], value_size_);
          if (v < 0) {
            Report(fmt::format("key {}: malformed value", key_storage[i]));
            actual = kBadState;
            bad++;
            continue;
          }
          actual = State(static_cast<uint32_t>(v), false);
          if (s == scanned.end() || Slice(s->second) != Slice(values[i])) {
            Report(fmt::format("key {}: MultiGet and the scan disagree", key_storage[i]));
            bad++;
          }
        } else if (!statuses[i].IsNotFound()) {
          Report(fmt::format("key {}: {}", key_storage[i], statuses[i].ToString()));
          actual = kBadState;
          bad++;
          continue;
        } else if (s != scanned.end()) {
          Report(fmt::format("key {}: the scan has it, MultiGet does not", key_storage[i]));
          bad++;
        }
      }
    }
    return bad;
  }

  // Checks the states read from the default family against the expected state and folds
  // surviving pending states in. Returns the number of bad keys, with bad_before found already.
  uint64_t CheckExpected(const std::vector<uint32_t>& states, uint64_t bad_before) {
    const uint64_t n = FLAGS_max_key;
    uint64_t live = 0, pending_old = 0, pending_new = 0, bad = bad_before;
    for (uint64_t k = 0; k < n; k++) {
      {
        const uint32_t actual = states[k];
        if (actual == kBadState) {
          bad++;
          continue;
        }
        const std::string key = KeyOf(k);
        const uint64_t word = expected_->Load(k);
        const uint32_t committed = ExpectedState::Committed(word);
        const uint32_t pending = ExpectedState::Pending(word);
        const bool matches_committed =
            actual == committed || (IsDeleted(actual) && IsDeleted(committed));
        const bool matches_pending =
            pending != 0 && (actual == pending || (IsDeleted(actual) && IsDeleted(pending)));
        if (!matches_committed && !matches_pending) {
          Report(fmt::format("key {}: holds {}, expected {}{}", key, Describe(actual),
                             Describe(committed),
                             pending != 0 ? " or " + Describe(pending) : std::string()));
          bad++;
          continue;
        }
        if (pending != 0) (matches_pending ? pending_new : pending_old)++;
        if (!IsDeleted(actual)) live++;
        // The in-flight write survived (when both match, both are deletions: keep the newer
        // version, so the key's versions keep growing).
        expected_->Commit(k, matches_pending ? pending : committed);
      }
    }
    const std::string where =
        families_.size() > 1 ? fmt::format(" in {} column families", families_.size()) : "";
    std::printf("verified %lu keys%s: %lu live, %lu in-flight writes found new, %lu old, %lu bad\n",
                n, where.c_str(), live, pending_new, pending_old, bad);
    std::fflush(stdout);
    return bad;
  }

 public:
  void Run() {
    running_ = true;
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int w = 0; w < FLAGS_writers; w++) threads.emplace_back([this, w] { Writer(w); });
    for (int r = 0; r < FLAGS_readers; r++) {
      threads.emplace_back([this, r, &stop] { Reader(r, stop); });
    }
    for (int w = 0; w < FLAGS_writers; w++) threads[w].join();
    stop = true;
    for (size_t i = FLAGS_writers; i < threads.size(); i++) threads[i].join();
    running_ = false;
    std::printf(
        "ran: %lu writes (%lu synced, %lu in batches, %lu merges, %lu deletes, %lu single "
        "deletes, %lu range deletions), %lu gets, %lu multigets, %lu scans, %lu CompactRange "
        "calls, %lu failed checks\n",
        counters_.writes.load(), counters_.syncs.load(), counters_.batches.load(),
        counters_.merges.load(), counters_.deletes.load(), counters_.single_deletes.load(),
        counters_.range_deletes.load(), counters_.gets.load(), counters_.multigets.load(),
        counters_.scans.load(), counters_.compact_ranges.load(), counters_.failures.load());
  }

  uint64_t failures() const { return counters_.failures.load(); }

 private:
  ColumnFamilyHandle* RandomFamily(Random* rnd) const {
    return families_[rnd->Uniform(static_cast<uint32_t>(families_.size()))];
  }
  static std::string Describe(uint32_t state) {
    if (state == 0) return "nothing";
    return IsDeleted(state) ? fmt::format("deleted (v{})", VersionOf(state))
                            : fmt::format("v{}", VersionOf(state));
  }
  // Verification reports every bad key; while the workload runs (and may be killed at any
  // moment) the first failed check ends the process with status 1.
  void Report(const std::string& what) {
    counters_.failures++;
    std::fprintf(stderr, "shale_stress: %s\n", what.c_str());
    if (running_.load(std::memory_order_relaxed)) {
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
  void Fail(const char* op, const Status& s) {
    std::fprintf(stderr, "shale_stress: %s failed: %s\n", op, s.ToString().c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }

  // Random operations on this writer's keys until the time or operation budget runs out.
  void Writer(int w) {
    Random rnd(seed_ * 1000003 + static_cast<uint64_t>(w));
    const uint64_t writers = static_cast<uint64_t>(FLAGS_writers);
    const uint64_t owned = (FLAGS_max_key + writers - 1 - w) / writers;
    if (owned == 0) return;
    const auto deadline = Clock::now() + std::chrono::duration<double>(FLAGS_duration);
    const uint64_t sync_in =
        FLAGS_sync_fraction > 0
            ? std::max<uint64_t>(1, static_cast<uint64_t>(1.0 / FLAGS_sync_fraction))
            : 0;
    for (uint64_t op = 0;; op++) {
      if (FLAGS_ops_per_writer > 0 ? op >= FLAGS_ops_per_writer
                                   : (op % 16 == 0 && Clock::now() >= deadline)) {
        break;
      }
      if (FLAGS_compact_range_one_in > 0 && rnd.OneIn(FLAGS_compact_range_one_in)) {
        const uint64_t a = rnd.Uniform(FLAGS_max_key), b = rnd.Uniform(FLAGS_max_key);
        const std::string begin = KeyOf(std::min(a, b)), end = KeyOf(std::max(a, b));
        const Slice begin_slice(begin), end_slice(end);
        CompactRangeOptions co;
        co.bottommost_level_compaction = static_cast<BottommostLevelCompaction>(rnd.Uniform(4));
        Status s = db_->CompactRange(co, RandomFamily(&rnd), rnd.OneIn(4) ? nullptr : &begin_slice,
                                     rnd.OneIn(4) ? nullptr : &end_slice);
        if (!s.ok()) Fail("CompactRange", s);
        counters_.compact_ranges++;
      }
      WriteOptions wo;
      wo.sync = sync_in > 0 && rnd.OneIn(sync_in);
      // 1 to 4 of this writer's keys, distinct, in one batch when more than one.
      const int count =
          static_cast<int>(std::min<uint64_t>(owned, rnd.OneIn(8) ? 2 + rnd.Uniform(3) : 1));
      std::vector<uint64_t> keys;
      while (static_cast<int>(keys.size()) < count) {
        const uint64_t k = w + writers * rnd.Uniform(owned);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
      WriteBatch batch;
      std::vector<uint32_t> next(keys.size());
      for (size_t i = 0; i < keys.size(); i++) {
        const uint64_t k = keys[i];
        const uint32_t cur = ExpectedState::Committed(expected_->Load(k));
        const uint32_t version = VersionOf(cur) + 1;
        const std::string key = KeyOf(k);
        const uint64_t choice = rnd.Uniform(100);
        Status s;
        // The same record in every family.
        if (k % 8 == 7 && !IsDeleted(cur)) {
          next[i] = State(version, true);
          for (ColumnFamilyHandle* f : families_) {
            if (s.ok()) s = batch.SingleDelete(f, key);
          }
          counters_.single_deletes++;
        } else if (k % 8 == 7) {
          next[i] = State(version, false);
          const std::string value = ValueOf(key, version, value_size_);
          for (ColumnFamilyHandle* f : families_) {
            if (s.ok()) s = batch.Put(f, key, value);
          }
        } else if (choice < 5) {
          // A range tombstone over this key alone ([key, next key): no other key lies between).
          next[i] = State(version, true);
          const std::string end = KeyOf(k + 1);
          for (ColumnFamilyHandle* f : families_) {
            if (s.ok()) s = batch.DeleteRange(f, key, end);
          }
          counters_.range_deletes++;
        } else if (choice < 15) {
          next[i] = State(version, true);
          for (ColumnFamilyHandle* f : families_) {
            if (s.ok()) s = batch.Delete(f, key);
          }
          counters_.deletes++;
        } else if (choice < 35 && !IsDeleted(cur)) {
          next[i] = State(version, false);
          std::string one(8, '\0');
          EncodeFixed64(one.data(), 1);
          for (ColumnFamilyHandle* f : families_) {
            if (s.ok()) s = batch.Merge(f, key, one);
          }
          counters_.merges++;
        } else {
          next[i] = State(version, false);
          const std::string value = ValueOf(key, version, value_size_);
          for (ColumnFamilyHandle* f : families_) {
            if (s.ok()) s = batch.Put(f, key, value);
          }
        }
        if (!s.ok()) Fail("batch", s);
        expected_->SetPending(k, next[i]);
      }
      Status s = db_->Write(wo, &batch);
      if (!s.ok()) Fail("write", s);
      for (size_t i = 0; i < keys.size(); i++) expected_->Commit(keys[i], next[i]);
      counters_.writes++;
      if (wo.sync) counters_.syncs++;
      if (keys.size() > 1) counters_.batches++;
    }
  }

  // What a read of key k may see, given the expected words before and after it: any version
  // from the committed one before up to the newest one after (committed or pending).
  bool Plausible(uint64_t before, uint64_t after, const Status& s, const Slice& key,
                 const Slice& value, std::string* why) {
    const uint32_t low = ExpectedState::Committed(before);
    const uint32_t high = std::max(ExpectedState::Committed(after), ExpectedState::Pending(after));
    if (s.IsNotFound()) {
      // Right only if some state the read may have seen is a deletion (or nothing): one of
      // the states before and after, or one in between when the version moved by two or more.
      // (A committed state of 0 is "never written"; a pending 0 is "no write in flight".)
      bool deleted = IsDeleted(low) || IsDeleted(ExpectedState::Committed(after)) ||
                     VersionOf(high) >= VersionOf(low) + 2;
      for (const uint32_t pending :
           {ExpectedState::Pending(before), ExpectedState::Pending(after)}) {
        if (pending != 0 && IsDeleted(pending)) deleted = true;
      }
      if (!deleted) {
        *why = "not found, expected " + Describe(low);
        return false;
      }
      return true;
    }
    if (!s.ok()) {
      *why = s.ToString();
      return false;
    }
    const int64_t v = VersionOfValue(key, value, value_size_);
    if (v < 0 || static_cast<uint32_t>(v) < VersionOf(low) ||
        static_cast<uint32_t>(v) > VersionOf(high)) {
      *why = v < 0 ? std::string("malformed value")
                   : fmt::format("v{} outside [{}, {}]", v, Describe(low), Describe(high));
      return false;
    }
    return true;
  }

  void Reader(int r, const std::atomic<bool>& stop) {
    Random rnd(seed_ * 1000003 + 500 + static_cast<uint64_t>(r));
    const uint64_t n = FLAGS_max_key;
    PinnableSlice value;
    std::string why;
    while (!stop.load(std::memory_order_relaxed)) {
      const uint64_t choice = rnd.Uniform(10);
      if (choice < 6) {  // Get
        const uint64_t k = rnd.Uniform(n);
        const std::string key = KeyOf(k);
        const uint64_t before = expected_->Load(k);
        Status s = db_->Get(ReadOptions(), RandomFamily(&rnd), key, &value);
        if (!Plausible(before, expected_->Load(k), s, key, value, &why)) {
          Report(fmt::format("Get {}: {}", key, why));
        }
        counters_.gets++;
      } else if (choice < 9) {  // MultiGet of a few keys
        const size_t m = 1 + rnd.Uniform(16);
        std::vector<uint64_t> ks(m);
        std::vector<std::string> storage(m);
        std::vector<Slice> keys(m);
        std::vector<uint64_t> before(m);
        for (size_t i = 0; i < m; i++) {
          ks[i] = rnd.Uniform(n);
          keys[i] = storage[i] = KeyOf(ks[i]);
          before[i] = expected_->Load(ks[i]);
        }
        std::vector<PinnableSlice> values(m);
        std::vector<Status> statuses(m);
        db_->MultiGet(ReadOptions(), RandomFamily(&rnd), m, keys.data(), values.data(),
                      statuses.data());
        for (size_t i = 0; i < m; i++) {
          if (!Plausible(before[i], expected_->Load(ks[i]), statuses[i], keys[i], values[i],
                         &why)) {
            Report(fmt::format("MultiGet {}: {}", storage[i], why));
          }
        }
        counters_.multigets++;
      } else {  // a short scan
        const uint64_t first = rnd.Uniform(n);
        const uint64_t len = std::min<uint64_t>(1 + rnd.Uniform(50), n - first);
        std::vector<uint64_t> before(len);
        for (uint64_t i = 0; i < len; i++) before[i] = expected_->Load(first + i);
        std::map<uint64_t, std::string> seen;
        std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions(), RandomFamily(&rnd));
        const std::string end = KeyOf(first + len);
        std::string prev;
        for (it->Seek(KeyOf(first)); it->Valid() && it->key().compare(end) < 0; it->Next()) {
          const std::string key = it->key().ToString();
          if (!prev.empty() && key <= prev) Report("scan: " + key + " after " + prev);
          prev = key;
          uint64_t k = 0;
          std::sscanf(key.c_str() + 1, "%8lu", &k);
          seen[k] = it->value().ToString();
        }
        if (!it->status().ok()) Report("scan: " + it->status().ToString());
        for (uint64_t i = 0; i < len; i++) {
          const uint64_t k = first + i;
          auto found = seen.find(k);
          const Status s = found == seen.end() ? Status::NotFound() : Status::OK();
          const std::string key = KeyOf(k);
          if (!Plausible(before[i], expected_->Load(k), s, key,
                         found == seen.end() ? Slice() : Slice(found->second), &why)) {
            Report(fmt::format("scan {}: {}", key, why));
          }
        }
        counters_.scans++;
      }
    }
  }

  using Clock = std::chrono::steady_clock;
  const uint64_t seed_;
  ExpectedState* const expected_;
  DB* const db_;
  const std::vector<ColumnFamilyHandle*> families_;
  const size_t value_size_;
  Counters counters_;
  std::atomic<bool> running_{false};
};

int Main() {
  if (FLAGS_db.empty() || FLAGS_expected_state.empty()) {
    std::fprintf(stderr, "shale_stress: --db and --expected_state are required\n");
    return 2;
  }
  if (FLAGS_cache_type != "hyper_clock_cache" && FLAGS_cache_type != "lru_cache") {
    std::fprintf(stderr, "shale_stress: --cache_type must be hyper_clock_cache or lru_cache\n");
    return 2;
  }
  if (FLAGS_writers < 1 || FLAGS_readers < 0 || FLAGS_max_key < 1 ||
      FLAGS_max_key > (uint64_t{1} << 26) || FLAGS_value_size < 8 || FLAGS_value_size > (1 << 20) ||
      FLAGS_sync_fraction < 0 || FLAGS_sync_fraction > 1 || FLAGS_duration < 0 ||
      FLAGS_column_families < 1 || FLAGS_column_families > 16) {
    std::fprintf(stderr,
                 "shale_stress: need --writers >= 1, --readers >= 0, --max_key in [1, 2^26], "
                 "--value_size in [8, 1 MiB], --sync_fraction in [0, 1], --duration >= 0, "
                 "--column_families in [1, 16]\n");
    return 2;
  }
  const uint64_t seed =
      FLAGS_seed != 0
          ? FLAGS_seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::printf("seed: %lu (replay with --seed=%lu)\n", seed, seed);

  Options options;
  options.create_if_missing = true;
  options.merge_operator = std::make_shared<VersionAddOperator>(FLAGS_value_size);
  options.write_buffer_size = static_cast<size_t>(FLAGS_write_buffer_size);
  options.target_file_size_base = FLAGS_target_file_size_base;
  options.max_bytes_for_level_base = FLAGS_max_bytes_for_level_base;
  options.max_background_jobs = FLAGS_max_background_jobs;
  options.max_subcompactions = static_cast<uint32_t>(std::max(FLAGS_subcompactions, 0));
  options.level_compaction_dynamic_level_bytes = FLAGS_level_compaction_dynamic_level_bytes;
  options.read_compaction_bytes_per_seek = FLAGS_read_compaction_bytes_per_seek;
  options.enable_write_thread_adaptive_yield = FLAGS_enable_write_thread_adaptive_yield;
  options.enable_pipelined_write = FLAGS_enable_pipelined_write;
  options.atomic_flush = FLAGS_atomic_flush;
  options.memtable_max_range_deletions = FLAGS_memtable_max_range_deletions;
  options.bytes_per_sync = FLAGS_bytes_per_sync;
  options.max_sequential_skip_in_iterations = FLAGS_max_sequential_skip_in_iterations;
  options.create_missing_column_families = true;
  const size_t cache_size = static_cast<size_t>(FLAGS_cache_size);
  options.block_cache =
      FLAGS_cache_type == "lru_cache"
          ? NewLRUCache(cache_size)
          : HyperClockCacheOptions(cache_size, options.block_size).MakeSharedCache();
  if (FLAGS_destroy) {
    Status s = DestroyDB(FLAGS_db, options);
    if (!s.ok()) {
      std::fprintf(stderr, "shale_stress: destroy %s: %s\n", FLAGS_db.c_str(),
                   s.ToString().c_str());
      return 3;
    }
  }
  std::string error;
  auto expected = ExpectedState::Open(FLAGS_expected_state, FLAGS_destroy, FLAGS_max_key,
                                      static_cast<uint64_t>(FLAGS_value_size), &error);
  if (!expected) {
    std::fprintf(stderr, "shale_stress: %s\n", error.c_str());
    return 3;
  }
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyDescriptor> descriptors = {
      ColumnFamilyDescriptor(kDefaultColumnFamilyName, options)};
  for (int f = 1; f < FLAGS_column_families; f++) {
    descriptors.emplace_back(fmt::format("cf{}", f), options);
  }
  std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
  Status s = DB::Open(options, FLAGS_db, descriptors, &handles, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "shale_stress: open %s: %s\n", FLAGS_db.c_str(), s.ToString().c_str());
    return 3;
  }
  std::vector<ColumnFamilyHandle*> families;
  for (const auto& h : handles) families.push_back(h.get());
  Stress stress(seed, expected.get(), db.get(), families);
  if (stress.Verify() != 0) return 1;
  if (!FLAGS_verify_only) {
    stress.Run();
    if (stress.failures() != 0) return 1;
    handles.clear();
    s = db->Close();
    if (!s.ok()) {
      std::fprintf(stderr, "shale_stress: close: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace shale::stress

int main(int argc, char** argv) {
  shale::tools::ParseFlagsStrictly(
      "shale_stress", "shale_stress --db=DIR --expected_state=FILE [--verify_only] ...", argc,
      argv);
  return shale::stress::Main();
}
