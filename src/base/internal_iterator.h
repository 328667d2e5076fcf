// InternalIterator: iteration over internal keys (user_key + tag), the common contract of
// memtable, block, table and merging iterators. DBIter turns one into the user-visible Iterator.
//
// key() is an internal key; key()/value() stay valid until the iterator moves or dies.
// Cleanups registered on an iterator (Cleanable) run when it is destroyed: that is how an
// iterator keeps the table, block or memtable it reads alive.
// Thread safety: one thread at a time per iterator.
#pragma once

#include <memory>

#include "shale/pinnable_slice.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

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
};

// An iterator over nothing, with status s (OK: simply empty).
std::unique_ptr<InternalIterator> NewErrorInternalIterator(const Status& s);

}  // namespace shale
