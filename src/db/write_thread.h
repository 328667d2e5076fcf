// WriteThread: group commit. Concurrent writers queue up; the writer at the head of the queue
// becomes the leader, takes the batches of the writers queued behind it (a group), writes them
// as one WAL record with at most one fsync, applies them, and wakes every member with its
// status. Writers that arrive meanwhile queue up and form the next group, whose leader starts
// as soon as the current group exits.
//
// Gathering before a sync: an fsync costs far more than the writes it covers, so a leader that
// must sync first waits, briefly, for as many writers as the last synced group held (the
// writers it woke are on their way back with their next writes). The wait ends when they are
// all queued or after half the recent fsync latency, whichever comes first; a lone sync writer
// (last group of one) never waits. With N threads writing synchronously this makes one fsync
// per N writes instead of alternating large and small groups.
//
// Waking: writers take tickets in queue order, and a leader finishes its group by storing the
// last member's ticket in one word that every queued writer sleeps on (a WaitWord), then waking
// them all with one futex call (not one wake per member: each wake is a system call on the
// leader's critical path). A writer whose ticket is completed is done; the writer just
// after the completed one is the next leader; the others sleep again.
//
// Spinning (Options::enable_write_thread_adaptive_yield): a queued writer re-reads the word for
// up to the spin bound before its first sleep (a leader without fsync finishes its group in
// microseconds), one writer at a time, and not while the leading group syncs, is exclusive or
// stalls. A writer that finds spinning not allowed, or another writer spinning, sleeps at once
// and does not spin later in the same wait. With more writer threads than CPUs a spinner takes
// CPU time from the leader: 8 writer threads of 100 B values on 2 CPUs ran 23-56 % faster
// spinning, but their P99 rose from about 0.2 ms to 1.0-1.6 ms and their P99.9 from 2.2-3.4 ms
// to 4.3-4.7 ms (docs/benchmarks.md).
//
// A companion for a lone leader: with two writer threads taking turns, each leader would find
// the queue holding only itself (the other writer is still returning from its last write) and
// write a group of one: one WAL write(2) per write. A leader without fsync that stands alone
// while the last group had more members, or left writers queued, spins for the next writer to
// queue, for up to a fifth of the spin bound (4 µs by default: about the time a writer takes
// between returning from one write and queueing its next), and takes it into its group. A spin that
// finds nobody makes the next lone leaders (1, 2, 4, then 8 of them) skip it. It is part of
// spinning (off with it). Two threads writing 1 KB values ran about 6 % faster with it and used
// about 5 % less CPU (docs/benchmarks.md).
//
// Pipelined (Options::enable_pipelined_write): a group passes through two stages. In the WAL
// stage (queue head to ExitWalStage) its leader makes room, allocates sequences and writes the
// WAL record; then the group leaves the queue and the next writer leads the next group's WAL
// write while this one inserts into the memtable. The memtable stage takes groups in queue
// order: a leader inserts once every earlier group is finished (WaitForEarlierGroups), then
// publishes and finishes its members (ExitAsBatchGroupLeader). A writer first waits on a second
// word, led_ (the last ticket that left the WAL stage): the writer right after it leads; a
// writer at or before it is a member and then waits on completed_. Each word is stored before
// its wake, so neither wait can miss its change. Whatever must see every allocated sequence
// applied (a memtable switch, an exclusive writer) waits for the earlier groups first.
//
// Thread safety: all methods are called concurrently by writer threads; the queue is guarded by
// mu_. A Writer lives on its thread's stack; the leader writes its status under mu_ before
// completing it and never touches it afterwards.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "shale/options.h"
#include "shale/status.h"
#include "shale/write_batch.h"
#include "src/util/mutex.h"
#include "src/util/wait_word.h"

namespace shale {

class WriteThread {
 public:
  struct Writer {
    Writer(const WriteOptions& options, WriteBatch* batch, bool exclusive = false)
        : batch(batch), sync(options.sync), disable_wal(options.disableWAL), exclusive(exclusive) {}
    WriteBatch* const batch;  // null for an exclusive writer
    const bool sync;
    const bool disable_wal;
    // Leads a group of its own and joins no other: for work that must exclude all writes
    // (switching the WAL in Resume, Flush, SyncWAL).
    const bool exclusive;
    Status status;  // set by the leader (under the queue's lock) before it completes the writer
    // Position in the queue's order, given when the writer is queued.
    uint32_t ticket = 0;
  };

  // The members of a group, leader first, in queue order.
  struct Group {
    std::vector<Writer*> members;
    bool need_sync = false;
    bool disable_wal = false;
    size_t total_bytes = 0;
    uint64_t total_count = 0;
    bool left_wal_stage = false;  // ExitWalStage was called (pipelined)
  };

  // spin: how long a queued writer re-reads the completion word before it sleeps (0: never).
  // first_ticket: the first writer's ticket (tests start near the wrap of the 32-bit count).
  // pipelined: groups pass through a WAL stage and a memtable stage (class comment).
  WriteThread(size_t max_group_bytes, std::chrono::nanoseconds spin, uint32_t first_ticket = 1,
              bool pipelined = false)
      : max_group_bytes_(max_group_bytes),
        spin_(spin),
        pipelined_(pipelined),
        next_ticket_(first_ticket),
        completed_(first_ticket - 1),
        led_(first_ticket - 1) {}
  WriteThread(const WriteThread&) = delete;
  WriteThread& operator=(const WriteThread&) = delete;

