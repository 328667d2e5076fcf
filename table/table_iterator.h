// TableIterator: the iterator TableReader::NewIterator returns — two-level iteration, the
// index block's iterator choosing the data block and a BlockIter walking it. Empty data
// blocks are skipped in the direction of travel; errors name the file, and the block.
//
// Readahead: with ReadOptions::readahead_size > 0 every block comes through a window of that
// size. With 0 (the default) it is automatic: once the iterator has loaded
// kAutoReadaheadAfter blocks in a row that follow one another in the file, later blocks come
// through a window that starts at kAutoReadaheadInitial bytes and doubles at each refill up to
// kAutoReadaheadMax; a jump elsewhere in the file (a seek) goes back to one read per block.
//
// Ownership: owns the index iterator and the pin (or copy) of the data block it is on;
// borrows the reader and the comparator, which must outlive it. Thread safety: one thread at
// a time, as every InternalIterator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/options.h"
#include "src/base/dbformat.h"
#include "src/base/internal_iterator.h"
#include "table/block.h"
#include "table/format.h"
#include "table/table_reader.h"

namespace shale {

class TableIterator final : public InternalIterator {
 public:
  static constexpr int kAutoReadaheadAfter = 2;
  static constexpr size_t kAutoReadaheadInitial = 8 << 10;
  static constexpr size_t kAutoReadaheadMax = 256 << 10;

  TableIterator(const TableReader* table, const ReadOptions& options,
                const InternalKeyComparator* cmp, std::unique_ptr<InternalIterator> index);
  ~TableIterator() override;

  bool Valid() const override { return data_valid_ && data_.Valid(); }
  void SeekToFirst() override;
  void SeekToLast() override;
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  // Checks the table's prefix filter first (false: no key of the table has the prefix).
  bool SeekInPrefix(const Slice& target, const PrefixSeek& prefix) override;
  // Seeks the index now and stages the data block the seek lands in: pinned when cached,
  // else a read added to reads (none under readahead, or for the block already loaded).
  void PrepareSeek(const Slice& target, bool for_prev, StagedReads* reads) override;
  // Checks the prefix filter now (its verdict kept for SeekInPrefix), then as PrepareSeek.
  void PrepareSeekInPrefix(const Slice& target, const PrefixSeek& prefix,
                           StagedReads* reads) override;
  void Next() override;
  void Prev() override;
  Slice key() const override { return data_.key(); }
  Slice value() const override { return data_.value(); }
  // A block iterator's error does not know the file: name it, and the block.
  Status status() const override;

 private:
  // Points data_ at the block the index is on (or invalid at the index's end or an error).
  void LoadBlock();
  // Releases the data block; data_ is invalid until the next LoadBlock.
  void ClearBlock();
  // Forward past an exhausted block, or backward into the previous one; both stop (invalid,
  // status OK) without reading the block when the index entry shows its keys are all at or
  // past ReadOptions::iterate_upper_bound (forward) or below iterate_lower_bound (backward).
  void SkipEmptyForward();
  void SkipEmptyBackward();
  // Whether the index entry's user key is >= bound (< bound); false without a bound.
  bool IndexKeyAtOrAbove(const Slice* bound) const;
  bool IndexKeyBelow(const Slice* bound) const;

  const TableReader* const table_;
  const ReadOptions options_;
  const InternalKeyComparator* const cmp_;
  std::unique_ptr<InternalIterator> index_;
  // Decides whether the next block comes through readahead_ (automatic mode only).
  void TrackSequentialLoad(const BlockHandle& handle);
  // Whether PrepareSeek readied this very seek (its index is positioned); drops the stage's
  // positioning either way (a staged block stays for LoadBlock).
  bool TakeStagedSeek(const Slice& target, bool for_prev);

  // What PrepareSeek staged. positioned: the index stands where the seek for (for_prev,
  // target) puts it. has_block: the block at handle is staged — in block once pinned or read,
  // or status holds the read's error; neither when the read has not run. prefix: the prefix
  // filter's verdict for a SeekInPrefix to target (PrepareSeekInPrefix).
  struct Staged final : StagedRead {
    explicit Staged(TableIterator* it) : owner(it) {}
    Task Read(AsyncIo* io) override {
      return owner->table_->ReadDataBlockAsync(owner->options_, handle, &block, &status, io);
    }
    enum class PrefixVerdict { kNone, kMayMatch, kRuledOut };
    // Forgets the positioning and the verdict (a staged block stays for LoadBlock).
    void Unposition() {
      positioned = false;
      prefix = PrefixVerdict::kNone;
    }
    void Drop() {
      Unposition();
      has_block = false;
      block.Reset();
      status = Status::OK();
    }
    TableIterator* const owner;
    bool positioned = false;
    bool for_prev = false;
    std::string target;
    // Kept so that one prefix seek asks the filter once (and counts once in the tickers).
    PrefixVerdict prefix = PrefixVerdict::kNone;
    bool has_block = false;
    BlockHandle handle;
    BlockRef block;
    Status status;
  };
  Staged staged_{this};

  std::unique_ptr<ReadaheadBuffer> readahead_;  // null: one read per block
  const bool auto_readahead_;
  int sequential_loads_ = 0;    // blocks loaded in a row, each right after the one before
  uint64_t next_block_at_ = 0;  // the file offset just past the last block loaded
  // The data block data_ walks, held exactly while data_valid_: data_ borrows its bytes.
  BlockRef block_;
  BlockIter data_;
  bool data_valid_ = false;
  uint64_t block_offset_ = 0;
  Status status_;
};

}  // namespace shale
