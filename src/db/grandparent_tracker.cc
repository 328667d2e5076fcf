#include "src/db/grandparent_tracker.h"

#include <algorithm>

#include "src/base/dbformat.h"

namespace shale {

uint64_t GrandparentTracker::BytesAtKey() const {
  return in_gap_ ? 0 : (*grandparents_)[index_]->file_size;
}

bool GrandparentTracker::CutBefore(const Slice& user_key, bool output_open, uint64_t output_bytes) {
  const FileList& gp = *grandparents_;
  const uint64_t overlapped_before = overlapped_bytes_;
  size_t crossed = 0;
  while (index_ < gp.size()) {
    if (in_gap_) {
      if (ucmp_->Compare(user_key, ExtractUserKey(gp[index_]->smallest)) < 0) break;
      in_gap_ = false;  // enters the file
      if (seen_key_) {
        crossed++;
        overlapped_bytes_ += gp[index_]->file_size;
      }
    } else {
      if (ucmp_->Compare(user_key, ExtractUserKey(gp[index_]->largest)) <= 0) break;
      in_gap_ = true;  // leaves the file
      index_++;
      if (seen_key_) crossed++;
    }
  }
  if (!seen_key_) {
    seen_key_ = true;
    overlapped_bytes_ = BytesAtKey();
    return false;
  }
  if (!output_open) {
    // The last output ended (at its size limit): the next one starts its own count here.
    boundaries_crossed_ = 0;
    overlapped_bytes_ = BytesAtKey();
    return false;
  }
  boundaries_crossed_ += crossed;
  if (crossed == 0) return false;
  const bool cut =
      overlapped_bytes_ + output_bytes > 25 * target_ ||
      (crossed >= (in_gap_ ? 2u : 3u) && overlapped_bytes_ - overlapped_before > target_ / 8) ||
      output_bytes >= (target_ + 99) / 100 * (50 + std::min<uint64_t>(5 * boundaries_crossed_, 40));
  if (cut) {
    boundaries_crossed_ = 0;
    overlapped_bytes_ = BytesAtKey();
  }
  return cut;
}

}  // namespace shale
