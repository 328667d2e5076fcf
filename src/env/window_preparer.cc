#include "src/env/window_preparer.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "src/util/invariants.h"

namespace shale {

uint64_t WriteZerosAt(int fd, uint64_t from, uint64_t to) {
  static constexpr size_t kZeroPage = 64 << 10;
  alignas(4096) static const char kZeros[kZeroPage] = {};
  std::array<iovec, 16> iov;
  for (iovec& v : iov) v = {const_cast<char*>(kZeros), kZeroPage};
  while (from < to) {
    const uint64_t left = to - from;
    int count = 0;
    for (uint64_t covered = 0; count < static_cast<int>(iov.size()) && covered < left; count++) {
      iov[count].iov_len = static_cast<size_t>(std::min<uint64_t>(kZeroPage, left - covered));
      covered += iov[count].iov_len;
    }
    ssize_t done = ::pwritev(fd, iov.data(), count, static_cast<off_t>(from));
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) break;
    from += static_cast<uint64_t>(done);
  }
  return from;
}

WindowPreparer::WindowPreparer(int fd, uint64_t window)
    : fd_(fd), window_(window), work_cv_(&mu_), done_cv_(&mu_), thread_([this] { Run(); }) {
  SHALE_ASSERT(window > 0 && window % 4096 == 0);
}

void WindowPreparer::Prepare(uint64_t base) {
  {
    MutexLock l(&mu_);
    SHALE_ASSERT(base % window_ == 0 && (ready_base_ == kNone || base > ready_base_));
    if (stopping_ || failed_) return;
    SHALE_ASSERT(asked_ == kNone);  // one window at a time: the file asks once it took the last
    asked_ = base;
  }
  work_cv_.Signal();
}

char* WindowPreparer::Take(uint64_t base) {
  MutexLock l(&mu_);
  while (asked_ == base && !ended_) done_cv_.Wait();
  if (ready_ == nullptr || ready_base_ != base) return nullptr;
  char* map = ready_;
  ready_ = nullptr;
  return map;
}

void WindowPreparer::Retire(char* map) {
  {
    MutexLock l(&mu_);
    if (!ended_) {
      retired_.push_back(map);
      map = nullptr;
    }
  }
  if (map != nullptr) {
    ::munmap(map, window_);  // the thread has ended
  } else {
    work_cv_.Signal();
  }
}

uint64_t WindowPreparer::Stop() {
  {
    MutexLock l(&mu_);
    stopping_ = true;
  }
  work_cv_.Signal();
  if (thread_.joinable()) thread_.join();
  MutexLock l(&mu_);
  SHALE_ASSERT(ended_ && retired_.empty() && ready_ == nullptr);
  return zeros_end_;
}

char* WindowPreparer::PrepareWindow(uint64_t base) const {
  if (WriteZerosAt(fd_, base, base + window_) < base + window_) return nullptr;
  void* p =
      ::mmap(nullptr, window_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(base));
  if (p == MAP_FAILED) return nullptr;
  (void)::madvise(p, window_, MADV_POPULATE_WRITE);
  return static_cast<char*>(p);
}

void WindowPreparer::Run() {
  // A batch thread: its wake-ups never preempt the thread that asked (the appending one); the
  // window is asked for a whole window of appends before it is needed.
  sched_param param{};
  (void)::sched_setscheduler(0, SCHED_BATCH, &param);
  mu_.Lock();
  while (true) {
    while (!stopping_ && retired_.empty() && (asked_ == kNone || failed_)) work_cv_.Wait();
    std::vector<char*> retired;
    retired.swap(retired_);
    const uint64_t base = failed_ ? kNone : asked_;
    const bool stop = stopping_;
    mu_.Unlock();
    for (char* map : retired) ::munmap(map, window_);
    char* map = base == kNone || stop ? nullptr : PrepareWindow(base);
    mu_.Lock();
    if (base != kNone && !stop) {
      asked_ = kNone;
      zeros_end_ = base + window_;  // as far as they may reach, written or not
      if (map != nullptr) {
        SHALE_ASSERT(ready_ == nullptr);
        ready_ = map;
        ready_base_ = base;
      } else {
        failed_ = true;
      }
      done_cv_.SignalAll();
    }
    if (stop) break;
  }
  // Stopping: what was not taken or is handed back now is unmapped here.
  std::vector<char*> left;
  left.swap(retired_);
  if (ready_ != nullptr) left.push_back(ready_);
  ready_ = nullptr;
  asked_ = kNone;
  ended_ = true;
  done_cv_.SignalAll();
  mu_.Unlock();
  for (char* map : left) ::munmap(map, window_);
}

}  // namespace shale
