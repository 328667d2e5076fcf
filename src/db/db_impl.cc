#include "src/db/db_impl.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <forward_list>
#include <limits>
#include <optional>

#include "memtable/memtable.h"
#include "src/base/async_read.h"
#include "src/base/get_context.h"
#include "src/base/multi_get.h"
#include "src/db/db_iter.h"
#include "src/db/merging_iterator.h"
#include "src/db/write_batch_internal.h"
#include "src/monitoring/perf_context_imp.h"
#include "src/util/biased_countdown.h"
#include "src/util/clock.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

// SuperVersion::GetFromMemTables, timed in the calling thread's PerfContext.
bool GetFromMemTablesTimed(const SuperVersion& sv, const LookupKey& key, GetContext* ctx) {
  PerfTimer timer(&PerfContext::get_from_memtable_time);
  return sv.GetFromMemTables(key, ctx);
}

}  // namespace
DBImpl::DBImpl(const Options& options, std::string dbname)
    : dbname_(std::move(dbname)),
      options_(options),
      fs_(options.file_system ? options.file_system : FileSystem::Default()),
      stats_(options.statistics.get()),
      icmp_(options.comparator),
      block_cache_(options.block_cache ? options.block_cache : NewLRUCache(32 << 20)),
      write_thread_(options.max_write_batch_group_size_bytes) {
  TableReaderOptions ro;
  ro.comparator = &icmp_;
  ro.block_cache = block_cache_;
  ro.statistics = stats_;
  ro.check_merge_operator = true;
  ro.merge_operator_name = options_.merge_operator ? options_.merge_operator->Name() : nullptr;
  table_cache_ = std::make_unique<TableCache>(dbname_, fs_.get(), ro, options_.max_open_files,
                                              options_.use_direct_reads);
}

DBImpl::~DBImpl() { CloseImpl().PermitUncheckedError(); }

Status DBImpl::CheckOpen() const {
  if (closed_.load(std::memory_order_relaxed)) return Status::Aborted("DB is closed");
  return Status::OK();
}

// ---------------------------------------------------------------- writes

