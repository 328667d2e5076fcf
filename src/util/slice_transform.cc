#include "shale/slice_transform.h"

#include <string>

namespace shale {
namespace {

// Ownership: plain values. Thread safety: immutable.
class FixedPrefixTransform final : public SliceTransform {
 public:
  explicit FixedPrefixTransform(size_t len)
      : len_(len), name_("shale.FixedPrefix." + std::to_string(len)) {}
  const char* Name() const override { return name_.c_str(); }
  Slice Transform(const Slice& key) const override { return Slice(key.data(), len_); }
  bool InDomain(const Slice& key) const override { return key.size() >= len_; }
  bool InRange(const Slice& key) const override { return key.size() == len_; }

 private:
  const size_t len_;
  const std::string name_;
};

class CappedPrefixTransform final : public SliceTransform {
 public:
  explicit CappedPrefixTransform(size_t cap)
      : cap_(cap), name_("shale.CappedPrefix." + std::to_string(cap)) {}
  const char* Name() const override { return name_.c_str(); }
  Slice Transform(const Slice& key) const override {
    return Slice(key.data(), key.size() < cap_ ? key.size() : cap_);
  }
  bool InDomain(const Slice&) const override { return true; }
  bool InRange(const Slice& key) const override { return key.size() <= cap_; }

 private:
  const size_t cap_;
  const std::string name_;
};

class NoopTransform final : public SliceTransform {
 public:
  const char* Name() const override { return "shale.Noop"; }
  Slice Transform(const Slice& key) const override { return key; }
  bool InDomain(const Slice&) const override { return true; }
  bool InRange(const Slice&) const override { return true; }
};

}  // namespace

std::shared_ptr<const SliceTransform> NewFixedPrefixTransform(size_t prefix_len) {
  return std::make_shared<FixedPrefixTransform>(prefix_len);
}

std::shared_ptr<const SliceTransform> NewCappedPrefixTransform(size_t cap_len) {
  return std::make_shared<CappedPrefixTransform>(cap_len);
}

std::shared_ptr<const SliceTransform> NewNoopTransform() {
  return std::make_shared<NoopTransform>();
}

}  // namespace shale
