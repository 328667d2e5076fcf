// MultiGetKey: one key of a MultiGet batch on its way through memtables and levels.
//
// Ownership: the batch owns its keys (built in place: LookupKey and GetContext do not move);
// value is the caller's. Thread safety: one thread, or one coroutine at a time.
#pragma once

#include "shale/merge_operator.h"
#include "shale/pinnable_slice.h"
#include "shale/status.h"
#include "src/db/dbformat.h"
#include "src/db/get_context.h"

namespace shale {

class Statistics;

struct MultiGetKey {
  MultiGetKey(const Slice& user_key, SequenceNumber seq, const MergeOperator* merge_operator,
              Statistics* stats, PinnableSlice* value)
      : lkey(user_key, seq), ctx(merge_operator, stats, lkey.user_key(), value) {}
  MultiGetKey(const MultiGetKey&) = delete;
  MultiGetKey& operator=(const MultiGetKey&) = delete;

  // The answer is known, or an error (IOError, Corruption) ended the key's lookup.
  bool done() const { return !status.ok() || ctx.resolved(); }

  LookupKey lkey;
  GetContext ctx;
  Status status;  // the first error met on the way
};

}  // namespace shale
