#include "src/base/get_context.h"

#include <algorithm>

#include "shale/statistics.h"
#include "src/base/merge_helper.h"
#include "src/monitoring/perf_context_imp.h"

namespace shale {

GetContext::GetContext(const MergeOperator* merge_operator, Statistics* stats,
                       const Slice& user_key, PinnableSlice* value)
    : merge_operator_(merge_operator), stats_(stats), user_key_(user_key), value_(value) {}

GetContext::GetContext(Statistics* stats, const Slice& user_key,
                       const std::function<bool(Slice)>* continue_cb, const OperandSlots& slots)
    : merge_operator_(nullptr),
      stats_(stats),
      user_key_(user_key),
      value_(nullptr),
      collect_(true),
      continue_cb_(continue_cb != nullptr && *continue_cb ? continue_cb : nullptr),
      slots_(slots) {}

GetContext::~GetContext() {
  if (merges_seen_ > 0) PerfCount(&PerfContext::internal_merge_count, merges_seen_);
}

// Inlined into SaveValue: it runs once per operand, thousands of times per lookup.
[[gnu::always_inline]] inline void GetContext::AddOperand(const Slice& operand,
                                                          const Pinner& pinner) {
  PinnableSlice* slot = nullptr;
  if (collect_) {
    // Past the caller's slots an operand is only counted.
    if (++operand_count_ > slots_.capacity) return;
    slot = &slots_.slots[slots_.capacity - operand_count_];
  }
  // Field by field: the slice was just stored as two words, and one 16-byte load of it would
  // wait for those stores to retire instead of being forwarded from them.
  const char* data = operand.data();
  const size_t size = operand.size();
  if (pinner.fn != nullptr) {
    if (pinner.source == nullptr || pinner.source != last_pinned_source_) {
      pinner.fn(pinner.arg, &operand_pins_);
      last_pinned_source_ = pinner.source;
    }
  } else {
    operand_copies_.emplace_front(data, size);
    data = operand_copies_.front().data();
  }
  if (slot != nullptr) {
    slot->Reset();  // what the caller left in it
    slot->PinSlice(Slice(data, size), slots_.release, slots_.bundle, nullptr);
  } else {
    operands_.emplace_back(data, size);
  }
}

void GetContext::TakePins(Cleanable* pins, std::forward_list<std::string>* copies) {
  operand_pins_.DelegateCleanupsTo(pins);
  *copies = std::move(operand_copies_);
  operand_copies_.clear();
  last_pinned_source_ = nullptr;
}

void GetContext::OnDeletion() {
  if (collect_) {
    state_ = operand_count_ == 0 ? State::kDeleted : State::kFound;
  } else if (state_ == State::kMerge) {
    ResolveMerge(nullptr);
  } else {
    state_ = State::kDeleted;
  }
}

bool GetContext::SaveValue(const ParsedInternalKey& key, const Slice& value, const Pinner& pinner) {
  // Below a covering range tombstone the entry is deleted, whatever it holds.
  const ValueType type = key.sequence < covering_seq_ ? kTypeDeletion : key.type;
  if (collect_) {
    switch (type) {
      case kTypeValue:
        AddOperand(value, pinner);  // the base is the oldest operand
        state_ = State::kFound;
        return false;
      case kTypeDeletion:
      case kTypeSingleDeletion:
        OnDeletion();
        return false;
      case kTypeMerge:
        merges_seen_++;
        AddOperand(value, pinner);
        state_ = State::kMerge;
        if (continue_cb_ != nullptr && !(*continue_cb_)(value)) {
          state_ = State::kFound;
          return false;
        }
        return true;
      case kTypeRangeDeletion:  // never a point entry
        break;
    }
    state_ = State::kCorrupt;
    merge_status_ = Status::Corruption("unknown value type");
    return false;
  }
  switch (type) {
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
    case kTypeSingleDeletion:
      OnDeletion();
      return false;
    case kTypeMerge:
      if (merge_operator_ == nullptr) {
        // Merge entries exist but no operator was configured to read them.
        state_ = State::kCorrupt;
        merge_status_ = Status::InvalidArgument("merge operand found but no merge_operator set");
        return false;
      }
      merges_seen_++;
      state_ = State::kMerge;
      AddOperand(value, pinner);
      return true;
    case kTypeRangeDeletion:  // never a point entry
      break;
  }
  state_ = State::kCorrupt;
  merge_status_ = Status::Corruption("unknown value type");
  return false;
}

void GetContext::Finish() {
  if (state_ != State::kMerge) return;
  if (collect_) {
    state_ = State::kFound;  // operands without a base
  } else {
    ResolveMerge(nullptr);
  }
}

void GetContext::ResolveMerge(const Slice* base) {
  std::reverse(operands_.begin(), operands_.end());  // oldest first for the operator
  merge_status_ = FullMerge(merge_operator_, user_key_, base, operands_, value_->GetSelf(), stats_);
  operands_.clear();
  operand_pins_.Reset();
  operand_copies_.clear();
  last_pinned_source_ = nullptr;
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
