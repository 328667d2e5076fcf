// The non-virtual conveniences of the public DB interface.
#include "shale/db.h"

#include <map>

namespace shale {

bool DB::KeyMayExist(const ReadOptions& options, const Slice& key, std::string* value,
                     bool* value_found) {
  return KeyMayExist(options, DefaultColumnFamily(), key, value, value_found);
}

Status DB::GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) {
  return GetApproximateSizes(SizeApproximationOptions(), DefaultColumnFamily(), ranges, n, sizes);
}

void DB::GetApproximateMemTableStats(const Range& range, uint64_t* count, uint64_t* size) {
  GetApproximateMemTableStats(DefaultColumnFamily(), range, count, size);
}

Status DB::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  PinnableSlice pinnable(value);
  Status s = Get(options, key, &pinnable);
  if (s.ok() && pinnable.IsPinned()) value->assign(pinnable.data(), pinnable.size());
  return s;
}

Status DB::Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
               std::string* value) {
  PinnableSlice pinnable(value);
  Status s = Get(options, column_family, key, &pinnable);
  if (s.ok() && pinnable.IsPinned()) value->assign(pinnable.data(), pinnable.size());
  return s;
}

Status DB::CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                                std::vector<std::unique_ptr<ColumnFamilyHandle>>* handles) {
  handles->clear();
  for (const ColumnFamilyDescriptor& d : column_families) {
    std::unique_ptr<ColumnFamilyHandle> h;
    Status s = CreateColumnFamily(d.options, d.name, &h);
    if (!s.ok()) return s;  // the families created so far stay, with their handles
    handles->push_back(std::move(h));
  }
  return Status::OK();
}

Status DB::DropColumnFamilies(const std::vector<ColumnFamilyHandle*>& column_families) {
  for (ColumnFamilyHandle* h : column_families) {
    Status s = DropColumnFamily(h);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

std::vector<Status> DB::MultiGet(const ReadOptions& options,
                                 const std::vector<ColumnFamilyHandle*>& column_families,
                                 const std::vector<Slice>& keys, std::vector<std::string>* values) {
  const size_t n = keys.size();
  std::vector<Status> statuses(n);
  values->assign(n, std::string());
  if (column_families.size() != n) {
    statuses.assign(n, Status::InvalidArgument("MultiGet: one column family per key"));
    return statuses;
  }
  // One sequence for every family: the caller's snapshot, or one taken for the call.
  ReadOptions read = options;
  const Snapshot* own = nullptr;
  if (read.snapshot == nullptr) {
    read.snapshot = own = GetSnapshot();
    if (own == nullptr) {  // closed, or a Close is counting snapshots
      statuses.assign(n, Status::Aborted("DB is closed or closing"));
      return statuses;
    }
  }
  std::map<ColumnFamilyHandle*, std::vector<size_t>> by_family;  // positions, in input order
  for (size_t i = 0; i < n; i++) by_family[column_families[i]].push_back(i);
  for (const auto& [family, positions] : by_family) {
    const size_t m = positions.size();
    std::vector<Slice> family_keys(m);
    std::vector<PinnableSlice> pinned(m);
    std::vector<Status> family_statuses(m);
    for (size_t j = 0; j < m; j++) family_keys[j] = keys[positions[j]];
    MultiGet(read, family, m, family_keys.data(), pinned.data(), family_statuses.data(), false);
    for (size_t j = 0; j < m; j++) {
      statuses[positions[j]] = family_statuses[j];
      if (family_statuses[j].ok())
        (*values)[positions[j]].assign(pinned[j].data(), pinned[j].size());
    }
  }
  if (own != nullptr) ReleaseSnapshot(own);
  return statuses;
}

std::vector<Status> DB::MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                 std::vector<std::string>* values) {
  const size_t n = keys.size();
  std::vector<PinnableSlice> pinned(n);
  std::vector<Status> statuses(n);
  MultiGet(options, n, keys.data(), pinned.data(), statuses.data(), false);
  values->resize(n);
  for (size_t i = 0; i < n; i++) {
    if (statuses[i].ok()) {
      (*values)[i].assign(pinned[i].data(), pinned[i].size());
    } else {
      (*values)[i].clear();
    }
  }
  return statuses;
}

}  // namespace shale
