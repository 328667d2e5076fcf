// What synchronous writes can reach on the machine and disk it runs on, with and without the
// engine. All cases write B6's entries (8-byte random keys, 128-byte values, sync) to a file or DB
// in a scratch directory:
//
//   BM_SyncLoop             one thread: pwrite of one entry, then fdatasync (the device's rate
//                           for one writer; the file is zero-filled first, as shale's WAL is,
//                           so each fdatasync writes data only)
//   BM_GroupCommit/threads  threads queue through shale's WriteThread, and each leader writes
//                           its group's batches with one pwrite and one fdatasync: group commit
//                           with nothing else (no memtable, no log framing, no checksums)
//   BM_DBSyncPut/threads    the same writes through DB::Put with WriteOptions::sync (the whole
//                           write path; db_bench's B6 row is this case with 16 threads)
//   BM_TwoGroupsInFlight    16 threads in two WriteThreads of 8 on one file, each leader with
//                           its own pwrite and fdatasync: two groups syncing at once, with no
//                           order between them — what a pipelined commit could reach at best
//
// items_per_second is writes per second over all threads. BM_DBSyncPut against BM_GroupCommit
// is what the engine's own work costs; BM_GroupCommit against BM_SyncLoop × threads is what
// queueing, waking and scheduling the writers cost; BM_TwoGroupsInFlight against
// BM_GroupCommit/threads:16 is whether overlapping two groups' fsyncs pays on this disk. Each case
// runs a fixed number of writes per thread (B6's 1,250), so run it with --benchmark_repetitions for
// a spread.
//
//   group_commit_bench --benchmark_filter='threads:16' --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/db.h"
#include "shale/write_batch.h"
#include "src/db/write_thread.h"
#include "src/util/random.h"

namespace shale {
namespace {

constexpr size_t kKeySize = 8;
constexpr size_t kValueSize = 128;
constexpr int64_t kWritesPerThread = 1250;
// Zeros written (and synced) before timing: more than any case appends.
constexpr size_t kZeroFill = 16 << 20;

std::string RandomKey(Random* rnd) {
  const uint64_t k = rnd->Next64();
  return std::string(reinterpret_cast<const char*>(&k), kKeySize);
}

// A file in a scratch directory, zero-filled and synced, that cases overwrite from offset 0.
// Ownership: owns the descriptor and (through its ScopedDir) the file. Thread safety: the
// descriptor may be used by any thread; Offset is for the one thread writing at a time.
class ZeroedFile {
 public:
  explicit ZeroedFile(const std::string& name) : dir_(name) {
    std::filesystem::create_directories(dir_.path());
    fd_ = ::open((dir_.path() + "/log").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      error_ = std::string("open: ") + std::strerror(errno);
      return;
    }
    const std::vector<char> zeros(kZeroFill, 0);
    if (!WriteAt(zeros.data(), zeros.size()) || ::fdatasync(fd_) != 0) {
      error_ = std::string("zero fill: ") + std::strerror(errno);
    }
    offset_ = 0;
  }
  ~ZeroedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ZeroedFile(const ZeroedFile&) = delete;
  ZeroedFile& operator=(const ZeroedFile&) = delete;

  // Empty when the file is ready.
  const std::string& error() const { return error_; }

  // Writes n bytes at the current offset and advances it; false on an error.
  bool WriteAt(const char* p, size_t n) {
    if (!PwriteAt(p, n, offset_)) return false;
    offset_ += n;
    return true;
  }
  // Writes n bytes at offset, a place the caller reserved (any thread); false on an error.
  bool PwriteAt(const char* p, size_t n, uint64_t offset) const {
    while (n > 0) {
      const ssize_t done = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) return false;
      p += done;
      n -= static_cast<size_t>(done);
      offset += static_cast<uint64_t>(done);
    }
    return true;
  }
  bool Sync() const { return ::fdatasync(fd_) == 0; }

