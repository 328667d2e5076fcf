#include "src/db/write_thread.h"

#include <algorithm>
#include <chrono>

#include "src/util/invariants.h"

namespace shale {
namespace {
// After a spin for a companion that found nobody, the next 1, 2, 4, then 8 lone leaders do not
// spin (SpinForCompanion).
constexpr uint32_t kMaxCompanionBackoff = 8;
}  // namespace

bool WriteThread::JoinBatchGroup(Writer* w) {
  {
    MutexLock l(&mu_);
    w->ticket = next_ticket_++;
    queue_.push_back(w);
    queued_.StoreForSpinners(static_cast<uint32_t>(queue_.size()));
    if (queue_.size() == 1) return true;  // nobody ahead: lead at once
    if (gather_want_ != 0 && queue_.size() >= gather_want_) gather_cv_.Signal();
  }
  bool spun = spin_.count() == 0;  // the spin is spent (or not allowed)
  // Pipelined: first until w leads, or its group has left the WAL stage.
  while (pipelined_) {
    const uint32_t led = led_.Load();
    // Tickets wrap: compare by difference.
    const auto ahead = static_cast<int32_t>(w->ticket - led);
    if (ahead == 1) return true;  // every writer before w left the WAL stage: w heads the queue
    if (ahead <= 0) {
      spun = spin_.count() == 0;  // the memtable stage gets its own spin
      break;
    }
    Await(&led_, led, &spun);
  }
  // Finished by a leader (w->status is set), or, not pipelined, heading the queue once everyone
  // before w is done.
  return AwaitCompleted(w, pipelined_ ? 0 : 1, &spun) == 1;
}

int32_t WriteThread::AwaitCompleted(const Writer* w, int32_t within, bool* spun) {
  while (true) {
    const uint32_t completed = completed_.Load();
    // Tickets wrap: compare by difference.
    const auto ahead = static_cast<int32_t>(w->ticket - completed);
    if (ahead <= within) return ahead;
    Await(&completed_, completed, spun);
  }
}

void WriteThread::Await(WaitWord* word, uint32_t seen, bool* spun) {
  // Spins before its first sleep only (a writer further back would otherwise spin through
  // every group ahead of it), and only while no other writer spins.
  bool changed = false;
  if (!*spun) {
    *spun = true;
    if (spinners_.fetch_add(1, std::memory_order_relaxed) == 0) {
      changed = word->SpinWhile(seen, spin_, followers_may_spin_);
      if (changed) spin_hits_.fetch_add(1, std::memory_order_relaxed);
    }
    spinners_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (!changed) word->WaitWhile(seen);
}

void WriteThread::WaitForEarlierGroups(const Writer* leader) {
  // Not pipelined, a leader heads the queue only once every earlier group is finished.
  SHALE_ASSERT(pipelined_ || static_cast<int32_t>(leader->ticket - completed_.Load()) == 1);
  bool spun = spin_.count() == 0;
  const int32_t ahead = AwaitCompleted(leader, 1, &spun);
  SHALE_ASSERT(ahead == 1);  // the leader itself is not finished
}

void WriteThread::SpinForCompanion(const Writer* leader) {
  if (leader->sync || leader->exclusive || spin_.count() == 0) return;
  if (recent_writers_.load(std::memory_order_relaxed) < 2 || queued_.Load() != 1) return;
  // Only the leader of the moment gets here, and each leader takes over after the last one
  // (through mu_ or completed_'s acquire load): relaxed counters need no lock.
  const uint32_t skip = companion_skip_.load(std::memory_order_relaxed);
  if (skip > 0) {
    companion_skip_.store(skip - 1, std::memory_order_relaxed);
    return;
  }
  companion_spins_.fetch_add(1, std::memory_order_relaxed);
  if (queued_.SpinWhile(1, spin_ / 5, followers_may_spin_)) {
    companions_found_.fetch_add(1, std::memory_order_relaxed);
    companion_backoff_.store(0, std::memory_order_relaxed);
    return;
  }
  const uint32_t backoff = companion_backoff_.load(std::memory_order_relaxed);
  const uint32_t next = backoff == 0 ? 1 : std::min<uint32_t>(2 * backoff, kMaxCompanionBackoff);
  companion_backoff_.store(next, std::memory_order_relaxed);
  companion_skip_.store(next, std::memory_order_relaxed);
}

void WriteThread::BuildBatchGroup(Writer* leader, Group* group) {
  SpinForCompanion(leader);
  MutexLock l(&mu_);
  SHALE_ASSERT(!queue_.empty() && queue_.front() == leader);
  followers_may_spin_.store(!leader->sync && !leader->exclusive, std::memory_order_relaxed);
  if (leader->sync && !leader->exclusive && last_sync_group_size_ > queue_.size()) {
    GatherLocked(last_sync_group_size_);
  }
  group->members.clear();
  group->members.push_back(leader);
  group->need_sync = leader->sync;
  group->disable_wal = leader->disable_wal;
  if (leader->exclusive) return;
  group->total_bytes = leader->batch->GetDataSize();
  group->total_count = leader->batch->Count();
  // A small leader does not make its caller wait for a megabyte of followers.
  size_t cap = max_group_bytes_;
  if (group->total_bytes <= (128 << 10)) cap = std::min(cap, group->total_bytes + (128 << 10));
  for (size_t i = 1; i < queue_.size(); i++) {
    Writer* w = queue_[i];
    if (w->exclusive || w->disable_wal != leader->disable_wal) break;
    size_t bytes = w->batch->GetDataSize();
    if (group->total_bytes + bytes > cap) break;
    group->members.push_back(w);
    group->need_sync |= w->sync;
    group->total_bytes += bytes;
    group->total_count += w->batch->Count();
  }
  if (group->need_sync) {
    last_sync_group_size_ = group->members.size();
    followers_may_spin_.store(false, std::memory_order_relaxed);
  }
}

void WriteThread::GatherLocked(size_t want) {
  const auto bound = std::chrono::microseconds(std::min<uint64_t>(sync_latency_us_ / 2, 2000));
  const auto deadline = std::chrono::steady_clock::now() + bound;
  gather_want_ = want;
  while (queue_.size() < want) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    gather_cv_.WaitFor(std::chrono::duration_cast<std::chrono::microseconds>(deadline - now));
  }
  gather_want_ = 0;
}

void WriteThread::RecordSyncLatency(uint64_t micros) {
  MutexLock l(&mu_);
  sync_latency_us_ =
      sync_latency_us_ == 0 ? micros : sync_latency_us_ - sync_latency_us_ / 8 + micros / 8;
}

void WriteThread::DequeueGroupLocked(const Group& group) {
  for (Writer* w : group.members) {
    SHALE_ASSERT(!queue_.empty() && queue_.front() == w);
    queue_.pop_front();
  }
  queued_.StoreForSpinners(static_cast<uint32_t>(queue_.size()));
  recent_writers_.store(group.members.size() + queue_.size(), std::memory_order_relaxed);
  // The next leader's group: a sync or exclusive one clears the flag again in
  // BuildBatchGroup, but its writers should not spin meanwhile either.
  followers_may_spin_.store(queue_.empty() || (!queue_.front()->sync && !queue_.front()->exclusive),
                            std::memory_order_relaxed);
  if (pipelined_) led_.Store(group.members.back()->ticket);
}

void WriteThread::ExitWalStage(Group* group) {
  SHALE_ASSERT(pipelined_ && !group->left_wal_stage);
  {
    MutexLock l(&mu_);
    DequeueGroupLocked(*group);
  }
  group->left_wal_stage = true;
  // Wakes the next leader and the members (which then wait for completed_).
  led_.WakeAll();
}

void WriteThread::ExitAsBatchGroupLeader(const Group& group, const Status& s) {
  const uint32_t last = group.members.back()->ticket;
  {
    MutexLock l(&mu_);
    SHALE_ASSERT(static_cast<uint32_t>(completed_.Load() + 1) == group.members.front()->ticket);
    if (!group.left_wal_stage) DequeueGroupLocked(group);
    for (Writer* w : group.members) w->status = s;
    completed_.Store(last);
  }
  if (pipelined_ && !group.left_wal_stage) led_.WakeAll();
  // Wakes the members and the next leader (writers queued further back sleep again).
  completed_.WakeAll();
}

void WriteThread::LeaderStalls() {
  MutexLock l(&mu_);
  followers_may_spin_.store(false, std::memory_order_relaxed);
}

}  // namespace shale
