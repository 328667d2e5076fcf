// MappedAppends: the shape of a writable file opened with FileOptions::mmap_appends, which the
// POSIX file and the test file system both follow, so the tests' files take the shape real
// ones do.
//
// The file keeps zeros written past its data, from its first Append on: when an append would
// reach past them, zeros are written up to the kStep boundary after its end plus one more
// kStep (page-aligned). The POSIX file copies appends into a shared mapping of the
// kWindow-aligned window holding them, until its second Sync (a file synced often appends with
// write(2), with FileOptions::zero_fill_ahead's zeros if asked). Once its data passes the
// middle of its first window, a thread of its own (src/env/window_preparer.h) writes the zeros
// of the next window a kStep at a time ahead of the appends, so the POSIX file's zeros may
// reach the end of the window after the one holding the data's end; the test file system keeps
// to ZerosFor.
//
// Order within an append (the POSIX file; the two parts of an AppendJoined are one append): an
// append of at least 8 bytes that stays inside one window stores its bytes 4..8 first (one
// 4-byte store), then the bytes from 8 on, then its first 4 bytes (one 4-byte store). A
// process killed during the copy therefore leaves the first 4 bytes zero (the zeros they
// overwrite) unless all of the append landed, and bytes 4..8 in place if anything after them
// did; everything past the append stays zero. An append that crosses windows is copied piece
// by piece (one per window) in that order, each piece whole before the next window is mapped.
// A log record fragment starts with its checksum (4 bytes), then its length and type, and
// never crosses a 32 KiB log block, so never a window: a fragment cut off that way has a zero
// checksum in front of its true length and type (wal/log_format.h).
//
// Thread safety: constants and pure functions only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "shale/slice.h"

namespace shale {

struct MappedAppends {
  static constexpr uint64_t kWindow = 1 << 20;
  static constexpr uint64_t kStep = 32 << 10;
  static_assert(kWindow % kStep == 0 && kStep % 4096 == 0, "whole pages and steps");

  // Where zeros should reach once the data reaches `end` (past the zeros written so far).
  static uint64_t ZerosFor(uint64_t end) { return (end + kStep - 1) / kStep * kStep + kStep; }

  // Whether a file synced `syncs` times still appends through its mapping. A file synced again
  // and again appends with write(2) from its second sync on: each sync write-protects the
  // mapped pages, and the next copy into each would fault.
  static bool MapsAfterSyncs(uint64_t syncs) { return syncs < 2; }

  // Copies the concatenation of head and body to dst in the order described above. An append
  // of 4 to 7 bytes (a log fragment with no payload: a header alone at a block's end) stores
  // its bytes from 4 on first, then its first 4 bytes in one store; a shorter one (a block
  // trailer of zeros) is copied plainly.
  static void CopyFirstWordLast(char* dst, const Slice& head, const Slice& body) {
    const size_t n = head.size() + body.size();
    if (n < 4) {
      Gather(head, body, 0, n, dst);
      return;
    }
    char word[4];
    if (n < 8) {
      Gather(head, body, 4, n, dst + 4);
    } else {
      Gather(head, body, 4, 8, word);
      std::memcpy(dst + 4, word, 4);
      // The fences keep the compiler from reordering the parts (a process crash stops this
      // thread between two of its own stores; the ones before it all land).
      std::atomic_signal_fence(std::memory_order_seq_cst);
      Gather(head, body, 8, n, dst + 8);
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    Gather(head, body, 0, 4, word);
    std::memcpy(dst, word, 4);
  }

 private:
  // Copies bytes [from, to) of the concatenation of head and body to out.
  static void Gather(const Slice& head, const Slice& body, size_t from, size_t to, char* out) {
    if (from < head.size()) {
      const size_t end = std::min(to, head.size());
      std::memcpy(out, head.data() + from, end - from);
      out += end - from;
      from = end;
    }
    if (from < to) std::memcpy(out, body.data() + (from - head.size()), to - from);
  }
};

}  // namespace shale
