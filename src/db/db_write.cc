// The write path: Put, Delete, Merge and Write each hand one WriteBatch to the WriteThread. The
// leader of a write group makes room (MakeRoomForWrite, db_background.cc), allocates the
// group's sequence numbers, appends the group to the WAL as one record (synced when a member
// asked; logs an earlier memtable switch left unsynced are synced before it), inserts it into
// the memtable and publishes its sequence numbers to readers. SyncWAL syncs the WAL as an
// exclusive writer.
#include <fmt/format.h>

#include <functional>

#include "memtable/memtable.h"
#include "src/db/db_impl.h"
#include "src/db/write_batch_internal.h"
#include "src/monitoring/perf_context_imp.h"
#include "src/util/clock.h"
#include "src/util/invariants.h"

namespace shale {

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

Status DBImpl::SingleDelete(const WriteOptions& options, const Slice& key) {
  WriteBatch batch;
  Status s = batch.SingleDelete(key);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::DeleteRange(const WriteOptions& options, const Slice& begin_key,
                           const Slice& end_key) {
  WriteBatch batch;
  Status s = batch.DeleteRange(begin_key, end_key);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);  // checks the range's order
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
  // A batch with a Merge record needs an operator, like DB::Merge (for other families,
  // CheckBatchFamilies checks theirs).
  if (!WriteBatchInternal::HasColumnFamilyRecords(batch) && !options_.merge_operator &&
      WriteBatchInternal::HasMerge(batch)) {
    return Status::InvalidArgument("Merge requires a merge_operator");
  }
  return WriteImpl(options, batch);
}

Status DBImpl::CheckBatchFamilies(const WriteBatch* batch) const {
  class Checker : public RecordHandler {
   public:
    explicit Checker(const FamilyMap& families) : families_(families) {}
    Status Record(uint32_t id, ValueType type, const Slice& key, const Slice* value) override {
      auto it = families_.find(id);
      if (it == families_.end()) {
        return Status::InvalidArgument(fmt::format("column family {} does not exist", id));
      }
      if (type == kTypeMerge && !it->second->options.merge_operator) {
        return Status::InvalidArgument("Merge requires a merge_operator",
                                       "column family " + it->second->name);
      }
      if (type == kTypeRangeDeletion && it->second->options.comparator->Compare(key, *value) > 0) {
        return Status::InvalidArgument("DeleteRange: end key comes before begin key",
                                       "column family " + it->second->name);
      }
      return Status::OK();
    }

   private:
    const FamilyMap& families_;
  };
  const std::shared_ptr<const FamilyMap> families = Families();
  Checker checker(*families);
  return batch->Iterate(&checker);
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
  SHALE_TEST_HOOK("DBImpl::WriteImpl:AfterCheckOpen");
  // A record of a family the DB does not hold (or a Merge into one without an operator, or a
  // range deletion whose end comes before its begin) is refused, naming it, and so is a
  // malformed batch, before anything is written.
  if (WriteBatchInternal::HasColumnFamilyRecords(batch) ||
      WriteBatchInternal::HasRangeDeletions(batch)) {
    s = CheckBatchFamilies(batch);
    if (!s.ok()) return s;
  }
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
  // ExitAsBatchGroupLeader (pipelined: until ExitWalStage).
  WriteThread::Group group;
  write_thread_.BuildBatchGroup(&w, &group);
  // Switch a full memtable, or stall while flush and compaction catch up; also refuses writes
  // while the DB is read-only after an error.
  {
    PerfTimer delay_timer(&PerfContext::write_delay_time);
    s = MakeRoomForWrite(group.total_bytes, &w);
  }
  const SequenceNumber first_seq = last_allocated_sequence_ + 1;
  const SequenceNumber last_seq = last_allocated_sequence_ + group.total_count;
  // Sequence numbers only grow on the write path: the group's first sequence is above the last
  // one published to readers, since a group publishes at most what it allocated
  // (last_sequence_ <= last_allocated_sequence_). A read at a published sequence or a snapshot
  // therefore never sees a write made after it.
  SHALE_ASSERT(first_seq > last_sequence_.load(std::memory_order_relaxed));
  if (s.ok() && last_seq > kMaxSequenceNumber) s = Status::IOError("sequence numbers exhausted");
  if (s.ok() && !group.disable_wal) s = WriteGroupToLog(group, first_seq, last_seq);
  if (s.ok()) last_allocated_sequence_ = last_seq;
  if (write_thread_.pipelined()) {
    // The next group's leader may write the WAL now; this group inserts and publishes once
    // the groups before it have (sequences become visible in order).
    write_thread_.ExitWalStage(&group);
    PerfTimer earlier_timer(&PerfContext::write_thread_wait_nanos);
    write_thread_.WaitForEarlierGroups(&w);
  }
  if (s.ok()) InsertGroup(group, first_seq, last_seq);
  write_thread_.ExitAsBatchGroupLeader(group, s);
  if (stats_ != nullptr) stats_->recordInHistogram(DB_WRITE, NowMicros() - start_us);
  return s;
}

// WriteGroupToLog and InsertGroup are inline: WriteImpl, their only caller, is the write hot path.
[[gnu::always_inline]] inline Status DBImpl::WriteGroupToLog(const WriteThread::Group& group,
                                                             SequenceNumber first_seq,
                                                             SequenceNumber last_seq) {
  PerfTimer wal_timer(&PerfContext::write_wal_time);
  // A group of one is its own batch, given the group's sequence (the same bytes
  // BuildGroupRecord would assemble, without copying the batch).
  // The caller's batch gets its sequence back afterwards: DB::Write does not modify it.
  std::string merged;
  Slice record;
  WriteBatch* const lone = group.members.size() == 1 ? group.members[0]->batch : nullptr;
  const SequenceNumber lone_sequence = lone != nullptr ? WriteBatchInternal::Sequence(lone) : 0;
  if (lone != nullptr) {
    WriteBatchInternal::SetSequence(lone, first_seq);
    record = WriteBatchInternal::Contents(lone);
  } else {
    BuildGroupRecord(group, first_seq, &merged);
    record = merged;
  }
  Status s = log_->AddRecord(record);
  if (lone != nullptr) WriteBatchInternal::SetSequence(lone, lone_sequence);
  if (s.ok()) log_last_sequence_ = last_seq;
  if (s.ok() && group.need_sync) {
    const uint64_t sync_start = NowMicros();
    if (has_unsynced_logs_.load(std::memory_order_relaxed)) s = SyncClosedLogs();
    if (s.ok()) s = log_->Sync();
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
  return s;
}

[[gnu::always_inline]] inline void DBImpl::InsertGroup(const WriteThread::Group& group,
                                                       SequenceNumber first_seq,
                                                       SequenceNumber last_seq) {
  PerfTimer memtable_timer(&PerfContext::write_memtable_time);
  SequenceNumber seq = first_seq;
  // Families change only while writes are stopped: this group sees one set throughout. A
  // record of a family dropped after its batch was checked is skipped (as if written just
  // before the drop).
  std::shared_ptr<const FamilyMap> families;
  std::function<MemTable*(uint32_t)> mem_of;
  MemTable* const default_mem = default_cfd_->mem;
  for (const WriteThread::Writer* m : group.members) {
    Status ins;
    if (!WriteBatchInternal::HasColumnFamilyRecords(m->batch)) {
      ins = WriteBatchInternal::InsertInto(m->batch, seq, default_mem);
    } else {
      if (families == nullptr) {
        families = Families();
        mem_of = [&families](uint32_t id) -> MemTable* {
          auto it = families->find(id);
          return it == families->end() ? nullptr : it->second->mem;
        };
      }
      ins = WriteBatchInternal::InsertInto(m->batch, seq, mem_of);
    }
    SHALE_ASSERT(ins.ok());  // batches built through the API are well formed
    ins.PermitUncheckedError();
    seq += m->batch->Count();
  }
  last_sequence_.store(last_seq, std::memory_order_release);
  if (stats_ != nullptr) {
    stats_->recordTick(NUMBER_KEYS_WRITTEN, group.total_count);
    stats_->recordTick(BYTES_WRITTEN, group.total_bytes);
    stats_->recordTick(WRITE_DONE_BY_SELF);
    stats_->recordInHistogram(WRITE_GROUP_SIZE, group.members.size());
  }
}

Status DBImpl::SyncWAL() {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  return WithWritesStopped([this]() -> Status {
    if (read_only_.load()) {
      MutexLock l(&mutex_);
      return Status::IOError("DB is read-only after an earlier error", bg_error_.ToString());
    }
    Status r = SyncClosedLogs();
    if (r.ok()) r = log_->Sync();
    if (!r.ok()) {
      SetBackgroundError(r);
    } else if (stats_ != nullptr) {
      stats_->recordTick(WAL_FILE_SYNCED);
    }
    return r;
  });
}

}  // namespace shale
