#include "src/db/get_context.h"

#include <algorithm>

#include "shale/statistics.h"
#include "src/db/merge_helper.h"

namespace shale {

GetContext::GetContext(const MergeOperator* merge_operator, Statistics* stats,
                       const Slice& user_key, PinnableSlice* value)
    : merge_operator_(merge_operator),
      stats_(stats),
      user_key_(user_key),
      value_(value) {}

bool GetContext::SaveValue(const ParsedInternalKey& key, const Slice& value,
                           const Pinner& pinner) {
  switch (key.type) {
    case kTypeValue:
      if (state_ == State::kMerge) {
        ResolveMerge(&value);
      } else {
        state_ = State::kFound;
        if (pinner.fn != nullptr) {
          Cleanable pin;
          pinner.fn(pinner.arg, &pin);
          value_->PinSlice(value, &pin);
        } else {
          value_->PinSelf(value);
        }
      }
      return false;
    case kTypeDeletion:
      if (state_ == State::kMerge) {
        ResolveMerge(nullptr);
      } else {
        state_ = State::kDeleted;
      }
      return false;
    case kTypeMerge:
      if (merge_operator_ == nullptr) {
        // Merge entries exist but no operator was configured to read them.
        state_ = State::kCorrupt;
        merge_status_ = Status::InvalidArgument("merge operand found but no merge_operator set");
        return false;
      }
      state_ = State::kMerge;
      if (pinner.fn != nullptr) {
        pinner.fn(pinner.arg, &operand_pins_);
        operands_.push_back(value);
      } else {
        operand_copies_.emplace_back(value.data(), value.size());
        operands_.emplace_back(operand_copies_.back());
      }
      return true;
  }
  state_ = State::kCorrupt;
  merge_status_ = Status::Corruption("unknown value type");
  return false;
}

void GetContext::Finish() {
  if (state_ == State::kMerge) ResolveMerge(nullptr);
}

void GetContext::ResolveMerge(const Slice* base) {
  std::reverse(operands_.begin(), operands_.end());  // oldest first for the operator
  merge_status_ =
      FullMerge(merge_operator_, user_key_, base, operands_, value_->GetSelf(), stats_);
  operands_.clear();
  operand_pins_.Reset();
  operand_copies_.clear();
  if (merge_status_.ok()) {
    value_->PinSelf();
    state_ = State::kFound;
  } else {
    state_ = State::kCorrupt;
  }
}

Status GetContext::status() const {
  switch (state_) {
    case State::kFound:
      return Status::OK();
    case State::kCorrupt:
      return merge_status_;
    default:
      return Status::NotFound();
  }
}

}  // namespace shale
