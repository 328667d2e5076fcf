// RateLimitedWritableFile: a WritableFile whose appends first pass a RateLimiter at one
// priority (flush outputs at kHigh, compaction outputs at kLow).
//
// Ownership: owns the wrapped file; borrows the limiter and statistics, which outlive it.
// Thread safety: as the wrapped file (one thread at a time); the limiter is thread-safe.
#pragma once

#include <memory>
#include <utility>

#include "shale/file_system.h"
#include "shale/rate_limiter.h"

namespace shale {

class RateLimitedWritableFile final : public WritableFile {
 public:
  RateLimitedWritableFile(std::unique_ptr<WritableFile> file, RateLimiter* limiter, IOPriority pri,
                          Statistics* stats)
      : file_(std::move(file)), limiter_(limiter), pri_(pri), stats_(stats) {}

  Status Append(const Slice& data) override {
    limiter_->Request(static_cast<int64_t>(data.size()), pri_, stats_);
    return file_->Append(data);
  }
  Status AppendJoined(const Slice& head, const Slice& body) override {
    limiter_->Request(static_cast<int64_t>(head.size() + body.size()), pri_, stats_);
    return file_->AppendJoined(head, body);
  }
  Status Flush() override { return file_->Flush(); }
  Status Sync() override { return file_->Sync(); }
  Status Close() override { return file_->Close(); }
  uint64_t GetFileSize() const override { return file_->GetFileSize(); }

  // The wrapped file, or file itself when limiter is null or does not limit writes.
  static std::unique_ptr<WritableFile> Wrap(std::unique_ptr<WritableFile> file,
                                            RateLimiter* limiter, IOPriority pri,
                                            Statistics* stats) {
    if (limiter == nullptr || !limiter->IsRateLimited(RateLimiter::OpType::kWrite)) return file;
    return std::make_unique<RateLimitedWritableFile>(std::move(file), limiter, pri, stats);
  }

 private:
  std::unique_ptr<WritableFile> file_;
  RateLimiter* const limiter_;
  const IOPriority pri_;
  Statistics* const stats_;
};

}  // namespace shale
