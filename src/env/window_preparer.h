// WindowPreparer: gets the next window of a mapped file ready on a thread of its own, and
// unmaps the windows the file has left.
//
// A mapped file (src/env/mapped_appends.h) copies its appends into a shared mapping of one
// kWindow at a time, over zeros already written, with the pages faulted in. Writing a window's
// zeros, mapping it and faulting it in costs about a millisecond per MiB; done by the appending
// thread, a step of it at a time, it is the slowest part of one write in every few hundred.
// Asked for the next window when the file enters one, this thread has it ready long before the
// appends get there; the file takes it (Take) and hands the window it leaves back (Retire).
//
// Preparing the window at `base`: zeros written over [base, base + kWindow) (pwrite, which also
// extends the file), the window mapped shared and read-write, and its pages faulted in writable
// (MADV_POPULATE_WRITE, best effort). The thread writes nothing below the first window it is
// asked for: the file's own zeros stay below it. A failure (zeros short, as on a full disk, or
// mmap refused) ends the preparing for good: Take then returns null and the file goes on with
// write(2).
//
// Thread safety: Prepare, Take, Retire and Stop may be called from any thread (one mutex); the
// work runs on the object's own thread. Ownership: owns its thread and the mappings it has made
// until they are taken, and those handed back until it unmaps them (Stop unmaps what is left).
// The descriptor stays its owner's and must stay open until Stop returns.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "src/util/mutex.h"
#include "src/util/thread_annotations.h"

namespace shale {

// Writes zeros to [from, to) of fd (pwritev of a shared zero page, the file offset unmoved);
// returns how far they reach (short of `to` after an error or a full disk).
uint64_t WriteZerosAt(int fd, uint64_t from, uint64_t to);

class WindowPreparer {
 public:
  // fd: the mapped file, open read-write; window: the size of a window (a multiple of the page
  // size). Throws std::system_error if the thread cannot start.
  WindowPreparer(int fd, uint64_t window);
  WindowPreparer(const WindowPreparer&) = delete;
  WindowPreparer& operator=(const WindowPreparer&) = delete;
  ~WindowPreparer() { Stop(); }

  // Asks for the window at `base` (a multiple of the window size, above every window asked
  // before) to be prepared; returns at once.
  void Prepare(uint64_t base) EXCLUDES(mu_);
  // The window at `base`, once prepared (waits if it is being prepared): its mapping, which the
  // caller now owns; its zeros reach base + window. Null if it was not asked for, or failed.
  char* Take(uint64_t base) EXCLUDES(mu_);
  // Hands back a mapping of one window (taken, or made by the caller) to be unmapped.
  void Retire(char* map) EXCLUDES(mu_);
  // Ends the thread once its work in progress is done, unmapping every mapping it holds;
  // returns how far the zeros it wrote may reach (the end of the last window it worked on,
  // prepared or failed; 0: none). Idempotent.
  uint64_t Stop() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  // Writes the zeros of the window at base, maps and faults it in: its mapping, or null.
  char* PrepareWindow(uint64_t base) const;

  const int fd_;
  const uint64_t window_;
  Mutex mu_;
  CondVar work_cv_;  // (with mu_) work or Stop for the thread
  CondVar done_cv_;  // (with mu_) a window prepared, or the thread ended
  static constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t asked_ GUARDED_BY(mu_) = kNone;  // the window asked for and not prepared yet
  uint64_t ready_base_ GUARDED_BY(mu_) = kNone;
  char* ready_ GUARDED_BY(mu_) = nullptr;  // the prepared window at ready_base_, not taken yet
  std::vector<char*> retired_ GUARDED_BY(mu_);
  uint64_t zeros_end_ GUARDED_BY(mu_) = 0;
  bool failed_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool ended_ GUARDED_BY(mu_) = false;  // the thread returned
  std::thread thread_;                  // last: starts once the rest is set
};

}  // namespace shale