Status DBImpl::Put(const WriteOptions& options, const Slice& key, const Slice& value) {
  WriteBatch batch;
  Status s = batch.Put(key, value);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::Delete(const WriteOptions& options, const Slice& key) {
  WriteBatch batch;
  Status s = batch.Delete(key);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::Merge(const WriteOptions& options, const Slice& key, const Slice& operand) {
  if (!options_.merge_operator) return Status::InvalidArgument("Merge requires a merge_operator");
  WriteBatch batch;
  Status s = batch.Merge(key, operand);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  if (batch == nullptr) return Status::InvalidArgument("null WriteBatch");
  // A batch with a Merge record needs an operator, like DB::Merge.
  if (!options_.merge_operator && WriteBatchInternal::HasMerge(batch)) {
    return Status::InvalidArgument("Merge requires a merge_operator");
  }
  return WriteImpl(options, batch);
}

void DBImpl::BuildGroupRecord(const WriteThread::Group& group, SequenceNumber first_seq,
                              std::string* record) const {
  record->clear();
  record->reserve(WriteBatchInternal::kHeader + group.total_bytes);
  record->resize(WriteBatchInternal::kHeader);
  EncodeFixed64(record->data(), first_seq);
  EncodeFixed32(record->data() + 8, static_cast<uint32_t>(group.total_count));
  for (const WriteThread::Writer* w : group.members) {
    Slice contents = WriteBatchInternal::Contents(w->batch);
    record->append(contents.data() + WriteBatchInternal::kHeader,
                   contents.size() - WriteBatchInternal::kHeader);
  }
}

Status DBImpl::WriteImpl(const WriteOptions& options, WriteBatch* batch) {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  if (options.sync && options.disableWAL) {
    return Status::InvalidArgument("sync and disableWAL cannot be combined");
  }
  if (batch->Count() == 0) return Status::OK();
  const uint64_t start_us = stats_ != nullptr ? NowMicros() : 0;
  if (stats_ != nullptr) {
    stats_->recordInHistogram(BYTES_PER_WRITE, WriteBatchInternal::Contents(batch).size());
  }

  WriteThread::Writer w(options, batch);
  PerfTimer wait_timer(&PerfContext::write_thread_wait_nanos);
  const bool leader = write_thread_.JoinBatchGroup(&w);
  wait_timer.Stop();
  if (!leader) {
    if (stats_ != nullptr) {
      stats_->recordTick(WRITE_DONE_BY_OTHER);
      stats_->recordInHistogram(DB_WRITE, NowMicros() - start_us);
    }
    return w.status;
  }

  // This thread leads a group: nobody else writes the WAL or allocates sequences until
  // ExitAsBatchGroupLeader.
  WriteThread::Group group;
  write_thread_.BuildBatchGroup(&w, &group);
  // Switch a full memtable, or stall while flush and compaction catch up; also refuses writes
  // while the DB is read-only after an error.
  {
    PerfTimer delay_timer(&PerfContext::write_delay_time);
    s = MakeRoomForWrite();
  }
  const SequenceNumber first_seq = last_allocated_sequence_ + 1;
  const SequenceNumber last_seq = last_allocated_sequence_ + group.total_count;
  if (s.ok() && last_seq > kMaxSequenceNumber) s = Status::IOError("sequence numbers exhausted");

  if (s.ok() && !group.disable_wal) {
    PerfTimer wal_timer(&PerfContext::write_wal_time);
    std::string record;
    BuildGroupRecord(group, first_seq, &record);
    s = log_->AddRecord(record);
    if (s.ok() && group.need_sync) {
      const uint64_t sync_start = NowMicros();
      s = log_->Sync();
      const uint64_t sync_us = NowMicros() - sync_start;
      write_thread_.RecordSyncLatency(sync_us);
      if (stats_ != nullptr) {
        stats_->recordTick(WAL_FILE_SYNCED);
        stats_->recordInHistogram(WAL_FILE_SYNC_MICROS, sync_us);
      }
    }
    if (!s.ok()) {
      // The record may or may not be in the log: never reuse its sequence numbers, and stop
      // accepting writes until Resume() starts a fresh log.
      last_allocated_sequence_ = last_seq;
      SetBackgroundError(s);
    } else if (stats_ != nullptr) {
      stats_->recordTick(WAL_FILE_BYTES, record.size());
      stats_->recordTick(WRITE_WITH_WAL, group.members.size());
    }
  }

  if (s.ok()) {
    PerfTimer memtable_timer(&PerfContext::write_memtable_time);
    SequenceNumber seq = first_seq;
    for (const WriteThread::Writer* m : group.members) {
      Status ins = WriteBatchInternal::InsertInto(m->batch, seq, mem_);
      SHALE_ASSERT(ins.ok());  // batches built through the API are well formed
      ins.PermitUncheckedError();
      seq += m->batch->Count();
    }
    last_allocated_sequence_ = last_seq;
    last_sequence_.store(last_seq, std::memory_order_release);
    if (stats_ != nullptr) {
      stats_->recordTick(NUMBER_KEYS_WRITTEN, group.total_count);
      stats_->recordTick(BYTES_WRITTEN, group.total_bytes);
      stats_->recordTick(WRITE_DONE_BY_SELF);
      stats_->recordInHistogram(WRITE_GROUP_SIZE, group.members.size());
    }
  }
  write_thread_.ExitAsBatchGroupLeader(group, s);
  if (stats_ != nullptr) stats_->recordInHistogram(DB_WRITE, NowMicros() - start_us);
  return s;
}

void DBImpl::SetBackgroundError(const Status& s) {
  MutexLock l(&mutex_);
  SetBackgroundErrorLocked(s);
}

void DBImpl::SetBackgroundErrorLocked(const Status& s) {
  if (bg_error_.ok()) bg_error_ = s;
  read_only_.store(true, std::memory_order_release);
  bg_done_cv_.SignalAll();  // stalled writers and waiters see the error
}

Status DBImpl::SyncWAL() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  return WithWritesStopped([this]() -> Status {
    if (read_only_.load()) {
      MutexLock l(&mutex_);
      return Status::IOError("DB is read-only after an earlier error", bg_error_.ToString());
    }
    Status r = log_->Sync();
    if (!r.ok()) {
      SetBackgroundError(r);
    } else if (stats_ != nullptr) {
      stats_->recordTick(WAL_FILE_SYNCED);
    }
    return r;
  });
}

Status DBImpl::Resume() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  return WithWritesStopped([this]() -> Status {
    if (!read_only_.load()) return Status::OK();
    MutexLock l(&mutex_);
    // The old log may end in a partial record, and its unsynced tail may already be lost
    // (a failed fsync is not retried as if it could succeed). Later writes go to a fresh log,
    // and everything acknowledged before is flushed to a table first, so that no later
    // synced write can survive a crash that loses an earlier one.
    Status r = CreateLog(/*sync_previous=*/false);
    if (!r.ok()) return r;
    if (mem_->num_entries() > 0) {
      imm_.push_front(Immutable{mem_, mem_log_number_});
      mem_ = NewMemTable();
      InstallSuperVersion();
    }
    // Also when the memtable was empty (the failed write was its log's first): the old log
    // leaves the set that recovery replays, or a partial record at its end would fail every
    // later open in absolute consistency mode, and a write whose fsync failed would come back.
    mem_log_number_ = log_number_;
    bg_error_ = Status::OK();
    bg_work_cv_.SignalAll();
    while (!imm_.empty() && bg_error_.ok() && !shutting_down_) bg_done_cv_.Wait();
    if (!bg_error_.ok()) return Status::IOError("Resume: flush failed", bg_error_.ToString());
    if (versions_->log_number() < mem_log_number_) {
      // Nothing was flushed to move it on: everything before the fresh log is in tables.
      VersionEdit edit;
      edit.SetLogNumber(mem_log_number_);
      r = versions_->LogAndApply(&edit);
      if (!r.ok()) {
        SetBackgroundErrorLocked(r);
        return r;
      }
      DeleteObsoleteFiles();
    }
    read_only_.store(false, std::memory_order_release);
    return Status::OK();
  });
}

