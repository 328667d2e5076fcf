// MemTableBloom: a whole-key Bloom filter in front of a memtable's skiplist, so that lookups of
// keys the memtable does not hold (most point reads once data has been flushed) skip the
// skiplist search and its cache misses.
//
// Layout: the same cache-local scheme as table filters (table/filter_block.h) — a key's hash
// picks one 64-byte line and num_probes bits inside it — but the bits live in atomic words so
// that inserts and lookups run concurrently. Sized once, at construction, from the memtable's
// write buffer size; it simply gets fuller (more false positives) if more keys arrive than
// expected. The hash is Hash64(user_key), the table filters' hash, so a batch hashes once.
//
// Ordering: Add happens before the entry is inserted and before its sequence number is
// published (release); a reader whose sequence covers the entry (acquire) therefore sees its
// bits, and a "no" answer is never wrong for what the reader may see.
// Ownership: the bits live in memory the caller provides (the memtable's arena).
// Thread safety: Add and MayContain may run concurrently from any threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace shale {

class MemTableBloom {
 public:
  static constexpr size_t kLineBytes = 64;
  static constexpr int kProbes = 6;

  // Bytes to allocate (64-byte aligned) for a filter of about `bytes`: a whole number of lines.
  static size_t RoundedSize(size_t bytes) {
    const size_t lines = bytes / kLineBytes;
    return (lines == 0 ? 1 : lines) * kLineBytes;
  }
  // mem: RoundedSize(bytes) bytes, 64-byte aligned, outliving the filter.
  MemTableBloom(char* mem, size_t rounded_bytes)
      : words_(reinterpret_cast<std::atomic<uint64_t>*>(mem)),
        num_lines_(static_cast<uint32_t>(rounded_bytes / kLineBytes)) {
    for (size_t i = 0; i < rounded_bytes / 8; i++) new (&words_[i]) std::atomic<uint64_t>(0);
  }

  void Add(uint64_t hash) {
    std::atomic<uint64_t>* line = Line(hash);
    uint64_t masks[kLineBytes / 8] = {};
    uint32_t probe = static_cast<uint32_t>(hash >> 32);
    for (int i = 0; i < kProbes; i++) {
      const uint32_t bit = probe >> (32 - 9);
      masks[bit >> 6] |= uint64_t{1} << (bit & 63);
      probe *= kProbeMultiplier;
    }
    for (size_t w = 0; w < kLineBytes / 8; w++) {
      // Skip the atomic read-modify-write when the bits are already set.
      if (masks[w] != 0 && (line[w].load(std::memory_order_relaxed) & masks[w]) != masks[w]) {
        line[w].fetch_or(masks[w], std::memory_order_relaxed);
      }
    }
  }

  bool MayContain(uint64_t hash) const {
    const std::atomic<uint64_t>* line = Line(hash);
    uint32_t probe = static_cast<uint32_t>(hash >> 32);
    for (int i = 0; i < kProbes; i++) {
      const uint32_t bit = probe >> (32 - 9);
      if ((line[bit >> 6].load(std::memory_order_relaxed) & (uint64_t{1} << (bit & 63))) == 0) {
        return false;
      }
      probe *= kProbeMultiplier;
    }
    return true;
  }

 private:
  static constexpr uint32_t kProbeMultiplier = 0x9e3779b9u;

  std::atomic<uint64_t>* Line(uint64_t hash) const {
    const uint32_t line = static_cast<uint32_t>(
        (static_cast<uint64_t>(static_cast<uint32_t>(hash)) * num_lines_) >> 32);
    return words_ + static_cast<size_t>(line) * (kLineBytes / 8);
  }

  std::atomic<uint64_t>* const words_;
  const uint32_t num_lines_;
};

}  // namespace shale
