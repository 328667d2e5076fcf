// ZeroFillAhead: when a writable file opened with FileOptions::zero_fill_ahead writes zeros
// past its data, and how far. Both the POSIX file and the test file system follow it, so the
// tests' files take the shape real ones do.
//
// Policy: nothing at the first Sync (a file synced once, like a MANIFEST's first snapshot,
// never pays for zeros); from the second Sync on, whenever fewer than half of `ahead` bytes of
// zeros remain past the data, fill up to `ahead` bytes past it. Filling is best effort: the
// first shortfall (a full disk, an error) ends it for the file's lifetime, and the data's own
// writes and syncs report what matters.
//
// Due() counts the file's syncs (syncs()), which also decide when mapped appends end
// (src/env/mapped_appends.h): files call it at every Sync, zeros asked for or not.
//
// Thread safety: none; owned by one file object and used by its single writer.
#pragma once

#include <algorithm>
#include <cstdint>

namespace shale {

class ZeroFillAhead {
 public:
  explicit ZeroFillAhead(uint64_t ahead) : ahead_(ahead) {}

  // Called at each Sync with the data's size (it counts the syncs): true if zeros are due
  // now, in [*from, *to).
  bool Due(uint64_t size, uint64_t* from, uint64_t* to) {
    if (++syncs_ < 2 || ahead_ == 0 || size + ahead_ / 2 <= filled_) return false;
    *from = std::max(filled_, size);
    *to = size + ahead_;
    return true;
  }
  // The zeros of a Due() range now reach `reached` (short of `to`: filling stops for good).
  void Filled(uint64_t reached, uint64_t to) {
    filled_ = std::max(filled_, reached);
    if (reached < to) ahead_ = 0;
  }
  // Syncs counted by Due so far.
  uint64_t syncs() const { return syncs_; }
  // End of the zeros written so far (0: none); data written since may lie past it.
  uint64_t filled() const { return filled_; }

 private:
  uint64_t ahead_;  // 0: off, or stopped after a shortfall
  uint64_t filled_ = 0;
  uint64_t syncs_ = 0;
};

}  // namespace shale
