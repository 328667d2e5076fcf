// Raw bytes as one VersionEdit, a MANIFEST record (format in src/db/version_edit.h), through
// VersionEdit::DecodeFrom. Malformed bytes must give Corruption, never a crash. An edit that
// decodes must round-trip: EncodeTo gives bytes that decode to the same edit (every field equal)
// and re-encode to the same bytes, never longer than the input (see CheckVersionEditRoundTrip).
#include <cstdint>

#include "shale/slice.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shale::fuzz::CheckVersionEditRoundTrip(shale::Slice(reinterpret_cast<const char*>(data), size));
  return 0;
}