 private:
  bench::ScopedDir dir_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::string error_;
};

void BM_SyncLoop(benchmark::State& state) {
  ZeroedFile file("sync_loop");
  if (!file.error().empty()) {
    state.SkipWithError(file.error().c_str());
    return;
  }
  Random rnd(301);
  const std::string value(kValueSize, 'v');
  for (auto _ : state) {
    WriteBatch batch;
    if (!batch.Put(RandomKey(&rnd), value).ok() ||
        !file.WriteAt(batch.Data().data(), batch.Data().size()) || !file.Sync()) {
      state.SkipWithError("write or fdatasync failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SyncLoop)->Iterations(2000)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Queues w; if it leads a group, joins the members' batches into *record, has write(record)
// put them on disk (false: failed, errno says why), reports the time taken as the group's
// fsync latency, and finishes the group.
template <typename Write>
void CommitGroup(WriteThread* queue, WriteThread::Writer* w, std::string* record, Write&& write) {
  if (!queue->JoinBatchGroup(w)) return;
  WriteThread::Group group;
  queue->BuildBatchGroup(w, &group);
  record->clear();
  for (const WriteThread::Writer* m : group.members) *record += m->batch->Data();
  const auto start = std::chrono::steady_clock::now();
  const Status s =
      write(*record) ? Status::OK() : Status::IOError("pwrite or fdatasync", std::strerror(errno));
  queue->RecordSyncLatency(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count()));
  queue->ExitAsBatchGroupLeader(group, s);
}

// Queued writers may spin as long as the DB's default lets them (these writers all sync, so
// in practice they sleep at once, as in a DB).
const std::chrono::microseconds kSpin(Options().write_thread_max_yield_usec);

// Shared by the threads of one BM_GroupCommit run; thread 0 makes it before the timed loop and
// drops it after (the benchmark library holds every thread at both ends of the loop).
struct GroupCommitShared {
  GroupCommitShared() : file("group_commit"), queue(size_t{1} << 20, kSpin) {}
  ZeroedFile file;  // written by the leader of the moment only
  WriteThread queue;
  std::string record;  // the leader's scratch buffer
};
std::unique_ptr<GroupCommitShared> group_commit_shared;

void BM_GroupCommit(benchmark::State& state) {
  if (state.thread_index() == 0) group_commit_shared = std::make_unique<GroupCommitShared>();
  GroupCommitShared* shared = nullptr;  // read inside the loop: thread 0 may not have made it yet
  Random rnd(301 + static_cast<uint32_t>(state.thread_index()));
  const std::string value(kValueSize, 'v');
  WriteOptions sync;
  sync.sync = true;
  bool failed = false;
  for (auto _ : state) {
    if (shared == nullptr) shared = group_commit_shared.get();
    if (failed || !shared->file.error().empty()) continue;  // the loop must run to its end
    WriteBatch batch;
    failed = !batch.Put(RandomKey(&rnd), value).ok();
    WriteThread::Writer w(sync, &batch);
    CommitGroup(&shared->queue, &w, &shared->record, [&](const std::string& record) {
      return shared->file.WriteAt(record.data(), record.size()) && shared->file.Sync();
    });
    failed |= !w.status.ok();
  }
  if (failed) state.SkipWithError("a group's write or fdatasync failed");
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    if (!group_commit_shared->file.error().empty()) {
      state.SkipWithError(group_commit_shared->file.error().c_str());
    }
    group_commit_shared.reset();
  }
}
BENCHMARK(BM_GroupCommit)
    ->Iterations(kWritesPerThread)
    ->ThreadRange(1, 16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Shared by the threads of one BM_TwoGroupsInFlight run (made and dropped by thread 0).
struct TwoGroupsShared {
  TwoGroupsShared()
      : file("two_groups"),
        queues{WriteThread(size_t{1} << 20, kSpin), WriteThread(size_t{1} << 20, kSpin)} {}
  ZeroedFile file;
  WriteThread queues[2];
  std::string records[2];           // each queue's leader's scratch buffer
  std::atomic<uint64_t> offset{0};  // where the next group's record goes
};
std::unique_ptr<TwoGroupsShared> two_groups_shared;

void BM_TwoGroupsInFlight(benchmark::State& state) {
  if (state.thread_index() == 0) two_groups_shared = std::make_unique<TwoGroupsShared>();
  TwoGroupsShared* shared = nullptr;  // read inside the loop: thread 0 may not have made it yet
  Random rnd(301 + static_cast<uint32_t>(state.thread_index()));
  const std::string value(kValueSize, 'v');
  const int lane = state.thread_index() % 2;
  WriteOptions sync;
  sync.sync = true;
  bool failed = false;
  for (auto _ : state) {
    if (shared == nullptr) shared = two_groups_shared.get();
    if (failed || !shared->file.error().empty()) continue;  // the loop must run to its end
    WriteThread& queue = shared->queues[lane];
    WriteBatch batch;
    failed = !batch.Put(RandomKey(&rnd), value).ok();
    WriteThread::Writer w(sync, &batch);
    CommitGroup(&queue, &w, &shared->records[lane], [&](const std::string& record) {
      const uint64_t offset = shared->offset.fetch_add(record.size());
      return shared->file.PwriteAt(record.data(), record.size(), offset) && shared->file.Sync();
    });
    failed |= !w.status.ok();
  }
  if (failed) state.SkipWithError("a group's write or fdatasync failed");
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    if (!two_groups_shared->file.error().empty()) {
      state.SkipWithError(two_groups_shared->file.error().c_str());
    }
    two_groups_shared.reset();
  }
}
BENCHMARK(BM_TwoGroupsInFlight)
    ->Iterations(kWritesPerThread)
    ->Threads(16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

struct DBSyncPutShared {
  bench::ScopedDir dir{"db_sync_put"};  // declared first: the DB closes before it is removed
  std::unique_ptr<DB> db;
  Status open_status;
};
std::unique_ptr<DBSyncPutShared> db_sync_put_shared;

void BM_DBSyncPut(benchmark::State& state) {
  if (state.thread_index() == 0) {
    db_sync_put_shared = std::make_unique<DBSyncPutShared>();
    Options options;
    options.create_if_missing = true;
    db_sync_put_shared->open_status =
        DB::Open(options, db_sync_put_shared->dir.path(), &db_sync_put_shared->db);
  }
  DBSyncPutShared* shared = nullptr;  // read inside the loop: thread 0 may not have made it yet
  Random rnd(301 + static_cast<uint32_t>(state.thread_index()));
  const std::string value(kValueSize, 'v');
  WriteOptions sync;
  sync.sync = true;
  Status s;
  for (auto _ : state) {
    if (shared == nullptr) shared = db_sync_put_shared.get();
    if (!s.ok() || !shared->open_status.ok()) continue;  // the loop must run to its end
    s = shared->db->Put(sync, RandomKey(&rnd), value);
  }
  if (!s.ok()) state.SkipWithError(("Put: " + s.ToString()).c_str());
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    if (!db_sync_put_shared->open_status.ok()) {
      state.SkipWithError(("Open: " + db_sync_put_shared->open_status.ToString()).c_str());
    }
    db_sync_put_shared.reset();
  }
}
BENCHMARK(BM_DBSyncPut)
    ->Iterations(kWritesPerThread)
    ->ThreadRange(1, 16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace shale
