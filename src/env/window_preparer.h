// WindowPreparer: gets the next window of a mapped file ready on a thread of its own, a step at
// a time, and unmaps the windows the file has left; the file takes the window as far as it is
// ready when its appends get there, and goes on with the rest itself.
//
// A mapped file (src/env/mapped_appends.h) copies its appends into a shared mapping of one
// kWindow at a time, over zeros already written, with the pages faulted in. Writing 32 KiB of
// zeros and faulting them in takes tens of microseconds, and mapping a window as much: done by
// the appending thread, that is the slowest part of one write in every few hundred. Asked for
// the next window when the file enters one, this thread maps it and then writes and faults in
// its zeros one kStep at a time. Take stops it where it is (waiting only for the step in
// progress): a file whose appends outrun the thread (a busy machine) takes what is ready and
// writes the rest of the window's zeros itself, as it would without the thread.
//
// The thread writes nothing outside the window it is asked for, and nothing of it once taken:
// the file's own zeros stay below that window. A failure (zeros short, as on a full disk, or
// mmap refused) ends the thread's work for good; the file then finds the zeros short itself.
//
// Thread safety: Prepare, Take, Retire and Stop may be called from any thread (one mutex); the
// work runs on the object's own thread. Ownership: owns its thread, the mapping of the window
// being prepared until it is taken, and the mappings handed back until it unmaps them (Stop
// unmaps what is left). The descriptor stays its owner's and must stay open until Stop returns.
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
  // fd: the mapped file, open read-write; window, step: the sizes of a window and of a step of
  // its zeros (multiples of the page size, window a multiple of step). Throws
  // std::system_error if the thread cannot start.
  WindowPreparer(int fd, uint64_t window, uint64_t step);
  WindowPreparer(const WindowPreparer&) = delete;
  WindowPreparer& operator=(const WindowPreparer&) = delete;
  ~WindowPreparer() { Stop(); }

  // Asks for the window at `base` (a multiple of the window size, above every window asked
  // before; the one asked before taken) to be prepared; returns at once.
  void Prepare(uint64_t base) EXCLUDES(mu_);

  struct Window {
    char* map;           // its mapping, the caller's now; null if the thread had not mapped it
    uint64_t zeros_end;  // the zeros written in it reach here (base: none)
  };
  // The window at `base` as far as it is ready; the thread stops working on it. A window not
  // asked for comes with neither mapping nor zeros.
  Window Take(uint64_t base) EXCLUDES(mu_);
  // Hands back a mapping of one window (taken, or made by the caller) to be unmapped.
  void Retire(char* map) EXCLUDES(mu_);
  // Ends the thread once its step in progress is done, unmapping every mapping it holds;
  // returns how far the zeros it wrote reach (0: none). Idempotent.
  uint64_t Stop() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  bool HasWork() const REQUIRES(mu_) {
    return asked_ != kNone && !failed_ && (map_ == nullptr || cursor_ < asked_ + window_);
  }

  static constexpr uint64_t kNone = ~uint64_t{0};
  const int fd_;
  const uint64_t window_;
  const uint64_t step_;
  Mutex mu_;
  CondVar work_cv_;                         // (with mu_) work or Stop for the thread
  CondVar done_cv_;                         // (with mu_) a step finished
  uint64_t asked_ GUARDED_BY(mu_) = kNone;  // the window being prepared (not taken yet)
  char* map_ GUARDED_BY(mu_) = nullptr;     // its mapping, once made
  uint64_t cursor_ GUARDED_BY(mu_) = 0;     // its zeros, written and faulted in, reach here
  std::vector<char*> retired_ GUARDED_BY(mu_);
  uint64_t zeros_end_ GUARDED_BY(mu_) = 0;  // the furthest zeros it wrote
  bool busy_ GUARDED_BY(mu_) = false;       // a step (or the mapping) is in progress
  bool failed_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool ended_ GUARDED_BY(mu_) = false;  // the thread returned
  std::thread thread_;                  // last: starts once the rest is set
};

}  // namespace shale
