// InternalIterator: iteration over internal keys (user_key + tag), the common contract of
// memtable, block, table and merging iterators. DBIter turns one into the user-visible Iterator.
//
// key() is an internal key; key()/value() stay valid until the iterator moves or dies.
// Cleanups registered on an iterator (Cleanable) run when it is destroyed: that is how an
// iterator keeps the table, block or memtable it reads alive.
// Thread safety: one thread at a time per iterator.
#pragma once

#include <memory>
#include <vector>

#include "shale/pinnable_slice.h"
#include "shale/slice.h"
#include "shale/slice_transform.h"
#include "shale/snapshot.h"
#include "shale/status.h"

namespace shale {

// A prefix seek: the prefix of the target's user key, by the family's extractor.
// stop_at_prefix_end: the reader stops at the first key without that prefix (ReadOptions::
// prefix_same_as_start), so what follows need not be correct; otherwise iterators skipped by
// their filters are sought as soon as iteration leaves the prefix, and every key shows.
struct PrefixSeek {
  Slice prefix;
  const SliceTransform* extractor = nullptr;
  bool stop_at_prefix_end = false;

  // Whether user_key has this prefix.
  bool Matches(const Slice& user_key) const {
    return extractor->InDomain(user_key) && extractor->Transform(user_key) == prefix;
  }
};

class StagedRead;  // src/base/async_read.h
using StagedReads = std::vector<StagedRead*>;

class InternalIterator : public Cleanable {
 public:
  InternalIterator() = default;
  InternalIterator(const InternalIterator&) = delete;
  InternalIterator& operator=(const InternalIterator&) = delete;
  virtual ~InternalIterator() = default;

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // First entry >= target (an internal key).
  virtual void Seek(const Slice& target) = 0;
  // Last entry <= target (an internal key).
  virtual void SeekForPrev(const Slice& target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual Slice key() const = 0;
  virtual Slice value() const = 0;
  virtual Status status() const = 0;

  // Seek(target) for a reader that wants the keys with target's prefix first (see PrefixSeek).
  // An iterator that can tell from a filter that it holds no key with that prefix at or after
  // target returns false and is left unpositioned: it must be sought again before use. true:
  // positioned as Seek(target) would.
  virtual bool SeekInPrefix(const Slice& target, const PrefixSeek& prefix) {
    (void)prefix;
    Seek(target);
    return true;
  }
  // Readies Seek(target) (for_prev: SeekForPrev(target)), which must be the next call: a data
  // block it will need and cannot find at hand is added to reads, which the caller may run
  // together with other iterators' (RunStagedReads) before positioning them all; a read not
  // run is done by the positioning itself. Another positioning call drops what was readied;
  // Next, Prev, key and value may not come in between (the iterator's position is in flux). A
  // merging iterator uses this so that one seek over many sorted runs waits for one round of reads
  // instead of one per run. Default: nothing.
  virtual void PrepareSeek(const Slice& target, bool for_prev, StagedReads* reads) {
    (void)target;
    (void)for_prev;
    (void)reads;
  }
  // Seek(target) (backward: SeekForPrev(target)) where a range tombstone at seq deletes every
  // older entry of the user keys from target's up to past's (backward: from past's up to
  // target's): an iterator may position the children it can tell hold only such entries there
  // at past instead, without reading what lies between. Returns whether any child went to
  // past. Default: Seek / SeekForPrev(target), false.
  virtual bool SeekCovered(const Slice& target, const Slice& past, SequenceNumber seq,
                           bool backward) {
    (void)past;
    (void)seq;
    if (backward) {
      SeekForPrev(target);
    } else {
      Seek(target);
    }
    return false;
  }
  // Every entry of a user key in [start, end) with a sequence below seq is deleted (a range
  // tombstone covers it). Moving forward (backward), at an entry of such a key, an iterator
  // may move those of its children that hold no entry at or above seq and stand in the range
  // to their first entry at or after end (their last before start), and then stands on its
  // smallest (largest) entry again, as Next (Prev) would leave it. Returns whether anything
  // moved. Default: nothing.
  virtual bool SkipCovered(const Slice& start, const Slice& end, SequenceNumber seq,
                           bool backward) {
    (void)start;
    (void)end;
    (void)seq;
    (void)backward;
    return false;
  }
  // Readies SeekInPrefix(target, prefix), which must be the next call, as PrepareSeek readies
  // Seek; where a filter rules the prefix out nothing is read. Default: nothing.
  virtual void PrepareSeekInPrefix(const Slice& target, const PrefixSeek& prefix,
                                   StagedReads* reads) {
    (void)target;
    (void)prefix;
    (void)reads;
  }
};

// An iterator over nothing, with status s (OK: simply empty).
std::unique_ptr<InternalIterator> NewErrorInternalIterator(const Status& s);

}  // namespace shale
