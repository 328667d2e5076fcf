// DBImpl's column family calls: the handles, and the handle-taking forms of the read and write
// calls. The DB holds the default family only (shale/column_family.h): a call checks that its
// handle is one of this DB's and names that family, then acts as the call without a handle.
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
  if (h->GetID() != 0) {
    return Status::InvalidArgument(
        fmt::format("column family {} ({}) does not exist", h->GetName(), h->GetID()));
  }
  return Status::OK();
}

std::unique_ptr<ColumnFamilyHandle> DBImpl::NewDefaultFamilyHandle() const {
  return std::make_unique<ColumnFamilyHandleImpl>(this, 0, kDefaultColumnFamilyName,
                                                  options_.comparator);
}

ColumnFamilyHandle* DBImpl::DefaultColumnFamily() const { return default_family_.get(); }

Status DBImpl::CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                                  std::unique_ptr<ColumnFamilyHandle>* handle) {
  (void)options;
  handle->reset();
  if (Status s = CheckOpen(); !s.ok()) return s;
  if (name.empty()) return Status::InvalidArgument("empty column family name");
  if (name == kDefaultColumnFamilyName) {
    return Status::InvalidArgument("column family already exists", name);
  }
  return Status::NotSupported("creating column families",
                              "this build holds the default family only");
}

Status DBImpl::DropColumnFamily(ColumnFamilyHandle* column_family) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return Status::InvalidArgument("the default column family cannot be dropped");
}

Status DBImpl::DestroyColumnFamilyHandle(std::unique_ptr<ColumnFamilyHandle> column_family) {
  if (column_family.get() == default_family_.get()) {
    // DefaultColumnFamily() wrapped by the caller: the DB owns it and keeps it.
    (void)column_family.release();
    return Status::InvalidArgument("DefaultColumnFamily() belongs to the DB");
  }
  return CheckFamily(column_family.get());  // destroyed on return either way
}

Status DBImpl::Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
                   const Slice& value) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return Put(options, key, value);
}

Status DBImpl::Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return Delete(options, key);
}

Status DBImpl::Merge(const WriteOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, const Slice& operand) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return Merge(options, key, operand);
}

Status DBImpl::Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
                   PinnableSlice* value) {
  if (Status s = CheckFamily(column_family); !s.ok()) {
    value->Reset();
    return s;
  }
  return Get(options, key, value);
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
  MultiGet(options, n, keys, values, statuses, sorted_input);
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
  return GetMergeOperands(options, key, operands, opts, number_of_operands);
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options,
                                              ColumnFamilyHandle* column_family) {
  if (Status s = CheckFamily(column_family); !s.ok()) return NewErrorIterator(s);
  return NewIterator(options);
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
  }
  Status s;
  for (size_t i = 0; i < column_families.size() && s.ok(); i++) {
    iterators->push_back(NewIterator(read));
    s = iterators->back()->status();
  }
  if (own != nullptr) ReleaseSnapshot(own);
  if (!s.ok()) iterators->clear();
  return s;
}

Status DBImpl::Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return Flush(options);
}

Status DBImpl::Flush(const FlushOptions& options,
                     const std::vector<ColumnFamilyHandle*>& column_families) {
  for (ColumnFamilyHandle* h : column_families) {
    if (Status s = CheckFamily(h); !s.ok()) return s;
  }
  if (column_families.empty()) return Status::OK();
  return Flush(options);
}

Status DBImpl::CompactRange(const CompactRangeOptions& options, ColumnFamilyHandle* column_family,
                            const Slice* begin, const Slice* end) {
  if (Status s = CheckFamily(column_family); !s.ok()) return s;
  return CompactRange(options, begin, end);
}

bool DBImpl::GetProperty(ColumnFamilyHandle* column_family, const Slice& property,
                         std::string* value) {
  if (!CheckFamily(column_family).ok()) return false;
  return GetProperty(property, value);
}

}  // namespace shale
