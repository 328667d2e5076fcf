// Internal keys: how user keys carry their sequence number and operation type.
//
// Format:
//   internal_key := user_key tag:fixed64      tag := sequence << 8 | value_type
// Order (InternalKeyComparator): user key ascending (by the user comparator), then tag
// descending, so the newest version of a key comes first.
// Thread safety: pure functions and immutable comparators.
#pragma once

#include <cstdint>
#include <string>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "shale/snapshot.h"
#include "src/util/coding.h"
#include "src/util/invariants.h"

namespace shale {

// Stored in a byte; values are part of the WAL, memtable and SST formats. Never renumber.
enum ValueType : uint8_t {
  kTypeDeletion = 0x0,
  kTypeValue = 0x1,
  kTypeMerge = 0x2,
  // 0x3-0x6 reserved (RocksDB's bytes: log data, and the batch forms with a family id).
  // Deletes the one value written before it (DB::SingleDelete); compaction drops the pair.
  kTypeSingleDeletion = 0x7,
  // 0x8-0xE reserved. 0xF: a range tombstone (src/base/range_tombstone.h), in a WAL record and a
  // table's range-deletion block only, never among point entries: IsKnownValueType refuses it,
  // so a point entry whose type byte turned into 0xF is still a bad key.
  kTypeRangeDeletion = 0xF,
};
// The largest type: a lookup key with it sorts before every entry with the same sequence.
constexpr ValueType kValueTypeForSeek = kTypeSingleDeletion;
inline bool IsKnownValueType(uint8_t t) { return t <= kTypeMerge || t == kTypeSingleDeletion; }
// A point deletion of either kind: readers see the key as deleted from here down.
inline bool IsDeletion(ValueType t) { return t == kTypeDeletion || t == kTypeSingleDeletion; }

// Sequence numbers use the top 56 bits of the tag.
constexpr SequenceNumber kMaxSequenceNumber = (uint64_t{1} << 56) - 1;

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  SHALE_ASSERT(seq <= kMaxSequenceNumber);
  return (seq << 8) | t;
}

struct ParsedInternalKey {
  Slice user_key;
  SequenceNumber sequence = 0;
  ValueType type = kTypeValue;
};

inline void AppendInternalKey(std::string* dst, const Slice& user_key, SequenceNumber seq,
                              ValueType t) {
  dst->append(user_key.data(), user_key.size());
  PutFixed64(dst, PackSequenceAndType(seq, t));
}

// False if the key is shorter than a tag or has an unknown type.
inline bool ParseInternalKey(const Slice& internal_key, ParsedInternalKey* result) {
  if (internal_key.size() < 8) return false;
  uint64_t tag = DecodeFixed64(internal_key.data() + internal_key.size() - 8);
  uint8_t t = static_cast<uint8_t>(tag & 0xff);
  if (!IsKnownValueType(t)) return false;
  result->user_key = Slice(internal_key.data(), internal_key.size() - 8);
  result->sequence = tag >> 8;
  result->type = static_cast<ValueType>(t);
  return true;
}

// A file's bounds may also be range-tombstone keys: (start, seq, kTypeRangeDeletion) where a
// tombstone starts a file, and the sentinel (end, kMaxSequenceNumber, kTypeRangeDeletion) where
// one ends it. The sentinel sorts before every entry of the user key end, so a file whose largest
// key is a sentinel holds nothing of end: it ends just before it. ParseBoundaryKey accepts these
// besides the point keys ParseInternalKey does; only file bounds use it.
inline bool ParseBoundaryKey(const Slice& key, ParsedInternalKey* result) {
  if (key.size() < 8) return false;
  const uint64_t tag = DecodeFixed64(key.data() + key.size() - 8);
  const uint8_t t = static_cast<uint8_t>(tag & 0xff);
  if (!IsKnownValueType(t) && t != kTypeRangeDeletion) return false;
  result->user_key = Slice(key.data(), key.size() - 8);
  result->sequence = tag >> 8;
  result->type = static_cast<ValueType>(t);
  return true;
}
inline void AppendRangeDeletionSentinel(std::string* dst, const Slice& end) {
  AppendInternalKey(dst, end, kMaxSequenceNumber, kTypeRangeDeletion);
}
inline bool IsRangeDeletionSentinel(const Slice& key) {
  return key.size() >= 8 && DecodeFixed64(key.data() + key.size() - 8) ==
                                PackSequenceAndType(kMaxSequenceNumber, kTypeRangeDeletion);
}

inline Slice ExtractUserKey(const Slice& internal_key) {
  SHALE_ASSERT(internal_key.size() >= 8);
  return Slice(internal_key.data(), internal_key.size() - 8);
}
inline uint64_t ExtractTag(const Slice& internal_key) {
  SHALE_ASSERT(internal_key.size() >= 8);
  return DecodeFixed64(internal_key.data() + internal_key.size() - 8);
}

// Orders internal keys; wraps the user comparator. Immutable, shareable.
class InternalKeyComparator final : public Comparator {
 public:
  explicit InternalKeyComparator(const Comparator* user);
  int Compare(const Slice& a, const Slice& b) const override {
    // Keys from damaged blocks may be shorter than a tag: order them bytewise rather than
    // read outside them.
    if (a.size() < 8 || b.size() < 8) [[unlikely]]
      return a.compare(b);
    int r = user_->IsBytewise() ? ExtractUserKey(a).compare(ExtractUserKey(b))
                                : user_->Compare(ExtractUserKey(a), ExtractUserKey(b));
    if (r != 0) return r;
    uint64_t ta = ExtractTag(a);
    uint64_t tb = ExtractTag(b);
    return ta > tb ? -1 : (ta < tb ? +1 : 0);
  }
  const char* Name() const override { return name_.c_str(); }
  // Shortens the user key part and gives it the largest tag, so the result still sorts at or
  // after *start and before limit.
  void FindShortestSeparator(std::string* start, const Slice& limit) const override;
  void FindShortSuccessor(std::string* key) const override;
  const Comparator* user_comparator() const { return user_; }

 private:
  const Comparator* user_;
  std::string name_;
};

// A key to look up in a memtable: user_key at sequence, in both the memtable's entry-prefix
// form and as an internal key.
//   memtable_key := internal_key_length:varint32 internal_key
// Thread safety: a value; not shareable while being built.
class LookupKey {
 public:
  LookupKey(const Slice& user_key, SequenceNumber sequence);
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;

  Slice memtable_key() const { return Slice(start_, end_ - start_); }
  Slice internal_key() const { return Slice(kstart_, end_ - kstart_); }
  Slice user_key() const { return Slice(kstart_, end_ - kstart_ - 8); }
  SequenceNumber sequence() const { return DecodeFixed64(end_ - 8) >> 8; }

 private:
  const char* start_;
  const char* kstart_;
  const char* end_;
  std::string heap_;  // used when the key does not fit in space_
  char space_[200];
};

inline LookupKey::LookupKey(const Slice& user_key, SequenceNumber sequence) {
  size_t needed = user_key.size() + 8 + kMaxVarint32Length;
  char* dst = space_;
  if (needed > sizeof(space_)) {
    heap_.resize(needed);
    dst = heap_.data();
  }
  start_ = dst;
  dst = EncodeVarint32(dst, static_cast<uint32_t>(user_key.size() + 8));
  kstart_ = dst;
  if (!user_key.empty()) std::memcpy(dst, user_key.data(), user_key.size());
  dst += user_key.size();
  EncodeFixed64(dst, PackSequenceAndType(sequence, kValueTypeForSeek));
  end_ = dst + 8;
}

}  // namespace shale
