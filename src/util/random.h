// Random: a small, fast, seedable pseudo-random generator (SplitMix64 seeding a xorshift64*
// state). Deterministic for a seed on every platform, which makes randomized tests replayable.
// Not for cryptography.
// Thread safety: none; give each thread its own.
#pragma once

#include <cstdint>
#include <string>

namespace shale {

class Random {
 public:
  explicit Random(uint64_t seed) {
    // SplitMix64 spreads any seed (even 0) into a well-mixed non-zero state.
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    state_ = (z ^ (z >> 31)) | 1;
  }

  uint64_t Next64() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545f4914f6cdd1dull;
  }
  uint32_t Next() { return static_cast<uint32_t>(Next64() >> 32); }
  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next64()) * n) >> 64);
  }
  // True with probability 1/n. REQUIRES: n > 0.
  bool OneIn(uint64_t n) { return Uniform(n) == 0; }
  // Uniform in [0, 2^k) with k uniform in [0, max_log]: favours small numbers.
  uint64_t Skewed(int max_log) { return Uniform(uint64_t{1} << Uniform(max_log + 1)); }
  // len random bytes drawn from printable characters.
  std::string RandomString(size_t len) {
    std::string s(len, ' ');
    for (auto& c : s) c = static_cast<char>(' ' + Uniform(95));
    return s;
  }

 private:
  uint64_t state_;
};

}  // namespace shale
