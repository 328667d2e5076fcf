// DBImpl's column family calls: creating and dropping families, the handles, and the
// handle-taking forms of the read and write calls (a call checks that its handle is one of this
// DB's and names a live family, then acts on that family; the calls without a handle act on
// the default family).
#include <fmt/format.h>

#include "src/db/column_family.h"
#include "src/db/db_impl.h"
#include "src/util/invariants.h"

namespace shale {

std::unique_ptr<Iterator> NewErrorIterator(const Status& status);

Status DBImpl::CheckFamily(const ColumnFamilyHandle* column_family) const {
  if (Status s = CheckOpen(); !s.ok()) return s;  // after Close, every call is Aborted
  if (column_family == nullptr) return Status::InvalidArgument("null column family handle");
  const auto* h = dynamic_cast<const ColumnFamilyHandleImpl*>(column_family);
  if (h == nullptr || h->db() != this) {
    return Status::InvalidArgument("column family handle of another DB", column_family->GetName());
  }
  if (h->cfd()->dropped.load(std::memory_order_acquire)) {
    return Status::InvalidArgument(
        fmt::format("column family {} ({}) was dropped", h->GetName(), h->GetID()));
  }
  return Status::OK();
}

ColumnFamilyData* DBImpl::FamilyOf(ColumnFamilyHandle* column_family) {
  return static_cast<ColumnFamilyHandleImpl*>(column_family)->cfd().get();
}

std::unique_ptr<ColumnFamilyHandle> DBImpl::NewFamilyHandle(const std::string& name) const {
  for (const auto& [id, cfd] : *Families()) {
    if (cfd->name == name) return std::make_unique<ColumnFamilyHandleImpl>(this, cfd);
  }
  return nullptr;
}

ColumnFamilyHandle* DBImpl::DefaultColumnFamily() const { return default_family_.get(); }

Status DBImpl::CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                                  std::unique_ptr<ColumnFamilyHandle>* handle) {
  handle->reset();
  if (Status s = CheckOpen(); !s.ok()) return s;
  if (name.empty()) return Status::InvalidArgument("empty column family name");
  if (Status s = ValidateOptions(Options(options_, options)); !s.ok()) return s;
  std::shared_ptr<ColumnFamilyData> created;
  Status s = WithWritesStopped([&]() -> Status {
    MutexLock l(&mutex_);
    if (!bg_error_.ok()) return Status::IOError("DB is read-only", bg_error_.ToString());
    for (const auto& [id, cfd] : families_) {
      if (cfd->name == name) return Status::InvalidArgument("column family already exists", name);
    }
    // The id is the VersionSet's to hand out; the family's data starts in the current WAL.
    const uint32_t id = versions_->max_column_family() + 1;
    std::shared_ptr<ColumnFamilyData> cfd = NewFamilyData(id, name, options);
    uint32_t recorded = 0;
    Status r = versions_->CreateColumnFamily(name, cfd->config(), log_number_, &recorded);
    if (!r.ok()) {
      // The record may be durable all the same: the DB stops taking writes (Resume retries the
      // MANIFEST from the installed state, which has no such family).
      SetBackgroundErrorLocked(r);
      return r;
    }
    SHALE_ASSERT(recorded == id);
    cfd->mem = cfd->NewMemTable();
    cfd->mem_log_number = log_number_;
    InstallSuperVersion(cfd.get());
    FamilyMap next = families_;
    next.emplace(id, cfd);
    PublishFamilies(std::move(next));
    created = std::move(cfd);
    return Status::OK();
  });
  if (s.ok()) *handle = std::make_unique<ColumnFamilyHandleImpl>(this, std::move(created));
  return s;
}

Status DBImpl::DropColumnFamily(ColumnFamilyHandle* column_family) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  ColumnFamilyData* cfd = FamilyOf(column_family);
  if (cfd->id == 0) return Status::InvalidArgument("the default column family cannot be dropped");
  return WithWritesStopped([&]() -> Status {
    MutexLock l(&mutex_);
    if (cfd->dropped.load(std::memory_order_relaxed)) {
      return Status::InvalidArgument("column family was dropped", cfd->name);
    }
    if (!bg_error_.ok()) return Status::IOError("DB is read-only", bg_error_.ToString());
    // Flushes and compactions of the family that are running notice the drop when they finish
    // (nothing of theirs is recorded); a CompactRange of it ends with InvalidArgument.
    Status r = versions_->DropColumnFamily(cfd->id);
    if (!r.ok()) {
      SetBackgroundErrorLocked(r);
      return r;
    }
    cfd->dropped.store(true, std::memory_order_release);
    dropped_families_.push_back(FamilyOf(column_family)->shared_from_this());
    FamilyMap next = families_;
    next.erase(cfd->id);
    PublishFamilies(std::move(next));
    // Reads and iterators in flight keep the SuperVersion they hold; the family's files go
    // once the last of them is done (a later DeleteObsoleteFiles).
    ReleaseSuperVersion(cfd);
    DeleteObsoleteFiles();
    bg_done_cv_.SignalAll();  // waiters on the family's flushes
    return Status::OK();
  });
}

Status DBImpl::DestroyColumnFamilyHandle(std::unique_ptr<ColumnFamilyHandle> column_family) {
  if (column_family.get() == default_family_.get()) {
    // DefaultColumnFamily() wrapped by the caller: the DB owns it and keeps it.
    (void)column_family.release();
    return Status::InvalidArgument("DefaultColumnFamily() belongs to the DB");
  }
  if (Status s = CheckOpen(); !s.ok()) return s;
  if (column_family == nullptr) return Status::InvalidArgument("null column family handle");
  const auto* h = dynamic_cast<const ColumnFamilyHandleImpl*>(column_family.get());
  if (h == nullptr || h->db() != this) {
    return Status::InvalidArgument("column family handle of another DB", column_family->GetName());
  }
  return Status::OK();  // destroyed on return; a dropped family's data goes with its last user
}

