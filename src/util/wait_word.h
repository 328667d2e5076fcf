// WaitWord: a 32-bit atomic word that threads sleep on until its value changes (a Linux futex).
//
// A waiter re-reads the word a few times with a CPU pause, yields the CPU once, and then
// sleeps in the kernel. std::atomic<uint32_t>::wait does the same with four yields (libstdc++):
// with more threads than CPUs each yield is a context switch, and in a group commit of 16
// synchronous writers on 2 CPUs (db_bench fillrandom -sync=true -threads=16, 20 alternating
// pairs) one yield used 21 % less CPU than four at the same throughput (wall ratio 1.00);
// none at all was 8 % slower (the one yield often lets the thread about to store run first).
//
// SpinWhile re-reads the word for a bounded time while the caller's flag allows it, before a
// WaitWhile (the write path's followers, whose leader usually finishes within microseconds): a
// waiter that sees the change while spinning costs itself no context switch, and its waker no
// futex call when nobody else sleeps.
// Spinning through an fsync is waste (16 sync writers on 2 CPUs, each waiter spinning 10 µs,
// ran 30 % slower), so the caller clears the flag while its wait is long; write_thread.h says
// when the write path spins and what it gains.
//
// WakeAll makes its system call only when a thread is asleep (or about to sleep): a count of
// sleepers, raised before the kernel's check of the word and read after the Store, tells it.
// A writer alone (db_bench fillseq, one thread) then makes no futex call per write group, which
// would otherwise be a system call per write (docs/benchmarks.md has its measured cost).
//
// Thread safety: every method may be called concurrently. Store() then WakeAll() is the
// protocol: a waiter that read the old value either sees the new one or is woken.
// Ownership: a plain member of the object whose threads wait on it; it holds no resources.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace shale {

class WaitWord {
 public:
  explicit WaitWord(uint32_t value) : word_(value) {}
  WaitWord(const WaitWord&) = delete;
  WaitWord& operator=(const WaitWord&) = delete;

  uint32_t Load() const { return word_.load(std::memory_order_acquire); }
  // Sequentially consistent, so that a later WakeAll cannot miss a waiter that read the old
  // value (the kernel compares the word again under its own lock before sleeping).
  void Store(uint32_t value) { word_.store(value, std::memory_order_seq_cst); }
  // For a word that threads only spin on (SpinWhile), never sleep on: no WakeAll follows, so a
  // release store is enough.
  void StoreForSpinners(uint32_t value) { word_.store(value, std::memory_order_release); }
  // Wakes every thread sleeping in WaitWhile (one system call if any may be asleep).
  void WakeAll();
  // Returns once the word no longer holds `old`, or spuriously (callers re-check).
  void WaitWhile(uint32_t old);
  // Re-reads the word for up to `bound` while `may_spin` holds true; true once the word no
  // longer holds `old`.
  bool SpinWhile(uint32_t old, std::chrono::nanoseconds bound, const std::atomic<bool>& may_spin);

 private:
  // Re-reads the word a few times with a CPU pause between; true once it no longer holds old.
  bool SpinRound(uint32_t old) const;

  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is 32 bits");
  std::atomic<uint32_t> word_;
  // Threads between announcing a sleep and returning from it. Both sides use sequentially
  // consistent operations: Store → load of sleepers_ in WakeAll, and increment → load of
  // word_ in WaitWhile, so at least one side sees the other (no lost wake-up).
  std::atomic<uint32_t> sleepers_{0};
};

}  // namespace shale