  // Queues w and blocks until w leads a group (true) or a leader finished w (false; w->status).
  bool JoinBatchGroup(Writer* w) EXCLUDES(mu_);
  // REQUIRES: leader returned true from JoinBatchGroup. Takes leader and the writers queued
  // behind it that fit (same disableWAL, under the byte cap, not exclusive) into *group; a
  // sync leader first gathers writers as the class comment says.
  void BuildBatchGroup(Writer* leader, Group* group) EXCLUDES(mu_);
  // The leader reports how long its group's fsync took (bounds the next gathering wait).
  void RecordSyncLatency(uint64_t micros) EXCLUDES(mu_);
  // REQUIRES: pipelined; the leader of *group, after its WAL write. The group leaves the WAL
  // stage: its members leave the queue, and the next writer queued leads the next group. The
  // members stay waiting until ExitAsBatchGroupLeader.
  void ExitWalStage(Group* group) EXCLUDES(mu_);
  // REQUIRES: leader leads a group. Returns once every group before it is finished: at once
  // unless pipelined.
  void WaitForEarlierGroups(const Writer* leader);
  // REQUIRES: every earlier group is finished. Finishes every member with status s (dequeuing
  // them, unless ExitWalStage did), and wakes the next leader.
  void ExitAsBatchGroupLeader(const Group& group, const Status& s) EXCLUDES(mu_);
  // The leader is about to wait long (a write stall): queued writers sleep at once until the
  // group exits.
  void LeaderStalls() EXCLUDES(mu_);

  // Groups pass through a WAL stage and a memtable stage (the constructor's `pipelined`).
  bool pipelined() const { return pipelined_; }

  // For tests: writers spinning now (or just refused a spin), and spins that saw their
  // leader finish.
  uint32_t spinners() const { return spinners_.load(std::memory_order_relaxed); }
  uint64_t spins_that_saw_the_change() const { return spin_hits_.load(std::memory_order_relaxed); }
  // For tests: writers queued now (the leader included; pipelined: in the WAL stage).
  uint32_t queued() const { return queued_.Load(); }
  // For tests: lone leaders that spun for a companion, and those that found one.
  uint64_t companion_spins() const { return companion_spins_.load(std::memory_order_relaxed); }
  uint64_t companions_found() const { return companions_found_.load(std::memory_order_relaxed); }

 private:
  // Waits (as leader) until `want` writers are queued or the gathering bound has passed.
  void GatherLocked(size_t want) REQUIRES(mu_);
  // A leader without fsync that stands alone in the queue while other writers were active a
  // moment ago (the last group had more members, or left writers queued) spins briefly for
  // one of them to queue: see the class comment.
  void SpinForCompanion(const Writer* leader) EXCLUDES(mu_);
  // Returns once word may no longer hold seen: the first call per wait (*spun false) re-reads
  // it for up to the spin bound if no other writer spins, then sleeps.
  void Await(WaitWord* word, uint32_t seen, bool* spun);
  // Returns once at most `within` writers up to and including w are unfinished (w's ticket
  // minus completed_ is at most `within`), and that count (0 or less: w is finished).
  int32_t AwaitCompleted(const Writer* w, int32_t within, bool* spun);
  // Dequeues the group's members (a leader's exit from the WAL stage).
  void DequeueGroupLocked(const Group& group) REQUIRES(mu_);

  const size_t max_group_bytes_;
  const std::chrono::nanoseconds spin_;
  const bool pipelined_;
  Mutex mu_;
  std::deque<Writer*> queue_ GUARDED_BY(mu_);
  uint32_t next_ticket_ GUARDED_BY(mu_);
  // The ticket of the last writer a leader finished; stored under mu_ (so it only grows, in
  // tickets' wrapping order), read without it by queued writers, which sleep on it.
  WaitWord completed_;
  // Pipelined only: the ticket of the last writer whose group left the WAL stage (stored under
  // mu_, like completed_; never behind it).
  WaitWord led_;
  // False while the leading group syncs, is exclusive or stalls (long waits: queued writers
  // sleep at once). Stored under mu_, read without it (a hint: a stale value only spins or sleeps
  // early).
  std::atomic<bool> followers_may_spin_{true};
  // Queued writers spinning now, or for a moment after being refused a spin (at most one
  // spins; the others sleep at once).
  std::atomic<uint32_t> spinners_{0};
  std::atomic<uint64_t> spin_hits_{0};
  // Writers in the queue: queue_.size(), stored under mu_, read (and spun on, never slept on)
  // without it.
  WaitWord queued_{0};
  // The last group's members plus the writers it left queued (SpinForCompanion's hint).
  std::atomic<size_t> recent_writers_{0};
  std::atomic<uint64_t> companion_spins_{0};
  std::atomic<uint64_t> companions_found_{0};
  // SpinForCompanion's back-off: spins that found nobody double the groups that then skip it.
  // Read and written by the leader of the moment only.
  std::atomic<uint32_t> companion_skip_{0};
  std::atomic<uint32_t> companion_backoff_{0};
  // Writers in the last group that synced: how many to gather for the next one.
  size_t last_sync_group_size_ GUARDED_BY(mu_) = 1;
  // Signalled when the queue reaches gather_want_ (0: nobody is gathering).
  CondVar gather_cv_{&mu_};
  size_t gather_want_ GUARDED_BY(mu_) = 0;
  // Moving average of fsync latency, in microseconds (an eighth of each new sample).
  uint64_t sync_latency_us_ GUARDED_BY(mu_) = 0;
};

}  // namespace shale
