// Raw bytes as a filter block: probing must stay inside the block whatever its trailer says.
#include <cstdint>
#include <string>

#include "table/filter_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string block(reinterpret_cast<const char*>(data), size);
  shale::FilterBlockReader reader(block);
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 64; i++) {
    (void)reader.HashMayMatch(h);
    h = h * 6364136223846793005ull + 1442695040888963407ull;
  }
  (void)reader.KeyMayMatch(shale::Slice(block.data(), size < 16 ? size : 16));
  return 0;
}
