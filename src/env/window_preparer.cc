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

WindowPreparer::WindowPreparer(int fd, uint64_t window, uint64_t step)
    : fd_(fd), window_(window), step_(step), work_cv_(&mu_), done_cv_(&mu_), thread_([this] {
        Run();
      }) {
  SHALE_ASSERT(step > 0 && step % 4096 == 0 && window % step == 0);
}

void WindowPreparer::Prepare(uint64_t base) {
  {
    MutexLock l(&mu_);
    SHALE_ASSERT(base % window_ == 0 && asked_ == kNone && map_ == nullptr);
    if (stopping_ || failed_) return;
    asked_ = base;
    cursor_ = base;
  }
  work_cv_.Signal();
}

WindowPreparer::Window WindowPreparer::Take(uint64_t base) {
  MutexLock l(&mu_);
  while (busy_) done_cv_.Wait();
  Window w{nullptr, base};
  if (asked_ == base) {
    w = {map_, cursor_};
    map_ = nullptr;
    asked_ = kNone;
  }
  return w;
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
  SHALE_ASSERT(ended_ && !busy_ && retired_.empty() && map_ == nullptr);
  return zeros_end_;
}

void WindowPreparer::Run() {
  // A batch thread: its wake-ups do not preempt the appending thread that asked.
  sched_param param{};
  (void)::sched_setscheduler(0, SCHED_BATCH, &param);
  mu_.Lock();
  while (true) {
    while (!stopping_ && retired_.empty() && !HasWork()) work_cv_.Wait();
    if (!retired_.empty()) {
      std::vector<char*> retired;
      retired.swap(retired_);
      mu_.Unlock();
      for (char* map : retired) ::munmap(map, window_);
      mu_.Lock();
      continue;
    }
    if (stopping_) break;
    // One unit of work on the asked window: its mapping, or its next step of zeros.
    const uint64_t base = asked_, from = cursor_;
    char* map = map_;
    busy_ = true;
    mu_.Unlock();
    bool ok = true;
    uint64_t reached = from;
    if (map == nullptr) {
      void* p = ::mmap(nullptr, window_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                       static_cast<off_t>(base));
      ok = p != MAP_FAILED;
      map = ok ? static_cast<char*>(p) : nullptr;
    } else {
      const uint64_t to = std::min(from + step_, base + window_);
      reached = WriteZerosAt(fd_, from, to);
      ok = reached == to;
      const uint64_t pages_end = reached / 4096 * 4096;
      if (pages_end > from) {
        (void)::madvise(map + (from - base), pages_end - from, MADV_POPULATE_WRITE);
      }
    }
    mu_.Lock();
    busy_ = false;
    SHALE_ASSERT(asked_ == base);  // Take waits for busy_ to clear
    if (map_ == nullptr) {
      map_ = map;
    } else {
      cursor_ = reached;
      zeros_end_ = std::max(zeros_end_, reached);
    }
    if (!ok) failed_ = true;
    done_cv_.SignalAll();
  }
  // Stopping: what is held or handed back is unmapped here.
  std::vector<char*> left;
  left.swap(retired_);
  if (map_ != nullptr) left.push_back(map_);
  map_ = nullptr;
  asked_ = kNone;
  ended_ = true;
  mu_.Unlock();
  for (char* map : left) ::munmap(map, window_);
}

}  // namespace shale