Status DBImpl::Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
                   const Slice& value) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  WriteBatch batch;
  Status s = batch.Put(column_family, key, value);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                            const Slice& key) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  WriteBatch batch;
  Status s = batch.SingleDelete(column_family, key);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::DeleteRange(const WriteOptions& options, ColumnFamilyHandle* column_family,
                           const Slice& begin_key, const Slice& end_key) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  WriteBatch batch;
  Status s = batch.DeleteRange(column_family, begin_key, end_key);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);  // checks the range's order
}

Status DBImpl::Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  WriteBatch batch;
  Status s = batch.Delete(column_family, key);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::Merge(const WriteOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, const Slice& operand) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  if (!FamilyOf(column_family)->options.merge_operator) {
    return Status::InvalidArgument("Merge requires a merge_operator", column_family->GetName());
  }
  WriteBatch batch;
  Status s = batch.Merge(column_family, key, operand);
  if (!s.ok()) return s;
  return WriteImpl(options, &batch);
}

Status DBImpl::Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
                   PinnableSlice* value) {
  if (Status s = CheckFamily(column_family); !s.ok()) {
    value->Reset();
    return s;
  }
  return GetImpl(options, FamilyOf(column_family), key, value);
}

void DBImpl::MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family, size_t n,
                      const Slice* keys, PinnableSlice* values, Status* statuses,
                      bool sorted_input) {
  if (Status s = CheckFamily(column_family); !s.ok()) {
    for (size_t i = 0; i < n; i++) {
      values[i].Reset();
      statuses[i] = s;
    }
    return;
  }
  MultiGetImpl(options, FamilyOf(column_family), n, keys, values, statuses, sorted_input);
}

Status DBImpl::GetMergeOperands(const ReadOptions& options, ColumnFamilyHandle* column_family,
                                const Slice& key, PinnableSlice* operands,
                                GetMergeOperandsOptions* opts, int* number_of_operands) {
  if (Status s = CheckFamily(column_family); !s.ok()) {
    // As the call without a handle leaves a refused call: no operands, every slot reset.
    if (number_of_operands != nullptr) *number_of_operands = 0;
    if (operands != nullptr && opts != nullptr) {
      for (int i = 0; i < opts->expected_max_number_of_operands; i++) operands[i].Reset();
    }
    return s;
  }
  return GetMergeOperandsImpl(options, FamilyOf(column_family), key, operands, opts,
                              number_of_operands);
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options,
                                              ColumnFamilyHandle* column_family) {
  if (Status s = CheckFamily(column_family); !s.ok()) return NewErrorIterator(s);
  return NewIteratorImpl(options, FamilyOf(column_family));
}

Status DBImpl::NewIterators(const ReadOptions& options,
                            const std::vector<ColumnFamilyHandle*>& column_families,
                            std::vector<std::unique_ptr<Iterator>>* iterators) {
  iterators->clear();
  for (ColumnFamilyHandle* h : column_families) {
    if (Status s = CheckFamily(h); !s.ok()) return s;
  }
  // One sequence for all: the caller's snapshot, or one held while the iterators are made
  // (each keeps its sequence and what it reads after the snapshot is released).
  ReadOptions read = options;
  const Snapshot* own = nullptr;
  if (read.snapshot == nullptr) {
    if (Status s = CheckOpen(); !s.ok()) return s;
    read.snapshot = own = GetSnapshot();
    if (own == nullptr) return Status::Aborted("DB is closed or closing");
  }
  Status s;
  for (size_t i = 0; i < column_families.size() && s.ok(); i++) {
    iterators->push_back(NewIteratorImpl(read, FamilyOf(column_families[i])));
    s = iterators->back()->status();
  }
  if (own != nullptr) ReleaseSnapshot(own);
  if (!s.ok()) iterators->clear();
  return s;
}

Status DBImpl::Flush(const FlushOptions& options) {
  if (Status s = CheckOpen(); !s.ok()) return s;
  return FlushImpl(options, {default_cfd_.get()});
}

Status DBImpl::Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return FlushImpl(options, {FamilyOf(column_family)});
}

Status DBImpl::Flush(const FlushOptions& options,
                     const std::vector<ColumnFamilyHandle*>& column_families) {
  std::vector<ColumnFamilyData*> families;
  for (ColumnFamilyHandle* h : column_families) {
    if (Status s = CheckFamily(h); !s.ok()) return s;
    families.push_back(FamilyOf(h));
  }
  if (families.empty()) return Status::OK();
  return FlushImpl(options, families);
}

Status DBImpl::CompactRange(const CompactRangeOptions& options, const Slice* begin,
                            const Slice* end) {
  if (Status s = CheckOpen(); !s.ok()) return s;
  return CompactRangeImpl(options, default_cfd_.get(), begin, end);
}

Status DBImpl::CompactRange(const CompactRangeOptions& options, ColumnFamilyHandle* column_family,
                            const Slice* begin, const Slice* end) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return CompactRangeImpl(options, FamilyOf(column_family), begin, end);
}

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  return GetPropertyImpl(default_cfd_.get(), property, value);
}

bool DBImpl::GetProperty(ColumnFamilyHandle* column_family, const Slice& property,
                         std::string* value) {
  if (!CheckFamily(column_family).ok()) return false;
  return GetPropertyImpl(FamilyOf(column_family), property, value);
}

}  // namespace shale