// ---------------------------------------------------------------- reads

Status DBImpl::ReadSequence(const ReadOptions& options, SequenceNumber* seq) const {
  if (options.snapshot == nullptr) {
    *seq = last_sequence_.load(std::memory_order_acquire);
    return Status::OK();
  }
  MutexLock l(&snapshot_mu_);
  if (live_snapshots_.count(options.snapshot) == 0) {
    return Status::InvalidArgument("snapshot was released or does not belong to this DB");
  }
  *seq = options.snapshot->GetSequenceNumber();  // live: its release waits for snapshot_mu_
  return Status::OK();
}

Status DBImpl::Get(const ReadOptions& options, const Slice& key, PinnableSlice* value) {
  value->Reset();
  Status s = CheckOpen();
  if (!s.ok()) return s;
  // The SuperVersion before the sequence (so in every read below): a SuperVersion installed
  // after the sequence was read may come from a compaction that kept only versions newer
  // than it. Loaded first, the SuperVersion holds every version up to the sequence, except
  // writes to memtables it does not have, which are all newer than those it has.
  std::shared_ptr<SuperVersion> sv = GetSuperVersion();
  SequenceNumber seq;
  s = ReadSequence(options, &seq);
  if (!s.ok()) return s;
  return GetImpl(options, *sv, seq, key, value);
}

Status DBImpl::GetImpl(const ReadOptions& options, const SuperVersion& sv_ref, SequenceNumber seq,
                       const Slice& key, PinnableSlice* value) {
  const uint64_t start_us = stats_ != nullptr ? NowMicros() : 0;
  const SuperVersion* sv = &sv_ref;
  LookupKey lkey(key, seq);
  GetContext ctx(options_.merge_operator.get(), stats_, key, value);
  const bool in_memory = GetFromMemTablesTimed(*sv, lkey, &ctx);
  Status s;
  if (!ctx.resolved()) {
    PerfTimer timer(&PerfContext::get_from_output_files_time);
    s = sv->current->Get(options, lkey, &ctx);
  }
  if (s.ok()) {
    ctx.Finish();
    s = ctx.status();
  } else {
    value->Reset();
  }
  if (s.ok()) PerfCount(&PerfContext::get_read_bytes, value->size());
  if (stats_ != nullptr) {
    stats_->recordTick(in_memory ? MEMTABLE_HIT : MEMTABLE_MISS);
    stats_->recordTick(NUMBER_KEYS_READ);
    if (s.ok()) stats_->recordTick(BYTES_READ, value->size());
    stats_->recordInHistogram(DB_GET, NowMicros() - start_us);
  }
  return s;
}

