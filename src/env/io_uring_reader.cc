#include "src/env/io_uring_reader.h"

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace shale {
namespace {

Status ErrnoStatus(const char* context, int err) {
  return Status::IOError(context, std::strerror(err));
}

class IoUringReader final : public AsyncReader {
 public:
  explicit IoUringReader(unsigned depth) : depth_(depth) {}
  ~IoUringReader() override {
    // Reads the kernel still holds write into their buffers: wait for them first.
    while (in_kernel_ > 0 && ReapOne()) {
    }
    io_uring_queue_exit(&ring_);
  }

  Status Init() {
    const int r = io_uring_queue_init(depth_, &ring_, 0);
    if (r < 0) return ErrnoStatus("io_uring_queue_init", -r);
    return Status::OK();
  }

  Status Submit(const RandomAccessFile* file, ReadRequest* request, Callback done,
                void* arg) override {
    if (!broken_.ok()) return broken_;
    const int fd = file->fd();
    if (fd < 0) return Status::NotSupported("io_uring reads need a file descriptor");
    Op* op = NewOp();
    *op = Op{request, done, arg, fd, 0};
    queued_.push_back(op);
    return Status::OK();
  }

  Status Poll() override {
    if (pending() == 0) return Status::OK();
    if (broken_.ok()) {
      Status s = SubmitQueued();
      if (!s.ok()) Break(s);
    }
    if (!broken_.ok()) FinishQueuedWithPread();
    if (in_kernel_ > 0) {
      if (!ReapOne()) Break(Status::IOError("io_uring: waiting for completions failed"));
      ReapReady();
    }
    RunCallbacks();
    return broken_;
  }

  Status Flush() override {
    if (!broken_.ok() || queued_.empty()) return broken_;
    Status s = SubmitQueued();
    if (!s.ok()) Break(s);
    return broken_;
  }

  size_t pending() const override { return queued_.size() + in_kernel_ + completed_.size(); }
  const char* Name() const override { return "io_uring"; }

 private:
  struct Op {
    ReadRequest* request;
    Callback done;
    void* arg;
    int fd;
    size_t got;  // bytes read so far
  };

  Op* NewOp() {
    if (free_.empty()) {
      pool_.emplace_back();
      return &pool_.back();
    }
    Op* op = free_.back();
    free_.pop_back();
    return op;
  }

  // Moves queued reads into the submission ring and enters the kernel.
  Status SubmitQueued() {
    std::vector<Op*> prepared;
    while (!queued_.empty() && in_kernel_ + prepared.size() < depth_) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) break;
      Op* op = queued_.front();
      queued_.pop_front();
      io_uring_prep_read(sqe, op->fd, op->request->scratch + op->got,
                         static_cast<unsigned>(op->request->len - op->got),
                         op->request->offset + op->got);
      io_uring_sqe_set_data(sqe, op);
      prepared.push_back(op);
    }
    size_t left = prepared.size();
    Status s;
    while (left > 0) {
      const int r = io_uring_submit(&ring_);
      if (r == -EINTR) continue;
      if ((r == -EAGAIN || r == -EBUSY) && in_kernel_ > 0) {
        // The kernel is short of resources or the completion queue is full: make room.
        if (!ReapOne()) {
          s = Status::IOError("io_uring: waiting for completions failed");
          break;
        }
        ReapReady();
        continue;
      }
      if (r <= 0) {
        s = r < 0 ? ErrnoStatus("io_uring_submit", -r)
                  : Status::IOError("io_uring_submit", "no entries taken");
        break;
      }
      in_kernel_ += static_cast<unsigned>(r);
      left -= static_cast<size_t>(r);
    }
    // The kernel takes entries in order; those it did not take stay in the ring unconsumed (a
    // broken reader never enters the kernel to submit again) and are read another way.
    for (size_t i = prepared.size(); left > 0; left--) queued_.push_front(prepared[--i]);
    return s;
  }

  // Waits for one completion and handles it. False when waiting failed.
  bool ReapOne() {
    io_uring_cqe* cqe = nullptr;
    int r;
    do {
      r = io_uring_wait_cqe(&ring_, &cqe);
    } while (r == -EINTR);
    if (r < 0 || cqe == nullptr) return false;
    Handle(cqe);
    io_uring_cqe_seen(&ring_, cqe);
    return true;
  }

  void ReapReady() {
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
      Handle(cqe);
      io_uring_cqe_seen(&ring_, cqe);
    }
  }

  void Handle(const io_uring_cqe* cqe) {
    in_kernel_--;
    Op* op = static_cast<Op*>(io_uring_cqe_get_data(cqe));
    ReadRequest* req = op->request;
    if (cqe->res == -EAGAIN || cqe->res == -EINTR) {
      queued_.push_back(op);  // retried by the next Poll
      return;
    }
    if (cqe->res < 0) {
      req->status = Status::IOError("io_uring read at " + std::to_string(req->offset + op->got),
                                    std::strerror(-cqe->res));
      req->result = Slice(req->scratch, 0);
      completed_.push_back(op);
      return;
    }
    op->got += static_cast<size_t>(cqe->res);
    if (cqe->res > 0 && op->got < req->len) {
      queued_.push_back(op);  // a short read: continue from where it stopped
      return;
    }
    req->status = Status::OK();
    req->result = Slice(req->scratch, op->got);
    completed_.push_back(op);
  }

  void Break(const Status& s) {
    if (broken_.ok()) broken_ = s;
  }

  // Once broken: the reads not in the kernel are answered with pread(2).
  void FinishQueuedWithPread() {
    while (!queued_.empty()) {
      Op* op = queued_.front();
      queued_.pop_front();
      ReadRequest* req = op->request;
      req->status = Status::OK();
      while (op->got < req->len) {
        const ssize_t r = ::pread(op->fd, req->scratch + op->got, req->len - op->got,
                                  static_cast<off_t>(req->offset + op->got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          req->status = ErrnoStatus("pread", errno);
          break;
        }
        if (r == 0) break;
        op->got += static_cast<size_t>(r);
      }
      req->result = Slice(req->scratch, req->status.ok() ? op->got : 0);
      completed_.push_back(op);
    }
  }

  void RunCallbacks() {
    // Callbacks may Submit again; they are run from a private list.
    std::vector<Op*> ready;
    ready.swap(completed_);
    for (Op* op : ready) {
      const Op done = *op;
      free_.push_back(op);
      done.done(done.request, done.arg);
    }
  }

  const unsigned depth_;
  io_uring ring_{};
  unsigned in_kernel_ = 0;
  Status broken_;
  std::deque<Op*> queued_;      // waiting for room in the ring (or a retry)
  std::vector<Op*> completed_;  // done, callbacks not run yet
  std::deque<Op> pool_;         // stable addresses
  std::vector<Op*> free_;
};

}  // namespace

Status NewIoUringReader(unsigned queue_depth, std::unique_ptr<AsyncReader>* reader) {
  auto r = std::make_unique<IoUringReader>(queue_depth);
  Status s = r->Init();
  if (!s.ok()) return s;
  *reader = std::move(r);
  return Status::OK();
}

}  // namespace shale
