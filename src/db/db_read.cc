// The read path: Get, MultiGet, GetMergeOperands and iterators, and the snapshots they read at.
//
// A read loads the published SuperVersion first and then the sequence to read at (the
// snapshot's, or the latest published), and reads the memtables newest first and then the
// table files of that SuperVersion. Get, MultiGet, GetMergeOperands and iterators never take
// mutex_ (a snapshot is checked under its own small lock, snapshot_mu_); GetSnapshot and
// ReleaseSnapshot take it to change the snapshot list.
#include <fmt/format.h>

#include <forward_list>
#include <limits>
#include <optional>

#include "memtable/memtable.h"
#include "src/base/async_read.h"
#include "src/base/get_context.h"
#include "src/base/multi_get.h"
#include "src/db/db_impl.h"
#include "src/db/db_iter.h"
#include "src/db/merging_iterator.h"
#include "src/monitoring/perf_context_imp.h"
#include "src/util/biased_countdown.h"
#include "src/util/clock.h"

namespace shale {
namespace {

// SuperVersion::GetFromMemTables, timed in the calling thread's PerfContext.
bool GetFromMemTablesTimed(const SuperVersion& sv, const LookupKey& key, GetContext* ctx) {
  PerfTimer timer(&PerfContext::get_from_memtable_time);
  return sv.GetFromMemTables(key, ctx);
}

}  // namespace

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

// ---------------------------------------------------------------- Get

Status DBImpl::Get(const ReadOptions& options, const Slice& key, PinnableSlice* value) {
  return GetImpl(options, default_cfd_.get(), key, value);
}

Status DBImpl::GetImpl(const ReadOptions& options, ColumnFamilyData* cfd, const Slice& key,
                       PinnableSlice* value) {
  value->Reset();
  Status s = CheckOpen();
  if (!s.ok()) return s;
  // The SuperVersion before the sequence (so in every read below): a SuperVersion installed
  // after the sequence was read may come from a compaction that kept only versions newer
  // than it. Loaded first, the SuperVersion holds every version up to the sequence, except
  // writes to memtables it does not have, which are all newer than those it has.
  std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();
  if (sv == nullptr) return NoSuperVersion(*cfd);
  SequenceNumber seq;
  s = ReadSequence(options, &seq);
  if (!s.ok()) return s;
  return GetAt(options, *sv, seq, key, value);
}

Status DBImpl::GetAt(const ReadOptions& options, const SuperVersion& sv_ref, SequenceNumber seq,
                     const Slice& key, PinnableSlice* value) {
  const uint64_t start_us = stats_ != nullptr ? NowMicros() : 0;
  const SuperVersion* sv = &sv_ref;
  LookupKey lkey(key, seq);
  GetContext ctx(sv->cfd->options.merge_operator.get(), stats_, key, value);
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

// ---------------------------------------------------------------- MultiGet

namespace {

// Orders keys by user key, stably (equal keys keep their order). sorted_input is trusted only
// as far as a linear check confirms it.
void SortByUserKey(const Comparator* ucmp, bool sorted_input, std::vector<MultiGetKey*>* keys) {
  auto less = [ucmp](const MultiGetKey* a, const MultiGetKey* b) {
    return ucmp->Compare(a->lkey.user_key(), b->lkey.user_key()) < 0;
  };
  if (!sorted_input || !std::is_sorted(keys->begin(), keys->end(), less)) {
    std::stable_sort(keys->begin(), keys->end(), less);
  }
}

}  // namespace

void DBImpl::MultiGet(const ReadOptions& options, size_t n, const Slice* keys,
                      PinnableSlice* values, Status* statuses, bool sorted_input) {
  MultiGetImpl(options, default_cfd_.get(), n, keys, values, statuses, sorted_input);
}

void DBImpl::MultiGetImpl(const ReadOptions& options, ColumnFamilyData* cfd, size_t n,
                          const Slice* keys, PinnableSlice* values, Status* statuses,
                          bool sorted_input) {
  for (size_t i = 0; i < n; i++) values[i].Reset();
  Status s = CheckOpen();
  if (!s.ok() || n == 0) {
    for (size_t i = 0; i < n; i++) statuses[i] = s;
    return;
  }
  // Every key is read at the same sequence from one SuperVersion, loaded first (see Get):
  // one consistent state.
  std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();
  if (sv == nullptr) s = NoSuperVersion(*cfd);
  SequenceNumber seq = 0;
  if (s.ok()) s = ReadSequence(options, &seq);
  if (!s.ok()) {
    for (size_t i = 0; i < n; i++) statuses[i] = s;
    return;
  }
  const uint64_t start_us = stats_ != nullptr ? NowMicros() : 0;
  const Options& family_options = cfd->options;
  auto batch = std::make_unique<std::optional<MultiGetKey>[]>(n);
  std::vector<MultiGetKey*> order(n);
  for (size_t i = 0; i < n; i++) {
    batch[i].emplace(keys[i], seq, family_options.merge_operator.get(), stats_, &values[i]);
    order[i] = &*batch[i];
  }
  SortByUserKey(family_options.comparator, sorted_input, &order);

  uint64_t memtable_hits = 0;
  std::vector<MultiGetKey*> pending;
  pending.reserve(n);
  for (MultiGetKey* k : order) {
    memtable_hits += GetFromMemTablesTimed(*sv, k->lkey, &k->ctx);
    if (!k->done()) pending.push_back(k);
  }
  if (!pending.empty()) MultiGetFromTables(options, *sv, pending);

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

void DBImpl::MultiGetFromTables(const ReadOptions& options, const SuperVersion& sv,
                                const std::vector<MultiGetKey*>& keys) {
  PerfTimer timer(&PerfContext::get_from_output_files_time);
  AsyncReader* reader = options.async_io ? ThreadAsyncReaderOrFallback(fs_, stats_) : nullptr;
  if (reader != nullptr) {
    AsyncIo io(reader, stats_);
    sv.current->MultiGet(options, keys.data(), keys.size(), &io);
  } else {
    sv.current->MultiGet(options, keys.data(), keys.size(), nullptr);
  }
}

// ---------------------------------------------------------------- GetMergeOperands

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

// The lookup's answer once every level had its say: OK when operands were found.
Status FinishOperandLookup(GetContext* ctx) {
  ctx->Finish();
  if (ctx->state() == GetContext::State::kCorrupt) return ctx->status();
  if (ctx->state() != GetContext::State::kFound) return Status::NotFound();
  return Status::OK();
}

// Gives the bundle the lookup's pins and one reference per filled slot; with none filled it
// goes now, and its pins with it.
void ShareOperandBundle(std::unique_ptr<OperandBundle> bundle, GetContext* ctx, size_t filled) {
  ctx->TakePins(&bundle->pins, &bundle->copies);
  bundle->refs.Rearm(filled);  // not yet visible to other threads
  OperandBundle* shared = bundle.release();
  if (filled == 0) std::unique_ptr<OperandBundle> unused(shared);
}

// The filled slots are the last `filled` of `capacity` (operands arrive newest first and are
// placed from the back): moves them to the front, oldest first from slot 0, and resets the
// slots no operand reached.
void MoveOperandsToFront(PinnableSlice* operands, size_t capacity, size_t filled) {
  if (filled == capacity) return;
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

}  // namespace

Status DBImpl::GetMergeOperands(const ReadOptions& options, const Slice& key,
                                PinnableSlice* operands, GetMergeOperandsOptions* opts,
                                int* number_of_operands) {
  return GetMergeOperandsImpl(options, default_cfd_.get(), key, operands, opts, number_of_operands);
}

Status DBImpl::GetMergeOperandsImpl(const ReadOptions& options, ColumnFamilyData* cfd,
                                    const Slice& key, PinnableSlice* operands,
                                    GetMergeOperandsOptions* opts, int* number_of_operands) {
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
  std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();  // before the sequence: see Get
  if (sv == nullptr) s = NoSuperVersion(*cfd);
  SequenceNumber seq = 0;
  if (s.ok()) s = ReadSequence(options, &seq);
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
  if (s.ok()) s = FinishOperandLookup(&ctx);
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
  ShareOperandBundle(std::move(bundle), &ctx, filled);
  MoveOperandsToFront(operands, capacity, filled);
  if (PerfCountEnabled()) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < filled; i++) bytes += operands[i].size();
    PerfCount(&PerfContext::get_merge_operands_read_bytes, bytes);
  }
  if (stats_ != nullptr) stats_->recordInHistogram(DB_GET_MERGE_OPERANDS, NowMicros() - start_us);
  return Status::OK();
}

bool DBImpl::KeyMayExist(const ReadOptions& options, ColumnFamilyHandle* column_family,
                         const Slice& key, std::string* value, bool* value_found) {
  if (value_found != nullptr) *value_found = false;
  if (!CheckOpen().ok() || !CheckFamily(column_family).ok()) return true;
  std::shared_ptr<SuperVersion> sv = FamilyOf(column_family)->GetSuperVersion();  // see Get
  if (sv == nullptr) return true;
  SequenceNumber seq;
  if (!ReadSequence(options, &seq).ok()) return true;
  LookupKey lkey(key, seq);
  PinnableSlice found;
  GetContext ctx(sv->cfd->options.merge_operator.get(), stats_, key, &found);
  sv->GetFromMemTables(lkey, &ctx);
  if (ctx.resolved()) {
    ctx.Finish();
    const Status s = ctx.status();
    if (s.IsNotFound()) return false;  // deleted
    if (s.ok() && value_found != nullptr && value != nullptr) {
      value->assign(found.data(), found.size());
      *value_found = true;
    }
    return true;
  }
  // Merge operands without their base, or nothing in the memtables: the tables decide.
  if (ctx.state() == GetContext::State::kMerge) return true;
  return sv->current->KeyMayExist(lkey);
}

// ---------------------------------------------------------------- iterators, snapshots

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  return NewIteratorImpl(options, default_cfd_.get());
}

