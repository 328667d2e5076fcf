// MergeOperator: read-modify-write without a read.
//
// DB::Merge records an operand; reads combine a key's operands (oldest first) with its base
// value, if any, through FullMergeV2. Operators that can combine operands without the base
// implement PartialMerge / PartialMergeMulti, which compaction uses to shrink operand chains.
//
// Thread safety: an operator is shared by every thread of a DB; its methods must be callable
// concurrently. Name() is recorded in table files and must stay stable.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale {

struct MergeOperationInput {
  const Slice& key;
  // The base value, or nullptr when the key had none (absent or deleted).
  const Slice* existing_value;
  // Operands, oldest first.
  const std::vector<Slice>& operand_list;
};

struct MergeOperationOutput {
  // The result goes here...
  std::string& new_value;
  // ...unless the result is exactly one of the inputs: then point this at it and leave
  // new_value empty, which saves a copy.
  Slice& existing_operand;
};

class MergeOperator {
 public:
  virtual ~MergeOperator() = default;

  // Combines the base value and the operands. false means the merge failed; the read that needed
  // it returns Corruption for that key.
  virtual bool FullMergeV2(const MergeOperationInput& merge_in,
                           MergeOperationOutput* merge_out) const = 0;

  // Combines two adjacent operands (left older) into one, if the operator can. false: cannot.
  virtual bool PartialMerge(const Slice& /*key*/, const Slice& /*left_operand*/,
                            const Slice& /*right_operand*/, std::string* /*new_value*/) const {
    return false;
  }

  // Combines two or more adjacent operands (oldest first) into one. The default folds
  // PartialMerge from the oldest.
  virtual bool PartialMergeMulti(const Slice& key, const std::deque<Slice>& operand_list,
                                 std::string* new_value) const;

  virtual const char* Name() const = 0;
};

// Operators shale ships.
struct MergeOperators {
  // Joins the base value and the operands, oldest first, with delim between them.
  // Name "StringAppendOperator" (as RocksDB's db_bench names it).
  static std::shared_ptr<MergeOperator> CreateStringAppendOperator(char delim = ',');
  // Treats base and operands as 8-byte little-endian unsigned integers and adds them
  // (wrapping). An operand or base of another size makes the merge fail. Name "UInt64AddOperator".
  static std::shared_ptr<MergeOperator> CreateUInt64AddOperator();
  // Looks an operator up by the name db_bench and shale_ldb accept; nullptr if unknown.
  static std::shared_ptr<MergeOperator> CreateFromName(const std::string& name);
};

}  // namespace shale
