// The table's filter: one cache-local Bloom filter over the user keys of the whole file.
//
//   filter_block := lines[num_lines × 64 bytes] num_lines:fixed32 num_probes:u8 kind:u8
//   kind 1 = cache-local Bloom over whole user keys (and maybe prefixes)
//   kind 2 = cache-local Bloom over prefixes only (ColumnFamilyOptions::whole_key_filtering
//            false): readers that do not know it take it as "may match", never as a key filter
//
// A key's 64-bit XXH3 hash picks its 64-byte line with the low 32 bits (multiply-shift range
// reduction) and its num_probes bits inside that line with the high 32 bits (each probe takes
// the top 9 bits of the running product with an odd constant). All probes of a key touch one
// cache line, so a probe costs one cache miss. num_probes is chosen from bits/key; at 10
// bits/key it is 6 and the false-positive rate is about 1 %.
//
// The reader honours what the block says (lines, probes, kind), not the current options; an
// unknown kind or malformed block reads as "may match" for every key, so a damaged filter can
// only cause extra reads, never a missed key.
//
// Thread safety: the builder belongs to one thread; the reader is immutable and shareable.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "shale/slice.h"

namespace shale {

constexpr uint8_t kCacheLocalBloomKind = 1;
constexpr uint8_t kPrefixOnlyBloomKind = 2;
constexpr size_t kFilterLineBytes = 64;

// The number of probes used at a given bits/key.
int BloomProbesForBitsPerKey(double bits_per_key);

class FilterBlockBuilder {
 public:
  // REQUIRES: bits_per_key > 0. kind: kCacheLocalBloomKind or kPrefixOnlyBloomKind (the
  // layout is the same; the kind says what was added).
  explicit FilterBlockBuilder(double bits_per_key, uint8_t kind = kCacheLocalBloomKind);
  FilterBlockBuilder(const FilterBlockBuilder&) = delete;
  FilterBlockBuilder& operator=(const FilterBlockBuilder&) = delete;

  // Adds a user key; consecutive duplicates (versions of one key) count once.
  void AddKey(const Slice& user_key);
  void AddHash(uint64_t hash);
  size_t num_keys() const { return hashes_.size(); }
  // Builds the block from every key added and clears the builder.
  std::string Finish();

 private:
  const double bits_per_key_;
  const int num_probes_;
  const uint8_t kind_;
  // The hashes of the keys added, held until Finish sizes the filter by their count. A deque
  // grows by fixed-size nodes without moving them: N keys take about 8N bytes, where a vector
  // that doubles takes up to 16N, and 24N while it copies into its next buffer.
  std::deque<uint64_t> hashes_;
};

class FilterBlockReader {
 public:
  // contents must outlive the reader.
  explicit FilterBlockReader(const Slice& contents);

  bool KeyMayMatch(const Slice& user_key) const;
  bool HashMayMatch(uint64_t hash) const;
  // Starts loading the cache line HashMayMatch(hash) will probe (batched lookups hash every
  // key and prefetch its line before probing any).
  void PrefetchHash(uint64_t hash) const;
  // False when the block was not understood (every probe then says "may match").
  bool valid() const { return valid_; }
  int num_probes() const { return num_probes_; }
  uint8_t kind() const { return kind_; }
  uint32_t num_lines() const { return num_lines_; }

 private:
  // The 64-byte line hash maps to. REQUIRES: num_lines_ > 0.
  const char* LineFor(uint64_t hash) const;

  const char* lines_ = nullptr;
  uint32_t num_lines_ = 0;
  int num_probes_ = 0;
  uint8_t kind_ = 0;
  bool valid_ = false;
};

}  // namespace shale
