// Cleanable and PinnableSlice: results that borrow memory instead of copying it.
//
// A Cleanable owns a list of cleanup callbacks that run, in registration order, when it is
// Reset(), destroyed, or overwritten by a move. A PinnableSlice is a Slice that either points
// into memory kept alive by its cleanups (IsPinned()) or into its own buffer (PinSelf).
//
// Ownership: both are move-only; a moved-from object is empty. Every shale read entry point
// Reset()s the PinnableSlices it is given before filling them, so reusing one never leaks a pin.
// Thread safety: none; one object belongs to one thread at a time. The cleanups may run on any
// thread and must be safe to do so.
#pragma once

#include <cassert>
#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale {

class Cleanable {
 public:
  using CleanupFunction = void (*)(void* arg1, void* arg2);

  Cleanable() noexcept = default;
  ~Cleanable() { DoCleanup(); }
  Cleanable(const Cleanable&) = delete;
  Cleanable& operator=(const Cleanable&) = delete;
  Cleanable(Cleanable&& other) noexcept;
  Cleanable& operator=(Cleanable&& other) noexcept;

  // REQUIRES: function != nullptr.
  void RegisterCleanup(CleanupFunction function, void* arg1, void* arg2) {
    if (first_.function == nullptr) {
      first_ = Cleanup{function, arg1, arg2};
    } else {
      RegisterMore(function, arg1, arg2);
    }
  }
  // Moves every cleanup of *this to *other (which runs them later); *this is left empty.
  void DelegateCleanupsTo(Cleanable* other) {
    if (first_.function == nullptr) return;
    if (more_ == nullptr && other->first_.function == nullptr) {
      // The common case, one pin handed to an empty holder.
      other->first_ = first_;
      first_ = Cleanup{};
      return;
    }
    DelegateAll(other);
  }
  bool HasCleanups() const { return first_.function != nullptr; }
  // Runs the cleanups now.
  void Reset() { DoCleanup(); }

 private:
  struct Cleanup {
    CleanupFunction function = nullptr;
    void* arg1 = nullptr;
    void* arg2 = nullptr;
  };
  void DoCleanup() {
    if (first_.function == nullptr) return;
    if (more_ == nullptr) {
      // The common case, one pin: detach it first so a cleanup that touches this object sees
      // it empty.
      const Cleanup c = first_;
      first_ = Cleanup{};
      c.function(c.arg1, c.arg2);
      return;
    }
    DoCleanupAll();
  }
  void RegisterMore(CleanupFunction function, void* arg1, void* arg2);
  void DelegateAll(Cleanable* other);
  void DoCleanupAll();

  Cleanup first_;  // inline: the common case is a single pin
  // The rest, in registration order; null when there are none (kept out of line so that a
  // PinnableSlice stays small: arrays of them are walked by MultiGet and GetMergeOperands).
  std::unique_ptr<std::vector<Cleanup>> more_;
};

class PinnableSlice : public Slice, public Cleanable {
 public:
  PinnableSlice() noexcept : buf_(&self_space_) {}
  // Uses *buf as the self buffer (so PinSelf fills the caller's string). *buf must outlive this.
  explicit PinnableSlice(std::string* buf) noexcept : buf_(buf) {}
  PinnableSlice(PinnableSlice&& other) noexcept;
  PinnableSlice& operator=(PinnableSlice&& other) noexcept;
  PinnableSlice(const PinnableSlice&) = delete;
  PinnableSlice& operator=(const PinnableSlice&) = delete;

  // Points at s, kept alive until Reset() by cleanup(arg1, arg2). REQUIRES: not pinned.
  void PinSlice(const Slice& s, CleanupFunction cleanup, void* arg1, void* arg2) {
    pinned_ = true;
    static_cast<Slice&>(*this) = s;
    RegisterCleanup(cleanup, arg1, arg2);
  }
  // Points at s, taking over every cleanup of *cleanable. REQUIRES: not pinned.
  void PinSlice(const Slice& s, Cleanable* cleanable) {
    assert(!pinned_);
    pinned_ = true;
    static_cast<Slice&>(*this) = s;
    cleanable->DelegateCleanupsTo(this);
  }
  // Copies s into the self buffer and points at it.
  void PinSelf(const Slice& s);
  // Points at the self buffer after the caller filled GetSelf().
  void PinSelf() {
    pinned_ = false;
    static_cast<Slice&>(*this) = Slice(*buf_);
  }
  std::string* GetSelf() { return buf_; }
  bool IsPinned() const { return pinned_; }
  // Releases the pin (if any) and empties the slice.
  void Reset() {
    Cleanable::Reset();
    pinned_ = false;
    static_cast<Slice&>(*this) = Slice();
  }

  // Shrinks the visible range; works for pinned and self-owned data alike.
  void remove_prefix(size_t n);
  void remove_suffix(size_t n);

 private:
  std::string self_space_;
  std::string* buf_;
  bool pinned_ = false;
};

}  // namespace shale
