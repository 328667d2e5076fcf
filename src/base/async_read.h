// Asynchronous block reads for MultiGet: an awaitable that reads a set of requests through the
// calling thread's AsyncReader, the driver that runs a round's coroutines to completion, and
// the per-thread reader cache.
//
//   Task ReadBlocks(AsyncIo* io, ...) {
//     co_await io->ReadAll(file, requests);   // suspends until every read has completed
//     ...
//   }
//   io.Spawn(ReadBlocks(&io, ...));           // started now, runs until it first suspends
//   io.RunUntilDone();                        // submits, reaps and resumes until all finish
//
// Ownership: AsyncIo owns the tasks spawned on it and borrows the reader. Thread safety: one
// thread; coroutines are resumed on the thread that calls RunUntilDone.
#pragma once

#include <coroutine>
#include <memory>
#include <vector>

#include "shale/file_system.h"
#include "shale/statistics.h"
#include "src/base/internal_iterator.h"
#include "src/util/task.h"

namespace shale {

// The calling thread's reader for fs, made on first use and kept for the thread's life. Null
// when the file system cannot read asynchronously (*why says why; the answer is remembered).
AsyncReader* ThreadAsyncReader(const std::shared_ptr<FileSystem>& fs, Status* why);
// ThreadAsyncReader for a read that can go either way: null when there is no reader, counted
// in ASYNC_READ_FALLBACK (stats may be null); the caller then reads synchronously.
AsyncReader* ThreadAsyncReaderOrFallback(const std::shared_ptr<FileSystem>& fs, Statistics* stats);

class AsyncIo {
 public:
  AsyncIo(AsyncReader* reader, Statistics* stats) : reader_(reader), stats_(stats) {}
  AsyncIo(const AsyncIo&) = delete;
  AsyncIo& operator=(const AsyncIo&) = delete;

  // Awaitable: reads requests[0..n) of file; resumes when all have completed (each with its
  // own status). A read the reader refuses is done synchronously instead.
  class ReadAllAwaiter {
   public:
    ReadAllAwaiter(AsyncIo* io, const RandomAccessFile* file, ReadRequest* const* requests,
                   size_t n)
        : io_(io), file_(file), requests_(requests), n_(n) {}
    bool await_ready() const noexcept { return n_ == 0; }
    bool await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}

   private:
    static void OnDone(ReadRequest* request, void* self);

    AsyncIo* const io_;
    const RandomAccessFile* const file_;
    ReadRequest* const* const requests_;
    const size_t n_;
    size_t outstanding_ = 0;
    std::coroutine_handle<> handle_;
  };
  ReadAllAwaiter ReadAll(const RandomAccessFile* file, ReadRequest* const* requests, size_t n) {
    return ReadAllAwaiter(this, file, requests, n);
  }

  // Starts task (it runs until its first suspension) and keeps it until RunUntilDone.
  void Spawn(Task task);
  // Sends the reads queued so far to the device now.
  void Flush() { reader_->Flush().PermitUncheckedError(); }  // Poll reports a broken reader
  // Drives the reader until every spawned task has finished. A reader that fails still
  // completes its reads (with errors), so this always ends.
  void RunUntilDone();

 private:
  AsyncReader* const reader_;
  Statistics* const stats_;
  std::vector<Task> tasks_;
};

// A data-block read an iterator staged for its next seek (InternalIterator::PrepareSeek).
// Ownership: the iterator that staged it owns it, and keeps it until its next positioning.
class StagedRead {
 public:
  virtual ~StagedRead() = default;
  // The task reading the block and keeping it (or the read's error) for the positioning.
  virtual Task Read(AsyncIo* io) = 0;
};

// Runs reads together on reader and returns once every one has completed (one batch, counted
// in PerfContext::iter_async_batch_count; the wait in block_read_time). With fewer than two,
// or no reader, nothing runs: each owner reads its own block when it positions.
void RunStagedReads(AsyncReader* reader, Statistics* stats, const StagedReads& reads);

}  // namespace shale
