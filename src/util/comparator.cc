#include "shale/comparator.h"

#include <algorithm>

namespace shale {
namespace {

// memcmp order. Stateless; one static instance.
class BytewiseComparatorImpl final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
  bool Equal(const Slice& a, const Slice& b) const override { return a == b; }
  const char* Name() const override { return "shale.BytewiseComparator"; }
  bool IsBytewise() const override { return true; }

  void FindShortestSeparator(std::string* start, const Slice& limit) const override {
    // Keep the common prefix, then bump the first differing byte if that stays below limit's.
    // When it is exactly one below limit's byte, keep it and bump the first later byte of
    // start that is not 0xff instead: the result still sorts below limit at the first
    // differing byte, and above start at the bumped one. Dense keys (adjacent numbers) often
    // differ by one at their last differing byte; without this their separators stay whole.
    const size_t min_length = std::min(start->size(), limit.size());
    size_t diff = 0;
    while (diff < min_length && (*start)[diff] == limit[diff]) diff++;
    if (diff >= min_length) return;  // one is a prefix of the other
    const auto byte = static_cast<uint8_t>((*start)[diff]);
    const auto limit_byte = static_cast<uint8_t>(limit[diff]);
    if (byte >= limit_byte) return;  // start is not below limit
    if (byte + 1 < limit_byte) {
      (*start)[diff] = static_cast<char>(byte + 1);
      start->resize(diff + 1);
      return;
    }
    for (size_t i = diff + 1; i < start->size(); i++) {
      const auto later = static_cast<uint8_t>((*start)[i]);
      if (later != 0xff) {
        (*start)[i] = static_cast<char>(later + 1);
        start->resize(i + 1);
        return;
      }
    }
  }

  void FindShortSuccessor(std::string* key) const override {
    // The first byte that can be incremented, truncated after it.
    for (size_t i = 0; i < key->size(); i++) {
      auto byte = static_cast<uint8_t>((*key)[i]);
      if (byte != 0xff) {
        (*key)[i] = static_cast<char>(byte + 1);
        key->resize(i + 1);
        return;
      }
    }
  }
};

}  // namespace

const Comparator* BytewiseComparator() {
  static const BytewiseComparatorImpl instance;
  return &instance;
}

}  // namespace shale
