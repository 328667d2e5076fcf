#include "src/util/biased_countdown.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace shale {

namespace {

bool RegisterBarrier() {
  const long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Every running thread of the process executes a full memory barrier before this returns.
void ProcessWideBarrier() {
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
    // Registration succeeded (BiasSupported), so the kernel cannot refuse; going on without
    // the barrier could free memory still in use.
    std::fputs("shale: membarrier failed after registration\n", stderr);
    std::abort();
  }
}

}  // namespace

bool BiasedCountdown::BiasSupported() {
  static const bool supported = RegisterBarrier();
  return supported;
}

BiasedCountdown::BiasedCountdown(size_t n, bool bias)
    : n_(n),
      owner_(bias && BiasSupported() ? CurrentThreadToken() : 0),
      biased_(owner_ != 0),
      shared_(n) {}

void BiasedCountdown::Rearm(size_t n) {
  n_ = n;
  owned_.store(0, std::memory_order_relaxed);
  shared_.store(n, std::memory_order_relaxed);
}

uint64_t BiasedCountdown::NewThreadToken() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool BiasedCountdown::ReleaseOther() {
  return biased_.load(std::memory_order_acquire) ? RevokeAndRelease() : ReleaseShared(1);
}

bool BiasedCountdown::ReleaseShared(size_t count) {
  return shared_.fetch_sub(count, std::memory_order_acq_rel) == count;
}

bool BiasedCountdown::RevokeAndRelease() {
  bool expected = true;
  if (!biased_.compare_exchange_strong(expected, false, std::memory_order_acq_rel)) {
    return ReleaseShared(1);  // another thread revoked; it transfers the owner's count
  }
  ProcessWideBarrier();
  // A release the owner began before the barrier is visible as in_release_ == 1; wait for it
  // to finish (a few instructions unless the owner is descheduled). Releases it begins later
  // see the bias revoked and never write owned_.
  while (in_release_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  return ReleaseShared(owned_.load(std::memory_order_acquire) + 1);
}

}  // namespace shale