void DBImpl::MultiGet(const ReadOptions& options, size_t n, const Slice* keys,
                      PinnableSlice* values, Status* statuses, bool sorted_input) {
  for (size_t i = 0; i < n; i++) values[i].Reset();
  Status s = CheckOpen();
  if (!s.ok() || n == 0) {
    for (size_t i = 0; i < n; i++) statuses[i] = s;
    return;
  }
  // Every key is read at the same sequence from one SuperVersion, loaded first (see Get):
  // one consistent state.
  std::shared_ptr<SuperVersion> sv = GetSuperVersion();
  SequenceNumber seq = 0;
  s = ReadSequence(options, &seq);
  if (!s.ok()) {
    for (size_t i = 0; i < n; i++) statuses[i] = s;
    return;
  }
  const uint64_t start_us = stats_ != nullptr ? NowMicros() : 0;
  auto batch = std::make_unique<std::optional<MultiGetKey>[]>(n);
  std::vector<MultiGetKey*> order(n);
  for (size_t i = 0; i < n; i++) {
    batch[i].emplace(keys[i], seq, options_.merge_operator.get(), stats_, &values[i]);
    order[i] = &*batch[i];
  }
  const Comparator* ucmp = options_.comparator;
  auto less = [ucmp](const MultiGetKey* a, const MultiGetKey* b) {
    return ucmp->Compare(a->lkey.user_key(), b->lkey.user_key()) < 0;
  };
  // sorted_input is trusted only as far as a linear check confirms it.
  if (!sorted_input || !std::is_sorted(order.begin(), order.end(), less)) {
    std::stable_sort(order.begin(), order.end(), less);
  }

  uint64_t memtable_hits = 0;
  std::vector<MultiGetKey*> pending;
  pending.reserve(n);
  for (MultiGetKey* k : order) {
    memtable_hits += GetFromMemTablesTimed(*sv, k->lkey, &k->ctx);
    if (!k->done()) pending.push_back(k);
  }
  if (!pending.empty()) {
    PerfTimer timer(&PerfContext::get_from_output_files_time);
    AsyncReader* reader = nullptr;
    if (options.async_io) {
      Status why;
      reader = ThreadAsyncReader(fs_, &why);
      if (reader == nullptr && stats_ != nullptr) stats_->recordTick(ASYNC_READ_FALLBACK);
    }
    if (reader != nullptr) {
      AsyncIo io(reader, stats_);
      sv->current->MultiGet(options, pending.data(), pending.size(), &io);
    } else {
      sv->current->MultiGet(options, pending.data(), pending.size(), nullptr);
    }
  }

  uint64_t found = 0, bytes = 0;
  for (size_t i = 0; i < n; i++) {
    MultiGetKey& k = *batch[i];
    if (k.status.ok()) {
      k.ctx.Finish();
      statuses[i] = k.ctx.status();
    } else {
      statuses[i] = k.status;
    }
    if (statuses[i].ok()) {
      found++;
      bytes += values[i].size();
    } else {
      values[i].Reset();
    }
  }
  if (stats_ != nullptr) {
    stats_->recordTick(NUMBER_MULTIGET_CALLS);
    stats_->recordTick(NUMBER_MULTIGET_KEYS_READ, n);
    stats_->recordTick(NUMBER_MULTIGET_KEYS_FOUND, found);
    stats_->recordTick(MEMTABLE_HIT, memtable_hits);
    stats_->recordTick(MEMTABLE_MISS, n - memtable_hits);
    stats_->recordTick(BYTES_READ, bytes);
    stats_->recordInHistogram(DB_MULTIGET, NowMicros() - start_us);
  }
  PerfCount(&PerfContext::multiget_read_bytes, bytes);
}

namespace {

// What keeps a GetMergeOperands result alive: the pins (memtables, cached blocks) and copies
// of every operand, shared by the returned slices and released with the last of them. The
// count is biased to the calling thread: resetting the slices there costs no atomic.
struct OperandBundle {
  explicit OperandBundle(size_t n) : refs(n) {}
  BiasedCountdown refs;
  Cleanable pins;
  std::forward_list<std::string> copies;
};

void ReleaseOperandBundle(void* bundle, void*) {
  auto* b = static_cast<OperandBundle*>(bundle);
  if (b->refs.Release()) std::unique_ptr<OperandBundle> last(b);
}

}  // namespace

