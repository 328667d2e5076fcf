#include "table/table_iterator.h"

#include <utility>

#include "src/util/invariants.h"
#include "table/table_reader_internal.h"

namespace shale {

using table_internal::BadIndexEntry;
using table_internal::DataBlockCorruption;
using table_internal::IndexBlockCorruption;

TableIterator::TableIterator(const TableReader* table, const ReadOptions& options,
                             const InternalKeyComparator* cmp,
                             std::unique_ptr<InternalIterator> index)
    : table_(table),
      options_(options),
      cmp_(cmp),
      index_(std::move(index)),
      auto_readahead_(options.readahead_size == 0) {
  if (options.readahead_size > 0) {
    readahead_ = std::make_unique<ReadaheadBuffer>(options.readahead_size);
  }
}

// block_ is held exactly while data_valid_ (LoadBlock sets both, ClearBlock clears both).
// Its pin is released here, before the InternalIterator base runs the cleanups registered on
// this iterator: one of them may release the reader (TableCache::NewIterator's pin on it),
// and with the reader may go the last reference to the block cache the pin is in.
TableIterator::~TableIterator() {
  SHALE_ASSERT(data_valid_ == (block_.get() != nullptr));
  ClearBlock();
  staged_.Drop();
}

void TableIterator::PrepareSeek(const Slice& target, bool for_prev, StagedReads* reads) {
  staged_.Drop();
  staged_.target.assign(target.data(), target.size());
  if (options_.readahead_size > 0) return;  // every block comes through the window
  index_->Seek(table_->IndexTarget(target));
  if (for_prev && !index_->Valid() && index_->status().ok()) index_->SeekToLast();
  staged_.positioned = true;
  staged_.for_prev = for_prev;
  if (!index_->Valid()) return;
  Slice v = index_->value();
  BlockHandle handle;
  if (!handle.DecodeFrom(&v).ok()) return;                      // LoadBlock reports it
  if (data_valid_ && handle.offset() == block_offset_) return;  // LoadBlock keeps it
  // The block right after the last one loaded comes through the automatic readahead once
  // the loads have been sequential long enough (TrackSequentialLoad).
  if (auto_readahead_ && handle.offset() == next_block_at_ &&
      (readahead_ != nullptr || sequential_loads_ + 1 > kAutoReadaheadAfter)) {
    return;
  }
  staged_.has_block = true;
  staged_.handle = handle;
  if (!table_->FindCachedDataBlock(handle, &staged_.block)) reads->push_back(&staged_);
}

void TableIterator::PrepareSeekInPrefix(const Slice& target, const PrefixSeek& prefix,
                                        StagedReads* reads) {
  if (!table_->PrefixMayMatch(prefix.prefix)) {
    staged_.Drop();
    staged_.prefix = Staged::PrefixVerdict::kRuledOut;
    staged_.target.assign(target.data(), target.size());
    return;
  }
  PrepareSeek(target, false, reads);
  staged_.prefix = Staged::PrefixVerdict::kMayMatch;
}

bool TableIterator::TakeStagedSeek(const Slice& target, bool for_prev) {
  const bool same =
      staged_.positioned && staged_.for_prev == for_prev && Slice(staged_.target) == target;
  staged_.Unposition();
  return same;
}

void TableIterator::SeekToFirst() {
  staged_.Unposition();
  index_->SeekToFirst();
  LoadBlock();
  if (data_valid_) data_.SeekToFirst();
  SkipEmptyForward();
}

void TableIterator::SeekToLast() {
  staged_.Unposition();
  index_->SeekToLast();
  LoadBlock();
  if (data_valid_) data_.SeekToLast();
  SkipEmptyBackward();
}

void TableIterator::Seek(const Slice& target) {
  if (!TakeStagedSeek(target, false)) index_->Seek(table_->IndexTarget(target));
  LoadBlock();
  if (data_valid_) data_.Seek(target);
  SkipEmptyForward();
}

bool TableIterator::SeekInPrefix(const Slice& target, const PrefixSeek& prefix) {
  const Staged::PrefixVerdict verdict = std::exchange(staged_.prefix, Staged::PrefixVerdict::kNone);
  const bool may_match = verdict != Staged::PrefixVerdict::kNone && Slice(staged_.target) == target
                             ? verdict == Staged::PrefixVerdict::kMayMatch
                             : table_->PrefixMayMatch(prefix.prefix);
  if (!may_match) {
    staged_.Unposition();
    ClearBlock();
    return false;
  }
  Seek(target);
  return true;
}

void TableIterator::SeekForPrev(const Slice& target) {
  if (!TakeStagedSeek(target, true)) {
    index_->Seek(table_->IndexTarget(target));
    if (!index_->Valid() && index_->status().ok()) index_->SeekToLast();
  }
  LoadBlock();
  if (data_valid_) data_.SeekForPrev(target);
  SkipEmptyBackward();
}

void TableIterator::Next() {
  SHALE_ASSERT(!staged_.positioned);  // a prepared seek comes first (PrepareSeek)
  staged_.Unposition();               // and if not, the next seek seeks the index again
  data_.Next();
  SkipEmptyForward();
}

void TableIterator::Prev() {
  SHALE_ASSERT(!staged_.positioned);  // a prepared seek comes first (PrepareSeek)
  staged_.Unposition();               // and if not, the next seek seeks the index again
  data_.Prev();
  SkipEmptyBackward();
}

Status TableIterator::status() const {
  if (!index_->status().ok()) return IndexBlockCorruption(table_->file_name(), index_->status());
  if (!status_.ok()) return status_;
  if (data_valid_ && !data_.status().ok()) {
    return DataBlockCorruption(table_->file_name(), block_offset_, data_.status());
  }
  return Status::OK();
}

void TableIterator::LoadBlock() {
  if (!index_->Valid()) {
    ClearBlock();
    return;
  }
  Slice v = index_->value();
  BlockHandle handle;
  Status s = handle.DecodeFrom(&v);
  if (!s.ok()) {
    status_ = BadIndexEntry(table_->file_name());
    ClearBlock();
    return;
  }
  if (data_valid_ && handle.offset() == block_offset_) {  // already loaded
    SHALE_ASSERT(block_.get() != nullptr);                // and still held: data_ reads it
    return;
  }
  ClearBlock();
  if (auto_readahead_) TrackSequentialLoad(handle);
  if (staged_.has_block && staged_.handle.offset() == handle.offset()) {
    // PrepareSeek found it cached or read it; or staged a read that did not run: read now,
    // without a second cache lookup.
    staged_.has_block = false;
    if (staged_.block.get() != nullptr) {
      block_.TakeFrom(&staged_.block);
    } else if (!staged_.status.ok()) {
      s = std::exchange(staged_.status, Status::OK());
    } else {
      s = table_->ReadDataBlock(options_, handle, &block_, readahead_.get());
    }
  } else {
    if (staged_.has_block) staged_.Drop();
    s = table_->GetDataBlock(options_, handle, &block_, readahead_.get());
  }
  if (!s.ok()) {
    status_ = s;
    return;
  }
  SHALE_ASSERT(block_.get() != nullptr);
  block_.get()->InitIterator(cmp_, &data_);
  block_offset_ = handle.offset();
  data_valid_ = true;
}

void TableIterator::TrackSequentialLoad(const BlockHandle& handle) {
  if (handle.offset() != next_block_at_) {
    sequential_loads_ = 0;
    readahead_.reset();
  }
  sequential_loads_++;
  next_block_at_ = handle.offset() + handle.size() + kBlockTrailerSize;
  if (readahead_ == nullptr && sequential_loads_ > kAutoReadaheadAfter) {
    readahead_ = std::make_unique<ReadaheadBuffer>(kAutoReadaheadInitial, kAutoReadaheadMax);
  }
}

void TableIterator::ClearBlock() {
  block_.Reset();
  data_valid_ = false;
}

// The index entry of a block is a key >= every key in it and < every key of the next block.
bool TableIterator::IndexKeyAtOrAbove(const Slice* bound) const {
  Slice k;
  return bound != nullptr && table_->IndexUserKey(index_->key(), &k) &&
         cmp_->user_comparator()->Compare(k, *bound) >= 0;
}

bool TableIterator::IndexKeyBelow(const Slice* bound) const {
  Slice k;
  return bound != nullptr && table_->IndexUserKey(index_->key(), &k) &&
         cmp_->user_comparator()->Compare(k, *bound) < 0;
}

void TableIterator::SkipEmptyForward() {
  while (status_.ok() && data_valid_ && !data_.Valid() && data_.status().ok()) {
    // Every key of the next blocks is past the block's index key: at or past the upper
    // bound, they are not read.
    if (IndexKeyAtOrAbove(options_.iterate_upper_bound)) {
      ClearBlock();
      return;
    }
    index_->Next();
    LoadBlock();
    if (data_valid_) data_.SeekToFirst();
  }
}

void TableIterator::SkipEmptyBackward() {
  while (status_.ok() && data_valid_ && !data_.Valid() && data_.status().ok()) {
    index_->Prev();
    // Every key of that block and those before it is at most its index key: below the lower
    // bound, they are not read.
    if (index_->Valid() && IndexKeyBelow(options_.iterate_lower_bound)) {
      ClearBlock();
      return;
    }
    LoadBlock();
    if (data_valid_) data_.SeekToLast();
  }
}

}  // namespace shale
