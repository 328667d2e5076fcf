// Raw bytes as a MANIFEST record of VersionEdits, one per column family (format in
// src/db/version_edit.h), through VersionEdit::DecodeRecord. Malformed bytes must give
// Corruption, never a crash. A record that decodes must round-trip: EncodeRecord gives bytes that
// decode to the same edits (every field equal) and re-encode to the same bytes, never longer than
// the input; DecodeFrom accepts it exactly when it has one section (see
// CheckVersionEditRoundTrip).
#include <cstdint>

#include "shale/slice.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shale::fuzz::CheckVersionEditRoundTrip(shale::Slice(reinterpret_cast<const char*>(data), size));
  return 0;
}
