// Task: the smallest useful C++20 coroutine type — a lazily started, resumable job without a
// result, driven by whoever owns it (see src/base/async_read.h for the driver used by MultiGet).
//
//   Task Work(Reader* r) { co_await r->Read(...); ... }
//   Task t = Work(r);   // not started yet
//   t.Start();          // runs until the first suspension (or to the end)
//   ... resume the suspended coroutine from a completion, until t.done().
//
// The coroutine's frame lives until the Task is destroyed (final_suspend suspends), so done()
// can be asked after completion. An exception escaping the coroutine terminates the process:
// shale's code reports failures through Status, never by throwing.
// Ownership: a Task owns its coroutine frame; move-only. Thread safety: one thread at a time.
#pragma once

#include <coroutine>
#include <exception>
#include <utility>

namespace shale {

class Task {
 public:
  struct promise_type {
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };

  Task() = default;
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      Destroy();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { Destroy(); }

  // Runs the coroutine until it first suspends or finishes. REQUIRES: not started.
  void Start() { handle_.resume(); }
  bool done() const { return handle_ == nullptr || handle_.done(); }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
  void Destroy() {
    if (handle_) handle_.destroy();
    handle_ = nullptr;
  }

  std::coroutine_handle<promise_type> handle_;
};

}  // namespace shale
