#include "src/util/wait_word.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

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

void WaitWord::WakeAll() { Futex(&word_, FUTEX_WAKE_PRIVATE, INT_MAX); }

void WaitWord::WaitWhile(uint32_t old) {
  for (int i = 0; i < kSpins; i++) {
    if (Load() != old) return;
    CpuPause();
  }
  // One yield lets a runnable thread (often the one about to store) go first; more only add
  // context switches (wait_word.h).
  sched_yield();
  if (Load() != old) return;
  // Returns at once (EAGAIN) if the word changed meanwhile; EINTR is a spurious return.
  Futex(&word_, FUTEX_WAIT_PRIVATE, old);
}

}  // namespace shale