Status DBImpl::GetMergeOperands(const ReadOptions& options, const Slice& key,
                                PinnableSlice* operands, GetMergeOperandsOptions* opts,
                                int* number_of_operands) {
  if (number_of_operands == nullptr || opts == nullptr ||
      (operands == nullptr && opts->expected_max_number_of_operands > 0)) {
    return Status::InvalidArgument("GetMergeOperands needs operands, options and a count");
  }
  *number_of_operands = 0;
  if (opts->expected_max_number_of_operands < 0) {
    return Status::InvalidArgument("expected_max_number_of_operands must be >= 0");
  }
  // Every slot is reset before the call returns; a slot that receives an operand is reset as
  // it does (one pass over the caller's array, not two).
  const size_t capacity = static_cast<size_t>(opts->expected_max_number_of_operands);
  auto reset_all = [&] {
    for (size_t i = 0; i < capacity; i++) operands[i].Reset();
  };
  Status s = CheckOpen();
  if (!s.ok()) {
    reset_all();
    return s;
  }
  std::shared_ptr<SuperVersion> sv = GetSuperVersion();  // before the sequence: see Get
  SequenceNumber seq = 0;
  s = ReadSequence(options, &seq);
  if (!s.ok()) {
    reset_all();
    return s;
  }
  const uint64_t start_us = stats_ != nullptr ? NowMicros() : 0;
  LookupKey lkey(key, seq);
  // Each operand goes straight into the caller's slices (from the back: they arrive newest
  // first), pinned on one bundle whose count is set once the number is known; until then no
  // release can reach zero.
  auto bundle = std::make_unique<OperandBundle>(std::numeric_limits<size_t>::max() / 2);
  GetContext ctx(stats_, key, &opts->continue_cb,
                 GetContext::OperandSlots{operands, capacity, &ReleaseOperandBundle, bundle.get()});
  GetFromMemTablesTimed(*sv, lkey, &ctx);
  if (!ctx.resolved()) {
    PerfTimer timer(&PerfContext::get_from_output_files_time);
    s = sv->current->Get(options, lkey, &ctx);
  }
  if (s.ok()) {
    ctx.Finish();
    if (ctx.state() == GetContext::State::kCorrupt) {
      s = ctx.status();
    } else if (ctx.state() != GetContext::State::kFound) {
      s = Status::NotFound();
    }
  }
  const size_t n = ctx.operand_count();
  const size_t filled = std::min(n, capacity);
  if (s.ok()) *number_of_operands = static_cast<int>(n);
  if (s.ok() && n > capacity) {
    s = Status::Incomplete(fmt::format("{} merge operands, room for {}", n, capacity));
  }
  if (!s.ok()) {
    // Unpin what was filled, and the rest; the bundle (and the pins the lookup took) go with
    // this scope.
    reset_all();
    return s;
  }
  ctx.TakePins(&bundle->pins, &bundle->copies);
  bundle->refs.Rearm(filled);  // not yet visible to other threads
  OperandBundle* shared = bundle.release();
  if (filled == 0) std::unique_ptr<OperandBundle> unused(shared);
  // Oldest first from slot 0.
  if (filled < capacity) {
    // The slots no operand reached still hold what the caller left in them.
    for (size_t i = 0; i < capacity - filled; i++) operands[i].Reset();
    // Only the pins move: each slot keeps its own buffer.
    for (size_t i = 0; i < filled; i++) {
      PinnableSlice& from = operands[capacity - filled + i];
      const Slice data = from;
      operands[i].PinSlice(data, &from);
      from.Reset();
    }
  }
  if (PerfCountEnabled()) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < filled; i++) bytes += operands[i].size();
    PerfCount(&PerfContext::get_merge_operands_read_bytes, bytes);
  }
  if (stats_ != nullptr) stats_->recordInHistogram(DB_GET_MERGE_OPERANDS, NowMicros() - start_us);
  return Status::OK();
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  Status s = CheckOpen();
  if (!s.ok()) return NewErrorIterator(s);
  std::shared_ptr<SuperVersion> sv = GetSuperVersion();  // before the sequence: see Get
  SequenceNumber seq = 0;
  s = ReadSequence(options, &seq);
  if (!s.ok()) return NewErrorIterator(s);
  std::vector<std::unique_ptr<InternalIterator>> children;
  children.push_back(sv->mem->NewIterator());
  for (MemTable* m : sv->imm) children.push_back(m->NewIterator());
  sv->current->AddIterators(options, &children);
  auto iter = NewDBIterator(options_.comparator, options_.merge_operator.get(), stats_,
                            NewMergingIterator(&icmp_, std::move(children)), seq);
  // The iterator keeps its SuperVersion (memtables and table files) alive.
  auto* hold = new std::shared_ptr<SuperVersion>(std::move(sv));
  live_iterators_.fetch_add(1, std::memory_order_relaxed);
  iter->RegisterCleanup(
      [](void* p, void* db) {
        std::unique_ptr<std::shared_ptr<SuperVersion>> h(
            static_cast<std::shared_ptr<SuperVersion>*>(p));
        h.reset();
        static_cast<DBImpl*>(db)->live_iterators_.fetch_sub(1, std::memory_order_release);
      },
      hold, this);
  return iter;
}

