// GetContext: the state of one point lookup while entries of its key arrive newest first from
// memtables and tables.
//
// Get mode: the first Value or Deletion ends the search; Merge operands accumulate until a base
// (Value), a Deletion or the end (Finish) resolves them with the merge operator. A plain value
// found in pinnable memory is pinned into the caller's PinnableSlice instead of copied.
// Operand mode (GetMergeOperands): operands are collected, not merged — a base value counts as
// the oldest operand, a Deletion ends the collection, and continue_cb may stop it early.
// Range tombstones: each source reports, before its entries, the newest tombstone it holds that
// covers the key at the read sequence (UpdateCoveringSeq); entries below it count as a Deletion,
// and once a source with one has given its entries the lookup ends there (EndIfCovered): every
// entry of the key in older sources is older than the tombstone.
// Operands in pinnable memory are pinned (each source — a memtable, a cached block — once),
// others copied; each goes straight into the caller's slices (OperandSlots), and TakePins
// hands over everything that keeps them alive.
// Thread safety: one lookup, one thread.
#pragma once

#include <forward_list>
#include <functional>
#include <string>
#include <vector>

#include "shale/merge_operator.h"
#include "shale/pinnable_slice.h"
#include "shale/status.h"
#include "src/base/dbformat.h"

namespace shale {

class Statistics;

// Lets a source keep the bytes it hands to GetContext alive: fn(arg, target) registers on
// target a cleanup that releases a reference taken now. fn == nullptr: not pinnable, copy.
struct Pinner {
  void (*fn)(void* arg, Cleanable* target) = nullptr;
  void* arg = nullptr;
  // The memory a pin keeps alive (a memtable, a block): consecutive entries from the same
  // source need only one pin.
  const void* source = nullptr;
};

class GetContext {
 public:
  enum class State { kNotFound, kFound, kDeleted, kMerge, kCorrupt };

  // value receives the answer; it must be Reset() by the caller beforehand.
  GetContext(const MergeOperator* merge_operator, Statistics* stats, const Slice& user_key,
             PinnableSlice* value);
  // Where operand mode puts the operands: the caller's slices, filled from the back (the
  // newest operand in the last slot), each pinned with release(bundle). Operands beyond the
  // slots are only counted. The caller moves the filled tail to the front when it is shorter.
  struct OperandSlots {
    PinnableSlice* slots = nullptr;
    size_t capacity = 0;
    Cleanable::CleanupFunction release = nullptr;
    void* bundle = nullptr;
  };
  // Operand mode. continue_cb (may be empty) sees each operand, newest first.
  GetContext(Statistics* stats, const Slice& user_key,
             const std::function<bool(Slice)>* continue_cb, const OperandSlots& slots);
  ~GetContext();
  GetContext(const GetContext&) = delete;
  GetContext& operator=(const GetContext&) = delete;

  // Offers one entry of the key visible to the read, newest first. Returns true when older
  // entries are still needed.
  bool SaveValue(const ParsedInternalKey& key, const Slice& value, const Pinner& pinner);
  // No older entry exists: resolves pending merge operands with no base.
  void Finish();
  // A range tombstone at t covers the key for this read (t = 0: none).
  void UpdateCoveringSeq(SequenceNumber t) {
    if (t > covering_seq_) covering_seq_ = t;
  }
  SequenceNumber covering_seq() const { return covering_seq_; }
  // Called when a source has given all its entries of the key: with a covering tombstone, the
  // key's remaining entries are all below it, so the lookup ends as at a Deletion.
  void EndIfCovered() {
    if (covering_seq_ != 0 && !resolved()) OnDeletion();
  }

  State state() const { return state_; }
  // Operand mode: how many operands the key has (some may not have fit the slots), and what
  // keeps the collected ones alive, which the caller takes over.
  size_t operand_count() const { return operand_count_; }
  void TakePins(Cleanable* pins, std::forward_list<std::string>* copies);
  // The answer is known: a value, a deletion, or a failure (no older entry can change it).
  bool resolved() const {
    return state_ == State::kFound || state_ == State::kDeleted || state_ == State::kCorrupt;
  }
  // OK (found), NotFound (absent or deleted), or Corruption (merge failure).
  Status status() const;
  const Slice& user_key() const { return user_key_; }

 private:
  void ResolveMerge(const Slice* base);
  // A Deletion (or an entry a range tombstone covers) ends the search.
  void OnDeletion();
  // Keeps an operand: pinned when its source allows (once per source), else copied.
  void AddOperand(const Slice& operand, const Pinner& pinner);

  const MergeOperator* const merge_operator_;
  Statistics* const stats_;
  const Slice user_key_;
  PinnableSlice* const value_;
  const bool collect_ = false;
  const std::function<bool(Slice)>* const continue_cb_ = nullptr;
  const void* last_pinned_source_ = nullptr;
  State state_ = State::kNotFound;
  SequenceNumber covering_seq_ = 0;
  Status merge_status_;
  // Get mode: merge operands newest first; their bytes are kept alive by operand_pins_ or
  // operand_copies_.
  std::vector<Slice> operands_;
  // Operand mode: the caller's slots and the operands met so far.
  const OperandSlots slots_;
  size_t operand_count_ = 0;
  uint64_t merges_seen_ = 0;  // added to PerfContext::internal_merge_count once, at the end
  Cleanable operand_pins_;
  // A list, not a deque: nothing is allocated until an operand must be copied (a deque allocates
  // when constructed, and a GetContext is made for every Get), and copies never move.
  std::forward_list<std::string> operand_copies_;
};

}  // namespace shale
