// Helpers that apply a MergeOperator and turn its failure into a Status.
// Thread safety: pure functions (the operator itself must be thread-safe).
#pragma once

#include <string>
#include <vector>

#include "shale/merge_operator.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class Statistics;

// Full merge of operands (oldest first) onto base (nullptr: none) into *result.
// Corruption naming the key if the operator fails.
Status FullMerge(const MergeOperator* op, const Slice& key, const Slice* base,
                 const std::vector<Slice>& operands, std::string* result, Statistics* stats);

}  // namespace shale
