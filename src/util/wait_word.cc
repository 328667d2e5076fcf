#include "src/util/wait_word.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>

namespace shale {
namespace {

// Re-reads before yielding, with a CPU pause between them.
constexpr int kSpins = 16;

inline void CpuPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, nullptr, nullptr, 0);
}

}  // namespace

void WaitWord::WakeAll() {
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;  // nobody can be asleep
  Futex(&word_, FUTEX_WAKE_PRIVATE, INT_MAX);
}

bool WaitWord::SpinWhile(uint32_t old, std::chrono::nanoseconds bound,
                         const std::atomic<bool>& may_spin) {
  const auto end = std::chrono::steady_clock::now() + bound;
  while (may_spin.load(std::memory_order_relaxed)) {
    if (SpinRound(old)) return true;
    if (std::chrono::steady_clock::now() >= end) break;
  }
  return Load() != old;
}

bool WaitWord::SpinRound(uint32_t old) const {
  for (int i = 0; i < kSpins; i++) {
    if (Load() != old) return true;
    CpuPause();
  }
  return false;
}

void WaitWord::WaitWhile(uint32_t old) {
  if (SpinRound(old)) return;
  // One yield lets a runnable thread (often the one about to store) go first; more only add
  // context switches (wait_word.h).
  sched_yield();
  if (Load() != old) return;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  // Checked again after announcing the sleep: a Store before this load is seen here, and one
  // after it finds sleepers_ raised and wakes us. The kernel returns at once (EAGAIN) if the
  // word changed in between; EINTR is a spurious return.
  if (word_.load(std::memory_order_seq_cst) == old) Futex(&word_, FUTEX_WAIT_PRIVATE, old);
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace shale