std::unique_ptr<Iterator> DBImpl::NewIteratorImpl(const ReadOptions& options,
                                                  ColumnFamilyData* cfd) {
  Status s = CheckOpen();
  if (!s.ok()) return NewErrorIterator(s);
  // Counted before closing_ is read: a racing Close either sees the count or is seen here (see
  // Close). Uncounted on return unless the iterator handed out takes the count over.
  live_iterators_.fetch_add(1);
  struct Uncount {
    std::atomic<int64_t>* count;
    ~Uncount() {
      if (count != nullptr) count->fetch_sub(1, std::memory_order_release);
    }
  } uncount{&live_iterators_};
  if (closing_.load()) return NewErrorIterator(Status::Aborted("DB is closing"));
  std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();  // before the sequence: see Get
  if (sv == nullptr) return NewErrorIterator(NoSuperVersion(*cfd));
  SequenceNumber seq = 0;
  s = ReadSequence(options, &seq);
  if (!s.ok()) return NewErrorIterator(s);
  const Comparator* ucmp = sv->cfd->options.comparator;
  if (options.iterate_lower_bound != nullptr && options.iterate_upper_bound != nullptr &&
      ucmp->Compare(*options.iterate_lower_bound, *options.iterate_upper_bound) > 0) {
    return NewErrorIterator(
        Status::InvalidArgument("iterate_lower_bound is above iterate_upper_bound"));
  }
  // The range tombstones, gathered after the sequence was read: every tombstone at or below it
  // is in the memtables by then.
  RangeTombstoneLists tombstones;
  for (const MemTable* m : sv->MemTables()) {
    if (auto list = m->RangeTombstones(); list != nullptr) tombstones.push_back(std::move(list));
  }
  s = sv->current->AddRangeTombstones(&tombstones);
  if (!s.ok()) return NewErrorIterator(s);
  std::vector<std::unique_ptr<InternalIterator>> children;
  MergingIteratorOptions merging{options.async_io ? fs_ : nullptr, stats_, {}};
  children.push_back(sv->mem->NewIterator());
  for (MemTable* m : sv->imm) children.push_back(m->NewIterator());
  // The children's sequence bounds serve only to skip ranges a tombstone covers. Memtables
  // give none: a range tombstone's skip never moves them.
  std::vector<SequenceNumber>* newest = nullptr;
  if (!tombstones.empty()) {
    merging.newest_sequences.assign(children.size(), kMaxSequenceNumber);
    newest = &merging.newest_sequences;
  }
  sv->current->AddIterators(options, &children, newest);
  const ColumnFamilyData& family = *sv->cfd;
  DBIterOptions iter_options;
  iter_options.lower_bound = options.iterate_lower_bound;
  iter_options.upper_bound = options.iterate_upper_bound;
  iter_options.prefix_extractor = family.options.prefix_extractor.get();  // held by sv->cfd
  iter_options.prefix_same_as_start = options.prefix_same_as_start;
  iter_options.total_order_seek = options.total_order_seek;
  iter_options.max_sequential_skip_in_iterations = family.options.max_sequential_skip_in_iterations;
  if (!tombstones.empty()) {
    iter_options.range_tombstones =
        std::make_shared<const RangeTombstoneSet>(std::move(tombstones));
  }
  std::unique_ptr<ReadSampler> sampler;
  if (family.options.read_compaction_bytes_per_seek > 0 &&
      !family.options.disable_auto_compactions) {
    // The family (cfd, which sv->cfd is) outlives the sampler: the iterator's SuperVersion
    // holds it.
    ColumnFamilyData* requester = cfd;
    sampler = std::make_unique<ReadSampler>(
        sv->current.get(), family.options.read_compaction_bytes_per_seek,
        iterator_seed_.fetch_add(1, std::memory_order_relaxed),
        [this, requester] { RequestReadCompaction(requester); });
  }
  auto iter =
      NewDBIterator(family.options.comparator, family.options.merge_operator.get(), stats_,
                    NewMergingIterator(&family.icmp, std::move(children), std::move(merging)), seq,
                    iter_options, std::move(sampler));
  // The iterator keeps its SuperVersion (memtables and table files) alive.
  auto* hold = new std::shared_ptr<SuperVersion>(std::move(sv));
  iter->RegisterCleanup(
      [](void* p, void* db) {
        std::unique_ptr<std::shared_ptr<SuperVersion>> h(
            static_cast<std::shared_ptr<SuperVersion>*>(p));
        h.reset();
        static_cast<DBImpl*>(db)->live_iterators_.fetch_sub(1, std::memory_order_release);
      },
      hold, this);
  uncount.count = nullptr;  // the cleanup releases it
  return iter;
}

const Snapshot* DBImpl::GetSnapshot() {
  if (!CheckOpen().ok()) return nullptr;
  SnapshotImpl* raw = nullptr;
  {
    MutexLock l(&mutex_);
    // Close counts snapshots under mutex_ after setting closing_: this one is either refused
    // here or counted there.
    if (closing_.load()) return nullptr;
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

}  // namespace shale
