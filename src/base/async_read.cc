#include "src/base/async_read.h"

#include <algorithm>

#include "src/monitoring/perf_context_imp.h"

namespace shale {

AsyncReader* ThreadAsyncReader(const std::shared_ptr<FileSystem>& fs, Status* why) {
  struct Entry {
    std::weak_ptr<FileSystem> fs;
    std::unique_ptr<AsyncReader> reader;
    Status status;
  };
  thread_local std::vector<Entry> readers;
  auto same = [&](const Entry& e) { return !e.fs.owner_before(fs) && !fs.owner_before(e.fs); };
  auto it = std::find_if(readers.begin(), readers.end(), same);
  if (it == readers.end()) {
    // Readers of file systems that are gone are dropped before a new one is made.
    std::erase_if(readers, [](const Entry& e) { return e.fs.expired(); });
    Entry e;
    e.fs = fs;
    e.status = fs->NewAsyncReader(&e.reader);
    if (!e.status.ok()) e.reader.reset();
    readers.push_back(std::move(e));
    it = std::prev(readers.end());
  }
  *why = it->status;
  return it->reader.get();
}

AsyncReader* ThreadAsyncReaderOrFallback(const std::shared_ptr<FileSystem>& fs, Statistics* stats) {
  Status why;
  AsyncReader* reader = ThreadAsyncReader(fs, &why);
  if (reader == nullptr && stats != nullptr) stats->recordTick(ASYNC_READ_FALLBACK);
  return reader;
}

bool AsyncIo::ReadAllAwaiter::await_suspend(std::coroutine_handle<> h) {
  handle_ = h;
  outstanding_ = n_;
  size_t submitted = 0;
  for (size_t i = 0; i < n_; i++) {
    ReadRequest* r = requests_[i];
    if (io_->reader_->Submit(file_, r, &OnDone, this).ok()) {
      submitted++;
    } else {
      r->status = file_->Read(r->offset, r->len, &r->result, r->scratch);
      outstanding_--;
    }
  }
  if (io_->stats_ != nullptr && submitted > 0)
    io_->stats_->recordTick(ASYNC_READ_SUBMITTED, submitted);
  // Completions arrive only from Poll, so nothing has resumed the coroutine yet.
  return outstanding_ > 0;
}

void AsyncIo::ReadAllAwaiter::OnDone(ReadRequest* /*request*/, void* self) {
  auto* a = static_cast<ReadAllAwaiter*>(self);
  if (--a->outstanding_ == 0) a->handle_.resume();
}

void AsyncIo::Spawn(Task task) {
  tasks_.push_back(std::move(task));
  tasks_.back().Start();
}

void AsyncIo::RunUntilDone() {
  auto all_done = [&] {
    return std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.done(); });
  };
  while (!all_done() && reader_->pending() > 0) {
    reader_->Poll().PermitUncheckedError();  // a failing reader still completes its reads
  }
  tasks_.clear();
}

void RunStagedReads(AsyncReader* reader, Statistics* stats, const StagedReads& reads) {
  if (reader == nullptr || reads.size() < 2) return;
  PerfTimer timer(&PerfContext::block_read_time);
  AsyncIo io(reader, stats);
  for (StagedRead* read : reads) io.Spawn(read->Read(&io));
  io.RunUntilDone();
  PerfCount(&PerfContext::iter_async_batch_count);
}

}  // namespace shale
