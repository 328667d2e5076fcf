// Slice: a pointer and a length into bytes owned by someone else.
//
// Thread safety: a Slice is a value; its referent must outlive it and must not change while read.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace shale {

class Slice {
 public:
  constexpr Slice() noexcept = default;
  constexpr Slice(const char* data, size_t size) noexcept : data_(data), size_(size) {}
  Slice(const std::string& s) noexcept : data_(s.data()), size_(s.size()) {}          // NOLINT
  constexpr Slice(std::string_view s) noexcept : data_(s.data()), size_(s.size()) {}  // NOLINT
  Slice(const char* s) noexcept : data_(s), size_(std::strlen(s)) {}                  // NOLINT

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  char operator[](size_t n) const {
    assert(n < size_);
    return data_[n];
  }

  void clear() {
    data_ = "";
    size_ = 0;
  }
  void remove_prefix(size_t n) {
    assert(n <= size_);
    data_ += n;
    size_ -= n;
  }
  void remove_suffix(size_t n) {
    assert(n <= size_);
    size_ -= n;
  }

  std::string ToString(bool hex = false) const;
  std::string_view ToStringView() const { return std::string_view(data_, size_); }

  // Three-way bytewise comparison: <0, 0, >0.
  int compare(const Slice& b) const {
    const size_t min_len = size_ < b.size_ ? size_ : b.size_;
    int r = min_len == 0 ? 0 : std::memcmp(data_, b.data_, min_len);
    if (r == 0) {
      if (size_ < b.size_) return -1;
      if (size_ > b.size_) return +1;
    }
    return r;
  }
  bool starts_with(const Slice& x) const {
    return size_ >= x.size_ && (x.size_ == 0 || std::memcmp(data_, x.data_, x.size_) == 0);
  }

  friend bool operator==(const Slice& x, const Slice& y) {
    return x.size() == y.size() &&
           (x.size() == 0 || std::memcmp(x.data(), y.data(), x.size()) == 0);
  }

 private:
  const char* data_ = "";
  size_t size_ = 0;
};

}  // namespace shale
