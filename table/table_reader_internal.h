// Helpers shared by the files of TableReader (table_reader.cc, table_iterator.cc,
// table_multiget.cc): statistics and PerfContext counting, the Corruption statuses every read
// path reports in the same words, and the bounds a block read successfully lies within.
// Internal to table/: not for the DB or tools.
// Thread safety: stateless.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "shale/statistics.h"
#include "shale/status.h"
#include "src/monitoring/perf_context_imp.h"
#include "table/format.h"

namespace shale {
namespace table_internal {

inline void RecordTick(Statistics* stats, Tickers t) {
  if (stats != nullptr) stats->recordTick(t);
}

// A block read from the file, in the calling thread's PerfContext.
inline void CountBlockRead(const BlockHandle& handle) {
  if (!PerfCountEnabled()) return;
  PerfCount(&PerfContext::block_read_count);
  PerfCount(&PerfContext::block_read_byte, handle.size() + kBlockTrailerSize);
}

// True when the block at handle, trailer included, lies inside a file of file_size bytes
// (written so that no sum can overflow). ReadBlock, BlockReadRequest::Prepare and
// ReadaheadBuffer::ReadBlock refuse any other handle with Corruption, so every block read
// successfully satisfies it, whatever the file holds.
inline bool BlockWithinFile(const BlockHandle& handle, uint64_t file_size) {
  return handle.offset() <= file_size && handle.size() <= file_size - handle.offset() &&
         file_size - handle.offset() - handle.size() >= kBlockTrailerSize;
}

// An index entry whose value does not decode as a BlockHandle.
inline Status BadIndexEntry(const std::string& file_name) {
  return Status::Corruption(file_name, "bad index entry");
}

// The index block's iterator failed with index_status.
inline Status IndexBlockCorruption(const std::string& file_name, const Status& index_status) {
  return Status::Corruption(file_name + ": index block", index_status.ToString());
}

// A data block's iterator failed with block_status: a block iterator's error does not know
// the file, so name it, and the block.
inline Status DataBlockCorruption(const std::string& file_name, uint64_t offset,
                                  const Status& block_status) {
  return Status::Corruption(fmt::format("{}: data block at offset {}", file_name, offset),
                            block_status.ToString());
}

// A data block entry whose key does not parse as an internal key.
inline Status BadInternalKey(const std::string& file_name, uint64_t offset) {
  return Status::Corruption(
      fmt::format("{}: bad internal key in block at offset {}", file_name, offset));
}

}  // namespace table_internal
}  // namespace shale
