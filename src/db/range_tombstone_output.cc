#include "src/db/range_tombstone_output.h"

#include "src/util/invariants.h"

namespace shale {

size_t AddRangeTombstones(const FragmentedRangeTombstoneList& list,
                          const InternalKeyComparator& icmp, const Slice* lower, const Slice* upper,
                          TableBuilder* builder, std::string* smallest, std::string* largest,
                          Status* status) {
  const Comparator* ucmp = icmp.user_comparator();
  size_t added = 0;
  std::string bound;
  list.ForEachClipped(lower, upper, [&](const Slice& start, const Slice& end, auto seqs) {
    if (!status->ok()) return;
    SHALE_ASSERT(ucmp->Compare(start, end) < 0);
    for (SequenceNumber seq : seqs) {
      *status = builder->AddRangeTombstone(start, end, seq);
      if (!status->ok()) return;
    }
    bound.clear();
    AppendInternalKey(&bound, start, seqs.front(), kTypeRangeDeletion);
    if (smallest->empty() || icmp.Compare(bound, *smallest) < 0) *smallest = bound;
    bound.clear();
    AppendRangeDeletionSentinel(&bound, end);
    if (largest->empty() || icmp.Compare(bound, *largest) > 0) *largest = bound;
    added++;
  });
  return added;
}

}  // namespace shale
