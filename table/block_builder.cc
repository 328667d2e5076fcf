#include "table/block_builder.h"

#include <algorithm>

#include "src/util/coding.h"
#include "src/util/invariants.h"

namespace shale {

BlockBuilder::BlockBuilder(int restart_interval, BlockValueFormat values)
    : restart_interval_(restart_interval), values_(values) {
  SHALE_ASSERT(restart_interval_ >= 1);
  restarts_.push_back(0);
}

void BlockBuilder::Reset() {
  buffer_.clear();
  restarts_.assign(1, 0);
  counter_ = 0;
  num_entries_ = 0;
  finished_ = false;
  last_key_.clear();
}

void BlockBuilder::Add(const Slice& key, const Slice& value) {
  SHALE_ASSERT(!finished_);
  size_t shared = 0;
  if (counter_ < restart_interval_ && num_entries_ > 0) {
    const size_t limit = std::min(last_key_.size(), key.size());
    while (shared < limit && last_key_[shared] == key[shared]) shared++;
  } else if (num_entries_ > 0) {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  const size_t unshared = key.size() - shared;
  PutVarint32(&buffer_, static_cast<uint32_t>(shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(unshared));
  if (values_ == BlockValueFormat::kSized) {
    PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
  } else if constexpr (kInvariantChecks) {
    // The reader finds the value's end from its two varints.
    Slice v = value;
    uint64_t offset, size;
    SHALE_ASSERT(GetVarint64(&v, &offset) && GetVarint64(&v, &size) && v.empty());
  }
  buffer_.append(key.data() + shared, unshared);
  buffer_.append(value.data(), value.size());
  last_key_.resize(shared);
  last_key_.append(key.data() + shared, unshared);
  counter_++;
  num_entries_++;
}

Slice BlockBuilder::Finish() {
  if (!finished_) {
    for (uint32_t r : restarts_) PutFixed32(&buffer_, r);
    PutFixed32(&buffer_, static_cast<uint32_t>(restarts_.size()));
    finished_ = true;
  }
  return buffer_;
}

}  // namespace shale
