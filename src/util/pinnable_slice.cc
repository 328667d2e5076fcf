#include "shale/pinnable_slice.h"

#include <utility>

#include "src/util/invariants.h"

namespace shale {

Cleanable::Cleanable(Cleanable&& other) noexcept
    : first_(std::exchange(other.first_, Cleanup{})), more_(std::move(other.more_)) {}

Cleanable& Cleanable::operator=(Cleanable&& other) noexcept {
  if (this != &other) {
    DoCleanup();
    first_ = std::exchange(other.first_, Cleanup{});
    more_ = std::move(other.more_);
  }
  return *this;
}

void Cleanable::RegisterMore(CleanupFunction function, void* arg1, void* arg2) {
  SHALE_ASSERT(function != nullptr);
  if (more_ == nullptr) more_ = std::make_unique<std::vector<Cleanup>>();
  more_->push_back(Cleanup{function, arg1, arg2});
}

void Cleanable::DelegateAll(Cleanable* other) {
  SHALE_ASSERT(other != this);
  other->RegisterCleanup(first_.function, first_.arg1, first_.arg2);
  if (more_ != nullptr) {
    for (const Cleanup& c : *more_) other->RegisterCleanup(c.function, c.arg1, c.arg2);
  }
  first_ = Cleanup{};
  more_.reset();
}

void Cleanable::DoCleanupAll() {
  // Detach first so a cleanup that touches this object sees it empty.
  Cleanup first = std::exchange(first_, Cleanup{});
  std::unique_ptr<std::vector<Cleanup>> more = std::move(more_);
  first.function(first.arg1, first.arg2);
  for (const Cleanup& c : *more) c.function(c.arg1, c.arg2);
}

PinnableSlice::PinnableSlice(PinnableSlice&& other) noexcept
    : Slice(other), Cleanable(std::move(other)), pinned_(other.pinned_) {
  if (other.buf_ == &other.self_space_) {
    self_space_ = std::move(other.self_space_);
    buf_ = &self_space_;
  } else {
    buf_ = other.buf_;
  }
  if (!pinned_) static_cast<Slice&>(*this) = Slice(buf_->data(), size());
  other.pinned_ = false;
  static_cast<Slice&>(other) = Slice();
  other.buf_ = &other.self_space_;
}

PinnableSlice& PinnableSlice::operator=(PinnableSlice&& other) noexcept {
  if (this == &other) return *this;
  Cleanable::operator=(std::move(other));
  pinned_ = other.pinned_;
  size_t n = other.size();
  const char* data = other.data();
  if (other.buf_ == &other.self_space_) {
    self_space_ = std::move(other.self_space_);
    buf_ = &self_space_;
  } else {
    buf_ = other.buf_;
  }
  static_cast<Slice&>(*this) = pinned_ ? Slice(data, n) : Slice(buf_->data(), n);
  other.pinned_ = false;
  static_cast<Slice&>(other) = Slice();
  other.buf_ = &other.self_space_;
  return *this;
}

void PinnableSlice::PinSelf(const Slice& s) {
  SHALE_ASSERT(!pinned_);
  buf_->assign(s.data(), s.size());
  static_cast<Slice&>(*this) = Slice(*buf_);
}

void PinnableSlice::remove_prefix(size_t n) {
  SHALE_ASSERT(n <= size());
  if (pinned_) {
    Slice::remove_prefix(n);
  } else {
    buf_->erase(0, n);
    static_cast<Slice&>(*this) = Slice(*buf_);
  }
}

void PinnableSlice::remove_suffix(size_t n) {
  SHALE_ASSERT(n <= size());
  if (pinned_) {
    Slice::remove_suffix(n);
  } else {
    buf_->resize(buf_->size() - n);
    static_cast<Slice&>(*this) = Slice(*buf_);
  }
}

}  // namespace shale
