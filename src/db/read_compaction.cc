#include "src/db/read_compaction.h"

#include <utility>

#include "src/db/version.h"
#include "src/util/invariants.h"

namespace shale {

ReadSampler::ReadSampler(const Version* version, uint64_t bytes_per_seek, uint64_t seed,
                         std::function<void()> due)
    : version_(version), bytes_per_seek_(bytes_per_seek), due_(std::move(due)), rnd_(seed) {
  SHALE_ASSERT(bytes_per_seek_ > 0);
  // The first sample falls anywhere in the first period: an iterator used for a single seek is
  // sampled one time in kSeekSamplePeriod.
  countdown_ = 1 + static_cast<uint32_t>(rnd_.Uniform(kSeekSamplePeriod));
}

void ReadSampler::Charge(const Slice& user_key) {
  const FileMetaData* top = version_->L0FileOverlappingOtherRuns(user_key);
  if (top == nullptr) return;
  // Samples are kSeekSamplePeriod seeks apart on average (the countdown is uniform in
  // [1, 2 × period - 1]): each stands for that many.
  const uint64_t allowed = AllowedSeeks(*top, bytes_per_seek_);
  const uint64_t before = top->seeks.Charge(kSeekSamplePeriod);
  if (before < allowed && before + kSeekSamplePeriod >= allowed) due_();
}

}  // namespace shale
