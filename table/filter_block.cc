#include "table/filter_block.h"

#include <cmath>
#include <cstring>

#include "src/util/coding.h"
#include "src/util/hash.h"
#include "src/util/invariants.h"

namespace shale {
namespace {

constexpr uint32_t kProbeMultiplier = 0x9e3779b9u;  // odd; golden-ratio bits
constexpr size_t kFilterTrailer = 4 + 1 + 1;

inline uint32_t LineOf(uint64_t hash, uint32_t num_lines) {
  return static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(hash)) * num_lines) >>
                               32);
}

}  // namespace

int BloomProbesForBitsPerKey(double bits_per_key) {
  // Within one 512-bit line the best probe count is lower than the textbook ln 2 × bits/key,
  // because lines fill unevenly. Thresholds in millibits per key.
  const int millibits = static_cast<int>(std::lround(bits_per_key * 1000));
  if (millibits <= 2080) return 1;
  if (millibits <= 3580) return 2;
  if (millibits <= 5100) return 3;
  if (millibits <= 6640) return 4;
  if (millibits <= 8300) return 5;
  if (millibits <= 10070) return 6;
  if (millibits <= 11720) return 7;
  if (millibits <= 14001) return 8;
  if (millibits <= 16050) return 9;
  if (millibits <= 18300) return 10;
  if (millibits <= 22001) return 11;
  if (millibits <= 25501) return 12;
  if (millibits > 50000) return 24;
  return (millibits - 1) / 2000 - 1;
}

FilterBlockBuilder::FilterBlockBuilder(double bits_per_key, uint8_t kind)
    : bits_per_key_(bits_per_key),
      num_probes_(BloomProbesForBitsPerKey(bits_per_key)),
      kind_(kind) {
  SHALE_ASSERT(bits_per_key > 0);
  SHALE_ASSERT(kind == kCacheLocalBloomKind || kind == kPrefixOnlyBloomKind);
}

void FilterBlockBuilder::AddKey(const Slice& user_key) { AddHash(Hash64(user_key)); }

void FilterBlockBuilder::AddHash(uint64_t hash) {
  if (hashes_.empty() || hashes_.back() != hash) hashes_.push_back(hash);
}

std::string FilterBlockBuilder::Finish() {
  const double bits = static_cast<double>(hashes_.size()) * bits_per_key_;
  uint32_t num_lines = 0;
  if (!hashes_.empty()) {
    num_lines = static_cast<uint32_t>(std::ceil(bits / (kFilterLineBytes * 8)));
    if (num_lines == 0) num_lines = 1;
  }
  std::string out(static_cast<size_t>(num_lines) * kFilterLineBytes, '\0');
  char* lines = out.data();
  for (uint64_t h : hashes_) {
    char* line = lines + static_cast<size_t>(LineOf(h, num_lines)) * kFilterLineBytes;
    uint32_t probe = static_cast<uint32_t>(h >> 32);
    for (int i = 0; i < num_probes_; i++) {
      const uint32_t bit = probe >> (32 - 9);  // 0..511
      line[bit >> 3] = static_cast<char>(line[bit >> 3] | (1 << (bit & 7)));
      probe *= kProbeMultiplier;
    }
  }
  PutFixed32(&out, num_lines);
  out.push_back(static_cast<char>(num_probes_));
  out.push_back(static_cast<char>(kind_));
  hashes_.clear();
  return out;
}

FilterBlockReader::FilterBlockReader(const Slice& contents) {
  if (contents.size() < kFilterTrailer) return;
  const char* trailer = contents.data() + contents.size() - kFilterTrailer;
  const uint32_t num_lines = DecodeFixed32(trailer);
  const int num_probes = static_cast<uint8_t>(trailer[4]);
  const uint8_t kind = static_cast<uint8_t>(trailer[5]);
  if ((kind != kCacheLocalBloomKind && kind != kPrefixOnlyBloomKind) || num_probes < 1 ||
      num_probes > 30) {
    return;
  }
  if (static_cast<uint64_t>(num_lines) * kFilterLineBytes != contents.size() - kFilterTrailer) {
    return;
  }
  lines_ = contents.data();
  num_lines_ = num_lines;
  num_probes_ = num_probes;
  kind_ = kind;
  valid_ = true;
}

bool FilterBlockReader::KeyMayMatch(const Slice& user_key) const {
  if (!valid_) return true;
  return HashMayMatch(Hash64(user_key));
}

const char* FilterBlockReader::LineFor(uint64_t hash) const {
  return lines_ + static_cast<size_t>(LineOf(hash, num_lines_)) * kFilterLineBytes;
}

void FilterBlockReader::PrefetchHash(uint64_t hash) const {
  if (valid_ && num_lines_ > 0) __builtin_prefetch(LineFor(hash));
}

bool FilterBlockReader::HashMayMatch(uint64_t hash) const {
  if (!valid_) return true;
  if (num_lines_ == 0) return false;  // a filter over no keys
  const char* line = LineFor(hash);
  __builtin_prefetch(line);
  uint32_t probe = static_cast<uint32_t>(hash >> 32);
  for (int i = 0; i < num_probes_; i++) {
    const uint32_t bit = probe >> (32 - 9);
    if ((line[bit >> 3] & (1 << (bit & 7))) == 0) return false;
    probe *= kProbeMultiplier;
  }
  return true;
}

}  // namespace shale
