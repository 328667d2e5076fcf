// SliceTransform: maps a key to a part of it, its prefix. With ColumnFamilyOptions::
// prefix_extractor set, table filters and memtable filters also hold the prefixes of keys, and
// iterators seek by prefix (ReadOptions::prefix_same_as_start, total_order_seek).
//
// A prefix extractor must be consistent with the comparator: for keys in its domain, keys with
// the same prefix are adjacent in key order, and Transform(key) is a prefix of key that is in
// the domain too. Keys outside the domain (InDomain false) have no prefix: their lookups and
// seeks use no prefix filter.
//
// Thread safety: a transform is shared by every thread of a DB; its methods must be callable
// concurrently. Name() is recorded in table files: a table whose filter was built by another
// extractor (or another length) is read without its prefix filter, so an extractor can change
// between opens of a DB.
#pragma once

#include <cstddef>
#include <memory>

#include "shale/slice.h"

namespace shale {

class SliceTransform {
 public:
  virtual ~SliceTransform() = default;
  // Identifies the transform and its parameters, e.g. "shale.FixedPrefix.8".
  virtual const char* Name() const = 0;
  // The prefix of key. REQUIRES: InDomain(key). The result points into key.
  virtual Slice Transform(const Slice& key) const = 0;
  // Whether key has a prefix.
  virtual bool InDomain(const Slice& key) const = 0;
  // Whether key is the prefix of some key (Transform(x) == key for some x).
  virtual bool InRange(const Slice& key) const { return InDomain(key); }
};

// The first prefix_len bytes of keys at least that long; shorter keys have no prefix.
std::shared_ptr<const SliceTransform> NewFixedPrefixTransform(size_t prefix_len);
// The first cap_len bytes of a key, or the whole key when it is shorter: every key has one.
std::shared_ptr<const SliceTransform> NewCappedPrefixTransform(size_t cap_len);
// The whole key.
std::shared_ptr<const SliceTransform> NewNoopTransform();

}  // namespace shale
