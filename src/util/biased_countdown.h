// BiasedCountdown: counts down N releases and says which one was the last, without a locked
// instruction for releases made by the thread that created it.
//
// GetMergeOperands hands out one reference per returned operand, all on one bundle; callers
// release them one by one (PinnableSlice::Reset), nearly always on the thread that made the
// call. A shared atomic count would cost one lock-prefixed read-modify-write per operand
// (about half of a 16,384-operand lookup from the memtable). Here the creating thread (the
// owner) counts its releases with plain loads and stores while the countdown is "biased";
// the first release on any other thread revokes the bias once and from then on everyone
// counts on one atomic.
//
// Protocol (owner: O; first other releaser: R):
//   O, each release while biased: in_release_ = 1; read biased_; owned_ += 1; in_release_ = 0.
//     If it saw biased_ and its count reached n, it made every release: the countdown is
//     done and no other thread can hold a reference. If it saw the bias revoked, it releases
//     on the shared count instead.
//   R: biased_ = false (CAS: exactly one revoker), then a process-wide barrier
//     (membarrier(2), PRIVATE_EXPEDITED): every thread of the process executes a full memory
//     barrier. Afterwards any release O starts reads biased_ == false, and a release O began
//     before the barrier has made in_release_ = 1 visible; R waits until in_release_ is 0,
//     then reads owned_ (final: O never writes it again) and subtracts owned_ + 1 from the
//     shared count, which started at n.
//   Everyone else (and O once revoked): one atomic decrement of the shared count.
// Whoever brings the shared count to zero (or O at n while biased) gets true, exactly once.
// The revocation costs one barrier (a few microseconds) per countdown, not per release.
// That R sees in_release_ == 1 for an owner release begun before the barrier rests on the
// kernel's barrier, which neither the C++ memory model nor ThreadSanitizer knows about; the
// acquire/release pairs only order the data once the flag's value has been read.
//
// Where the barrier is not available (kernel without membarrier, seccomp), countdowns start
// unbiased: every release is the atomic decrement.
//
// Thread safety: Release() may be called from any thread, concurrently, n times in total.
// Rearm() only by the owner, before any reference is visible to another thread.
// Ownership: the countdown owns nothing; the caller destroys what it guards when Release()
// returns true, and must not touch the countdown after any of its Release() calls returns
// (another thread's call may have freed it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace shale {

class BiasedCountdown {
 public:
  // Counts down n releases; biased to the calling thread when the process-wide barrier is
  // available and bias is true.
  explicit BiasedCountdown(size_t n, bool bias = true);
  BiasedCountdown(const BiasedCountdown&) = delete;
  BiasedCountdown& operator=(const BiasedCountdown&) = delete;

  // Starts over at n releases (forgetting the releases made so far). REQUIRES: called by the
  // creating thread, before any reference is visible to another thread.
  void Rearm(size_t n);

  // Counts one release; true for exactly one call, the last of n. The owner's biased
  // release is inline: it runs once per operand of a GetMergeOperands result.
  [[nodiscard]] bool Release() {
    if (owner_ != 0 && owner_ == CurrentThreadToken()) {
      const size_t n = n_;  // after in_release_ = 0 a revoker may free this object
      in_release_.store(1, std::memory_order_relaxed);
      // The flag store stays before the load (the compiler's order; the CPU's is the
      // revoker's barrier).
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (biased_.load(std::memory_order_relaxed)) {
        const size_t owned = owned_.load(std::memory_order_relaxed) + 1;
        owned_.store(owned, std::memory_order_relaxed);
        in_release_.store(0, std::memory_order_release);
        return owned == n;
      }
      in_release_.store(0, std::memory_order_release);
      return ReleaseShared(1);
    }
    return ReleaseOther();
  }

  // Whether releases on the creating thread skip the atomic (for tests).
  bool biased() const { return biased_.load(std::memory_order_relaxed); }

  // Whether this process can bias countdowns (the barrier is registered).
  static bool BiasSupported();

 private:
  // A number no other thread of the process has, for the process's lifetime (a thread-local's
  // address, or a thread id, can be reused by a later thread); constant-initialized, so reading it
  // needs no initialization check.
  static uint64_t CurrentThreadToken() {
    if (thread_token_ == 0) thread_token_ = NewThreadToken();
    return thread_token_;
  }
  static uint64_t NewThreadToken();
  // A release by a thread other than the owner (or by the owner of an unbiased countdown).
  bool ReleaseOther();
  bool ReleaseShared(size_t count);
  bool RevokeAndRelease();

  size_t n_;
  const uint64_t owner_;  // thread token of the creating thread; 0 when never biased
  std::atomic<bool> biased_;
  std::atomic<uint32_t> in_release_{0};  // written by the owner only
  std::atomic<size_t> owned_{0};         // releases counted by the owner; written by it only
  std::atomic<size_t> shared_;           // references left, less the owner's biased releases

  static constinit inline thread_local uint64_t thread_token_ = 0;  // 0: not yet given
};

}  // namespace shale