// ---------------------------------------------------------------- snapshots

const Snapshot* DBImpl::GetSnapshot() {
  if (!CheckOpen().ok()) return nullptr;
  SnapshotImpl* raw = nullptr;
  {
    MutexLock l(&mutex_);
    auto snap = std::make_unique<SnapshotImpl>(last_sequence_.load(std::memory_order_acquire));
    raw = snap.get();
    snapshots_.push_back(std::move(snap));
    raw->position = std::prev(snapshots_.end());
  }
  MutexLock l(&snapshot_mu_);
  live_snapshots_.insert(raw);
  return raw;
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  {
    MutexLock l(&snapshot_mu_);
    // Not ours, or released already: nothing to release (and nothing to dereference).
    if (live_snapshots_.erase(snapshot) == 0) return;
  }
  auto* snap = static_cast<const SnapshotImpl*>(snapshot);
  MutexLock l(&mutex_);
  snapshots_.erase(snap->position);
}

// ---------------------------------------------------------------- properties, close

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  value->clear();
  if (!CheckOpen().ok()) return false;
  std::string_view p = property.ToStringView();
  std::shared_ptr<SuperVersion> sv = GetSuperVersion();
  if (p == "shale.cur-size-active-mem-table") {
    *value = std::to_string(sv->mem->ApproximateMemoryUsage());
  } else if (p == "shale.cur-size-all-mem-tables") {
    size_t total = sv->mem->ApproximateMemoryUsage();
    for (MemTable* m : sv->imm) total += m->ApproximateMemoryUsage();
    *value = std::to_string(total);
  } else if (p == "shale.num-immutable-mem-table") {
    *value = std::to_string(sv->imm.size());
  } else if (p == "shale.num-entries-active-mem-table") {
    *value = std::to_string(sv->mem->num_entries());
  } else if (p == "shale.num-deletes-active-mem-table") {
    *value = std::to_string(sv->mem->num_deletes());
  } else if (p == "shale.latest-sequence-number") {
    *value = std::to_string(last_sequence_.load());
  } else if (p == "shale.num-snapshots") {
    MutexLock l(&mutex_);
    *value = std::to_string(snapshots_.size());
  } else if (p.starts_with("shale.num-files-at-level")) {
    int level = 0;
    std::string_view n = p.substr(std::string_view("shale.num-files-at-level").size());
    auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), level);
    if (ec != std::errc() || ptr != n.data() + n.size() || level < 0 ||
        level >= options_.num_levels) {
      return false;
    }
    *value = std::to_string(sv->current->files(level).size());
  } else if (p == "shale.estimate-num-keys") {
    // Entries in memtables and tables; overwrites and deletions make it an overestimate.
    uint64_t n = sv->mem->num_entries();
    for (MemTable* m : sv->imm) n += m->num_entries();
    for (int level = 0; level < sv->current->num_levels(); level++) {
      for (const auto& f : sv->current->files(level)) {
        Cache::Handle* h = nullptr;
        if (table_cache_->FindTable(f->number, f->file_size, &h).ok()) {
          n += table_cache_->GetReader(h)->properties().num_entries;
          table_cache_->Release(h);
        }
      }
    }
    *value = std::to_string(n);
  } else if (p == "shale.io.async-path") {
    *value = async_path_;
  } else if (p == "shale.background-errors") {
    MutexLock l(&mutex_);
    *value = bg_error_.ok() ? "0" : "1";
  } else if (p == "shale.write-stall") {
    MutexLock l(&mutex_);
    *value = fmt::format("reason: {}; level0-slowdown: {}; level0-stop: {}; memtable-limit: {}",
                         stall_reason_, stall_count_l0_slowdown_, stall_count_l0_stop_,
                         stall_count_memtable_);
  } else if (p == "shale.stats") {
    MutexLock l(&mutex_);
    const Version& v = *sv->current;
    std::string levels = "Level  Files  Size(MB)  Score\n";
    for (int level = 0; level < v.num_levels(); level++) {
      if (v.files(level).empty()) continue;
      const double score = level == 0 ? static_cast<double>(v.files(0).size()) /
                                            options_.level0_file_num_compaction_trigger
                                      : static_cast<double>(v.NumLevelBytes(level)) /
                                            static_cast<double>(versions_->MaxBytesForLevel(level));
      levels += fmt::format("  L{:<3} {:>5} {:>9.2f} {:>6.2f}\n", level, v.files(level).size(),
                            static_cast<double>(v.NumLevelBytes(level)) / 1048576.0, score);
    }
    const uint64_t user_bytes = stats_ != nullptr ? stats_->getTickerCount(BYTES_WRITTEN) : 0;
    const double wamp = flush_bytes_ == 0
                            ? 0
                            : static_cast<double>(flush_bytes_ + compaction_write_bytes_) /
                                  static_cast<double>(flush_bytes_);
    *value = fmt::format(
        "** DB Stats **\nLatest sequence: {}\nMemtables: active {} entries {} bytes, {} "
        "immutable\nWAL: {:06}.log\n** Compaction Stats **\n{}Flushes: {} ({:.2f} MB)\n"
        "Compactions: {} (read {:.2f} MB, wrote {:.2f} MB)\nWrite amplification (flush + "
        "compaction over flush): {:.2f}\nUser bytes written (with statistics): {}\n"
        "Stalls: level0-slowdown {}, level0-stop {}, memtable-limit {} (now: {})\n"
        "Snapshots: {}\nBackground error: {}\n",
        last_sequence_.load(), sv->mem->num_entries(), sv->mem->ApproximateMemoryUsage(),
        sv->imm.size(), log_number_, levels, num_flushes_,
        static_cast<double>(flush_bytes_) / 1048576.0, num_compactions_,
        static_cast<double>(compaction_read_bytes_) / 1048576.0,
        static_cast<double>(compaction_write_bytes_) / 1048576.0, wamp, user_bytes,
        stall_count_l0_slowdown_, stall_count_l0_stop_, stall_count_memtable_, stall_reason_,
        snapshots_.size(), bg_error_.ToString());
  } else {
    return false;
  }
  return true;
}

