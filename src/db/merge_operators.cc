#include <cstring>

#include "shale/merge_operator.h"
#include "src/util/coding.h"

namespace shale {

bool MergeOperator::PartialMergeMulti(const Slice& key, const std::deque<Slice>& operand_list,
                                      std::string* new_value) const {
  if (operand_list.size() < 2) return false;
  std::string acc(operand_list[0].data(), operand_list[0].size());
  std::string next;
  for (size_t i = 1; i < operand_list.size(); i++) {
    next.clear();
    if (!PartialMerge(key, Slice(acc), operand_list[i], &next)) return false;
    acc.swap(next);
  }
  *new_value = std::move(acc);
  return true;
}

namespace {

// base, op1, op2 ... joined by delim. Stateless apart from the delimiter.
class StringAppendOperator final : public MergeOperator {
 public:
  explicit StringAppendOperator(char delim) : delim_(delim) {}

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    if (in.existing_value == nullptr && in.operand_list.size() == 1) {
      out->existing_operand = in.operand_list[0];  // no copy needed
      return true;
    }
    size_t total = in.existing_value ? in.existing_value->size() + 1 : 0;
    for (const Slice& op : in.operand_list) total += op.size() + 1;
    out->new_value.reserve(total);
    bool first = true;
    auto add = [&](const Slice& s) {
      if (!first) out->new_value.push_back(delim_);
      out->new_value.append(s.data(), s.size());
      first = false;
    };
    if (in.existing_value != nullptr) add(*in.existing_value);
    for (const Slice& op : in.operand_list) add(op);
    return true;
  }

  bool PartialMerge(const Slice&, const Slice& left, const Slice& right,
                    std::string* new_value) const override {
    new_value->reserve(left.size() + 1 + right.size());
    new_value->assign(left.data(), left.size());
    new_value->push_back(delim_);
    new_value->append(right.data(), right.size());
    return true;
  }

  const char* Name() const override { return "StringAppendOperator"; }

 private:
  const char delim_;
};

// Adds 8-byte little-endian unsigned integers. Stateless.
class UInt64AddOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    uint64_t sum = 0;
    if (in.existing_value != nullptr) {
      if (in.existing_value->size() != 8) return false;
      sum = DecodeFixed64(in.existing_value->data());
    }
    for (const Slice& op : in.operand_list) {
      if (op.size() != 8) return false;
      sum += DecodeFixed64(op.data());
    }
    out->new_value.clear();
    PutFixed64(&out->new_value, sum);
    return true;
  }

  bool PartialMerge(const Slice&, const Slice& left, const Slice& right,
                    std::string* new_value) const override {
    if (left.size() != 8 || right.size() != 8) return false;
    new_value->clear();
    PutFixed64(new_value, DecodeFixed64(left.data()) + DecodeFixed64(right.data()));
    return true;
  }

  const char* Name() const override { return "UInt64AddOperator"; }
};

}  // namespace

std::shared_ptr<MergeOperator> MergeOperators::CreateStringAppendOperator(char delim) {
  return std::make_shared<StringAppendOperator>(delim);
}

std::shared_ptr<MergeOperator> MergeOperators::CreateUInt64AddOperator() {
  return std::make_shared<UInt64AddOperator>();
}

std::shared_ptr<MergeOperator> MergeOperators::CreateFromName(const std::string& name) {
  if (name == "StringAppendOperator" || name == "stringappend") {
    return CreateStringAppendOperator(',');
  }
  if (name == "UInt64AddOperator" || name == "uint64add") return CreateUInt64AddOperator();
  return nullptr;
}

}  // namespace shale
