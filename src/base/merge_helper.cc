#include "src/base/merge_helper.h"

#include "shale/statistics.h"

namespace shale {

Status FullMerge(const MergeOperator* op, const Slice& key, const Slice* base,
                 const std::vector<Slice>& operands, std::string* result, Statistics* stats) {
  result->clear();
  Slice existing_operand(nullptr, 0);
  MergeOperationInput in{key, base, operands};
  MergeOperationOutput out{*result, existing_operand};
  if (!op->FullMergeV2(in, &out)) {
    if (stats != nullptr) stats->recordTick(NUMBER_MERGE_FAILURES);
    return Status::Corruption("merge operator failed", op->Name());
  }
  if (result->empty() && existing_operand.data() != nullptr) {
    result->assign(existing_operand.data(), existing_operand.size());
  }
  return Status::OK();
}

}  // namespace shale