Status DBImpl::Close() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  {
    MutexLock l(&mutex_);
    if (!snapshots_.empty()) {
      return Status::Aborted("cannot close a DB with unreleased snapshots");
    }
  }
  if (live_iterators_.load(std::memory_order_acquire) > 0) {
    return Status::Aborted("cannot close a DB with live iterators");
  }
  return CloseImpl();
}

// Idempotent: also releases what a failed Open had taken.
Status DBImpl::CloseImpl() {
  closed_.store(true);
  shutdown_requested_.store(true);
  {
    MutexLock l(&mutex_);
    shutting_down_ = true;
    bg_work_cv_.SignalAll();
    bg_done_cv_.SignalAll();
  }
  for (std::thread& t : bg_threads_) t.join();
  bg_threads_.clear();
  Status s;
  if (log_ != nullptr) {
    s = log_->Close();
    log_.reset();
  }
  {
    std::shared_ptr<SuperVersion> last;
    MutexLock l(&sv_mutex_);
    last.swap(super_version_);
  }
  {
    MutexLock l(&mutex_);
    for (const Immutable& i : imm_) i.mem->Unref();
    imm_.clear();
    snapshots_.clear();
    versions_.reset();
  }
  {
    MutexLock l(&snapshot_mu_);
    live_snapshots_.clear();
  }
  if (mem_ != nullptr) {
    mem_->Unref();
    mem_ = nullptr;
  }
  table_cache_.reset();
  db_dir_.reset();
  db_lock_.reset();
  return s;
}

}  // namespace shale
