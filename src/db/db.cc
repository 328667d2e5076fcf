// The non-virtual conveniences of the public DB interface.
#include "shale/db.h"

namespace shale {

Status DB::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  PinnableSlice pinnable(value);
  Status s = Get(options, key, &pinnable);
  if (s.ok() && pinnable.IsPinned()) value->assign(pinnable.data(), pinnable.size());
  return s;
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
