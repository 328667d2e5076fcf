// ColumnFamilyData: one column family of a DB — its options, comparator, table cache, memtables
// (the mutable one and those waiting for flush), published SuperVersion, and its compaction
// and stall bookkeeping — and ColumnFamilyHandleImpl, the DB's ColumnFamilyHandle
// (shale/column_family.h), which names a family of one DB.
//
// The DB holds one ColumnFamilyData per live family (DBImpl, db_impl.h); the VersionSet holds
// the family's Versions and log number (version_set.h), built with config(). A family's
// Versions borrow its comparator and table cache, so a ColumnFamilyData is shared
// (std::shared_ptr) by everything that may hold one of its Versions: the DB while the family
// is live, its handles, its SuperVersions (and so iterators and reads in flight), and running
// flushes and compactions. A dropped family lives on until the last of those lets go.
//
// Ownership: the DB's memtables are reference counted (one reference each held here).
// super_version shares this object back: the DB breaks that cycle when the family is dropped
// and at Close (ReleaseSuperVersion). Thread safety: id, name, options, icmp and table_cache
// are immutable. mem is written by the write leader under the DB mutex and read without the
// mutex only by the leader; mem_log_number likewise. super_version is guarded by sv_mutex.
// dropped is atomic. Everything else is guarded by the DB mutex (DBImpl::mutex_, which these
// members cannot name for the analysis; every access is in a DBImpl method that REQUIRES it).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "shale/column_family.h"
#include "shale/options.h"
#include "src/base/dbformat.h"
#include "src/db/table_cache.h"
#include "src/db/version_set.h"
#include "src/util/arena_block_pool.h"
#include "src/util/mutex.h"

namespace shale {

class DB;
class MemTable;
struct SuperVersion;

class ColumnFamilyData : public std::enable_shared_from_this<ColumnFamilyData> {
 public:
  // options: the DB's options with this family's ColumnFamilyOptions. block_cache: the cache
  // the family's tables use (options.block_cache, or the DB's).
  ColumnFamilyData(uint32_t id, std::string name, const Options& options, const std::string& dbname,
                   FileSystem* fs, std::shared_ptr<Cache> block_cache, Statistics* stats);
  ColumnFamilyData(const ColumnFamilyData&) = delete;
  ColumnFamilyData& operator=(const ColumnFamilyData&) = delete;
  ~ColumnFamilyData();

  // What the VersionSet builds this family's Versions with.
  FamilyConfig config() const { return FamilyConfig{&options, &icmp, table_cache.get()}; }
  // A new memtable sized by the family's options, holding one reference for the caller.
  MemTable* NewMemTable() const;
  // Whether m has reached write_buffer_size or memtable_max_range_deletions: it is switched.
  bool MemTableFull(const MemTable& m) const;
  // Called as the mutable memtable is switched or dropped: the family's block pool keeps blocks
  // for the next memtable when this one is full (another will likely fill), and gives them
  // back to the system when it is not (a family written little). REQUIRES: DB mutex.
  void RetainMemtableBlocksIfFull() const { memtable_blocks->SetRetaining(MemTableFull(*mem)); }
  // The published SuperVersion (null once released).
  std::shared_ptr<SuperVersion> GetSuperVersion() const EXCLUDES(sv_mutex) {
    MutexLock l(&sv_mutex);
    return super_version;
  }
  // Publishes sv; the one it replaces is released by the caller (its destructor may free
  // memtables), outside sv_mutex.
  std::shared_ptr<SuperVersion> SwapSuperVersion(std::shared_ptr<SuperVersion> sv)
      EXCLUDES(sv_mutex) {
    MutexLock l(&sv_mutex);
    super_version.swap(sv);
    return sv;
  }
  // The WAL number from which this family's unflushed data is held: the oldest immutable
  // memtable's, else the mutable one's. REQUIRES: the DB mutex.
  uint64_t OldestLogNumber() const { return imm.empty() ? mem_log_number : imm.back().log_number; }

  const uint32_t id;
  const std::string name;
  const Options options;
  const InternalKeyComparator icmp;
  const std::unique_ptr<TableCache> table_cache;

  // The mutable memtable (one reference held here) and the first WAL holding its data.
  MemTable* mem = nullptr;
  uint64_t mem_log_number = 0;
  struct Immutable {
    MemTable* mem;        // one reference held here
    uint64_t log_number;  // first WAL holding its data
  };
  std::deque<Immutable> imm;  // newest at the front

  mutable Mutex sv_mutex;
  std::shared_ptr<SuperVersion> super_version GUARDED_BY(sv_mutex);

  // True once DropColumnFamily recorded the drop: new reads and writes through the family's
  // handles are refused.
  std::atomic<bool> dropped{false};

  // Compaction and stall bookkeeping (the DB mutex).
  std::vector<std::string> compact_pointers;  // per level
  // A seek brought a file of the family to its allowed seeks (read_compaction.h): the picker
  // looks for read-triggered compactions until it finds none left to run.
  bool read_compaction_due = false;
  struct LevelCompactionStats {
    uint64_t compactions = 0;  // merging compactions
    uint64_t moves = 0;        // files moved down unchanged
    uint64_t read_level_bytes = 0, read_next_bytes = 0, write_bytes = 0, moved_bytes = 0;
  };
  // What compactions into each level did (index = output level), for shale.stats.
  std::vector<LevelCompactionStats> level_stats;
  LevelCompactionStats& LevelStats(int output_level) {
    if (level_stats.size() <= static_cast<size_t>(output_level)) {
      level_stats.resize(output_level + 1);
    }
    return level_stats[output_level];
  }
  // EstimatePendingCompactionBytes and the L0 file count of the current Version, kept by
  // InstallSuperVersion for the write path's stall checks.
  uint64_t pending_compaction_bytes = 0;
  size_t l0_files = 0;
  // Whether those two reach a slowdown or stop trigger (StallOf); kept with them under the DB
  // mutex and read without it by the write path's lock-free room check.
  std::atomic<bool> stall_possible{false};
  uint64_t stall_count_l0_slowdown = 0;
  uint64_t stall_count_l0_stop = 0;
  uint64_t stall_count_memtable = 0;
  uint64_t stall_count_pending_slowdown = 0;
  uint64_t stall_count_pending_stop = 0;

  // The blocks of this family's dropped memtables, for its next ones (MemTable::NewBlockPool:
  // one memtable's worth).
  const std::shared_ptr<ArenaBlockPool> memtable_blocks;
};

class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  ColumnFamilyHandleImpl(const DB* db, std::shared_ptr<ColumnFamilyData> cfd)
      : db_(db), cfd_(std::move(cfd)) {}

  const std::string& GetName() const override { return cfd_->name; }
  uint32_t GetID() const override { return cfd_->id; }
  const Comparator* GetComparator() const override { return cfd_->options.comparator; }
  const DB* db() const { return db_; }
  const std::shared_ptr<ColumnFamilyData>& cfd() const { return cfd_; }

 private:
  const DB* const db_;
  const std::shared_ptr<ColumnFamilyData> cfd_;
};

}  // namespace shale
