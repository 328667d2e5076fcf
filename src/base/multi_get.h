// MultiGetKey: one key of a MultiGet batch on its way through memtables and levels.
//
// Ownership: the batch owns its keys (built in place: LookupKey and GetContext do not move);
// value is the caller's. Thread safety: one thread, or one coroutine at a time.
#pragma once

#include "shale/merge_operator.h"
#include "shale/pinnable_slice.h"
#include "shale/status.h"
#include "src/base/dbformat.h"
#include "src/base/get_context.h"
#include "src/util/hash.h"

namespace shale {

class Statistics;

struct MultiGetKey {
  MultiGetKey(const Slice& user_key, SequenceNumber seq, const MergeOperator* merge_operator,
              Statistics* stats, PinnableSlice* value)
      : lkey(user_key, seq),
        ctx(merge_operator, stats, lkey.user_key(), value),
        hash(Hash64(user_key)) {}
  MultiGetKey(const MultiGetKey&) = delete;
  MultiGetKey& operator=(const MultiGetKey&) = delete;

  // The answer is known, or an error (IOError, Corruption) ended the key's lookup.
  bool done() const { return !status.ok() || ctx.resolved(); }

  LookupKey lkey;
  GetContext ctx;
  Status status;        // the first error met on the way
  uint64_t hash = 0;    // Hash64 of the user key, for filters
  size_t position = 0;  // in the sorted batch
  // The key's path through the tree (Version::NextCandidate): the level to look at next, and
  // within L0 the next file; exhausted when no file is left.
  int level = 0;
  size_t l0_index = 0;
  bool exhausted = false;
  size_t table = 0;  // scratch: the open table of the file the key is placed at
};

}  // namespace shale
