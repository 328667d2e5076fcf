// Iterator: ordered traversal over key/value pairs.
//
// An iterator is positioned at an entry (Valid()) or not. key()/value() point into memory the
// iterator keeps alive until it moves or is destroyed. Errors end the iteration: Valid() turns
// false and status() says why.
// Thread safety: one thread at a time per iterator; distinct iterators are independent.
#pragma once

#include "shale/pinnable_slice.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class Iterator : public Cleanable {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  virtual ~Iterator() = default;

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // Positions at the first key >= target.
  virtual void Seek(const Slice& target) = 0;
  // Positions at the last key <= target.
  virtual void SeekForPrev(const Slice& target) = 0;
  // REQUIRES: Valid().
  virtual void Next() = 0;
  // REQUIRES: Valid().
  virtual void Prev() = 0;
  // REQUIRES: Valid().
  virtual Slice key() const = 0;
  // REQUIRES: Valid().
  virtual Slice value() const = 0;
  virtual Status status() const = 0;
};

}  // namespace shale
