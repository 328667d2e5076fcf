// DBImpl::GetApproximateSizes and GetApproximateMemTableStats: how many bytes (and, in the
// memtables, entries) a key range takes, for applications that split or schedule work by range.
#include "memtable/memtable.h"
#include "src/db/db_impl.h"

namespace shale {

Status DBImpl::GetApproximateSizes(const SizeApproximationOptions& options,
                                   ColumnFamilyHandle* column_family, const Range* ranges, int n,
                                   uint64_t* sizes) {
  Status s = CheckOpen();
  if (!s.ok()) return s;
  s = CheckFamily(column_family);
  if (!s.ok()) return s;
  if (!options.include_files && !options.include_memtables) {
    return Status::InvalidArgument("GetApproximateSizes: neither files nor memtables included");
  }
  if (n < 0) return Status::InvalidArgument("GetApproximateSizes: negative range count");
  std::shared_ptr<SuperVersion> sv = FamilyOf(column_family)->GetSuperVersion();
  if (sv == nullptr) return NoSuperVersion(*FamilyOf(column_family));
  const Comparator* ucmp = sv->cfd->options.comparator;
  for (int i = 0; i < n; i++) {
    if (ucmp->Compare(ranges[i].start, ranges[i].limit) > 0) {
      return Status::InvalidArgument("GetApproximateSizes: a range's limit is before its start");
    }
  }
  for (int i = 0; i < n; i++) {
    uint64_t total = 0;
    if (options.include_files) {
      s = sv->current->ApproximateSize(ranges[i].start, ranges[i].limit, &total);
      if (!s.ok()) return s;
    }
    if (options.include_memtables) {
      uint64_t count = 0, bytes = 0;
      sv->mem->CountRange(ranges[i].start, ranges[i].limit, &count, &bytes);
      total += bytes;
      for (MemTable* m : sv->imm) {
        m->CountRange(ranges[i].start, ranges[i].limit, &count, &bytes);
        total += bytes;
      }
    }
    sizes[i] = total;
  }
  return Status::OK();
}

void DBImpl::GetApproximateMemTableStats(ColumnFamilyHandle* column_family, const Range& range,
                                         uint64_t* count, uint64_t* size) {
  *count = 0;
  *size = 0;
  if (!CheckOpen().ok() || !CheckFamily(column_family).ok()) return;
  std::shared_ptr<SuperVersion> sv = FamilyOf(column_family)->GetSuperVersion();
  if (sv == nullptr) return;
  if (sv->cfd->options.comparator->Compare(range.start, range.limit) > 0) return;
  uint64_t c = 0, b = 0;
  sv->mem->CountRange(range.start, range.limit, &c, &b);
  *count += c;
  *size += b;
  for (MemTable* m : sv->imm) {
    m->CountRange(range.start, range.limit, &c, &b);
    *count += c;
    *size += b;
  }
}

}  // namespace shale
