// Block: a decoded-on-demand view of one block (format in table/block_builder.h), and
// BlockIter, its iterator: binary search over the restart points, then a linear scan.
//
// Every decode is bounds-checked against the block: a malformed block (restart array larger
// than the block, an entry running past the restarts, a shared prefix longer than the previous
// key, an overlong varint, a restart entry with a shared prefix) makes the iterator invalid
// with a Corruption status — it never reads outside the block.
//
// Ownership: a Block owns its bytes (BlockContents). A BlockIter borrows the Block's bytes and
// the comparator; both must outlive it. Thread safety: a Block is immutable and shareable
// (the block cache hands it to many readers); each BlockIter belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/comparator.h"
#include "src/base/internal_iterator.h"
#include "src/util/cache_line.h"
#include "table/block_builder.h"
#include "table/format.h"
#include "table/restart_prefix_index.h"

namespace shale {

class BlockIter;

class Block {
 public:
  explicit Block(BlockContents contents, BlockValueFormat values = BlockValueFormat::kSized);
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  size_t size() const { return size_; }
  // Memory held, for cache charging.
  size_t usable_size() const {
    return contents_.owned.usable_size() + sizeof(Block) + prefix_index_.heap_usage();
  }
  // For a block of internal keys ordered by a bytewise user comparator (a table's index
  // block, or a data block entering the block cache), or of user keys (user_keys: a format 3
  // index block that holds them): builds the RestartPrefixIndex its iterators' seeks then
  // search, whose targets are keys of the same kind. Does nothing for a malformed block, one
  // with a restart key too short to be an internal key (its seeks then report the corruption as
  // before), or one whose restart keys are out of order (its seeks search the keys). Not
  // thread-safe: call before sharing the block.
  void BuildRestartPrefixIndex(bool user_keys = false);
  bool has_prefix_index() const { return prefix_index_.built(); }
  // Positions iter on this block (unpositioned until a Seek*). A malformed block gives an
  // iterator that is invalid with Corruption.
  void InitIterator(const Comparator* cmp, BlockIter* iter) const;
  std::unique_ptr<BlockIter> NewIterator(const Comparator* cmp) const;
  // Hints the CPU to load what a seek for target reads first from the block's bytes: the
  // restart entry its scan starts from when a small block's prefix index tells it, else the
  // restart array.
  void PrefetchSeek(const Slice& target) const;
  // Hints the CPU to load this object's own lines (its fields and a small block's index).
  void PrefetchHeader() const { PrefetchLines(this, sizeof(Block)); }

 private:
  // The fields a seek reads come first (the prefix index's first lines with them); the
  // contents' owner last.
  const char* data_;
  uint32_t restart_offset_ = 0;  // start of the restart array
  uint32_t num_restarts_ = 0;
  bool malformed_ = false;
  BlockValueFormat values_;
  RestartPrefixIndex prefix_index_;  // held inline: a small block's search reads only this object
  size_t size_;
  BlockContents contents_;
};

class BlockIter final : public InternalIterator {
 public:
  BlockIter() = default;

  bool Valid() const override { return current_ < restarts_; }
  void SeekToFirst() override;
  void SeekToLast() override;
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void Next() override;
  void Prev() override;
  Slice key() const override { return key_; }
  Slice value() const override { return value_; }
  Status status() const override { return status_; }

  // Seeks for many targets at once, in two steps: FindRestarts gives each target the restart
  // point its seek scans from (searching the block's prefix index for each target when it has
  // one, else running the binary searches of all targets side by side, so that their memory
  // loads overlap); SeekFromRestart(restarts[k], targets[k]) then positions the iterator
  // exactly as Seek(targets[k]) would. REQUIRES: targets ascend. FindRestarts returns false
  // when the iterator is invalid: on corruption (status() says what) or when it was never
  // positioned on a block. SeekFromRestart with a restart point past the last is Corruption.
  [[nodiscard]] bool FindRestarts(const Slice* targets, size_t n, uint32_t* restarts);
  void SeekFromRestart(uint32_t restart, const Slice& target);

 private:
  friend class Block;
  void Init(const Comparator* cmp, const char* data, uint32_t restarts, uint32_t num_restarts,
            BlockValueFormat values, const RestartPrefixIndex* prefix_index = nullptr);
  void InitCorrupt(const char* what);

  uint32_t RestartPoint(uint32_t index) const;
  // Positions before the entry at restart index; the next ParseNextKey reads it.
  void SeekToRestartPoint(uint32_t index);
  // Hints the CPU to load the entries of restart interval index (after SeekToRestartPoint).
  void PrefetchRestartInterval(uint32_t index) const;
  // Decodes the entry at next_; false (and invalid) at the end or on corruption.
  bool ParseNextKey();
  void Corrupt(const char* what);
  // The key at restart index, or false on corruption.
  bool RestartKey(uint32_t index, Slice* key);
  // FindRestarts' searches, side by side, for the targets[k] with k in which[0..count), each
  // within [left[k], right[k]]; the answers are left in left[k]. False on corruption.
  static constexpr size_t kSearchChunk = 32;
  bool SearchRestarts(const Slice* targets, const size_t* which, size_t count, uint32_t* left,
                      uint32_t* right);
  // REQUIRES: prefix_index_. The last restart point whose key is < target (0 if none), as the
  // binary search over the restart keys finds it; false on corruption.
  bool SearchPrefixIndex(const Slice& target, uint32_t* restart);

  const Comparator* cmp_ = nullptr;
  const RestartPrefixIndex* prefix_index_ = nullptr;  // the block's, if it has one
  // The index's copy of the restart array when it holds one (a small block), else null.
  const uint32_t* restart_copies_ = nullptr;
  const char* data_ = nullptr;
  uint32_t restarts_ = 0;  // offset of the restart array: the end of the entries
  uint32_t num_restarts_ = 0;
  BlockValueFormat values_ = BlockValueFormat::kSized;
  uint32_t current_ = 0;        // offset of the current entry; restarts_ when invalid
  uint32_t next_ = 0;           // offset just past the current entry
  uint32_t restart_index_ = 0;  // the restart point the current scan started from
  Slice key_;                   // into data_ (when unshared) or into key_buf_
  std::string key_buf_;
  Slice value_;
  Status status_;
};

}  // namespace shale
