// Comparator: the total order of user keys.
//
// Thread safety: implementations must be stateless or internally synchronized; one comparator is
// shared by every thread of a DB. Name() is recorded on disk, and a DB refuses to open with a
// comparator of another name.
//
// Equal keys must be equal bytes: the bloom filters of memtables and tables hash a key's bytes,
// so with an order in which different byte strings compare equal (say, case-insensitive), a
// point read of one spelling can miss the key stored under another.
#pragma once

#include <string>

#include "shale/slice.h"

namespace shale {

class Comparator {
 public:
  virtual ~Comparator() = default;
  // <0 if a < b, 0 if equal, >0 if a > b.
  virtual int Compare(const Slice& a, const Slice& b) const = 0;
  virtual bool Equal(const Slice& a, const Slice& b) const { return Compare(a, b) == 0; }
  virtual const char* Name() const = 0;
  // Shortens *start to a key in [*start, limit) when possible (index separators).
  virtual void FindShortestSeparator(std::string* start, const Slice& limit) const = 0;
  // Shortens *key to a key >= *key when possible.
  virtual void FindShortSuccessor(std::string* key) const = 0;
  // True when Compare is plain memcmp order (lets hot paths skip the virtual call).
  virtual bool IsBytewise() const { return false; }
};

// memcmp order; "shale.BytewiseComparator". A static object: never delete it.
const Comparator* BytewiseComparator();

}  // namespace shale
