// DB properties (DB::GetProperty): one reader per property, found by name in a table. A call
// loads one SuperVersion and every reader answers from it; the counters of background work,
// snapshots and the background error are read under mutex_.
#include <fmt/format.h>

#include <charconv>
#include <string_view>
#include <utility>

#include "memtable/memtable.h"
#include "src/db/compaction_picker.h"
#include "src/db/db_impl.h"

namespace shale {
namespace {

constexpr std::string_view kNumFilesAtLevelPrefix = "shale.num-files-at-level";

// The per-level lines of shale.stats: files, size and compaction score of each level that holds
// files or received compactions, and what compactions into it read, wrote and moved down.
template <typename LevelStats>
std::string LevelTable(const Version& v, const Options& options,
                       const std::vector<LevelStats>& stats) {
  const int l0_trigger = options.level0_file_num_compaction_trigger;
  std::string levels =
      "Level  Files  Size(MB)  Score  Comp  Moves  Rn(MB)  Rnp1(MB)  Write(MB)  Moved(MB)\n";
  auto mb = [](uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; };
  const LevelTargets targets = ComputeLevelTargets(options, v);
  for (int level = 0; level < v.num_levels(); level++) {
    const LevelStats ls = static_cast<size_t>(level) < stats.size() ? stats[level] : LevelStats();
    if (v.files(level).empty() && ls.compactions == 0 && ls.moves == 0) continue;
    const double score = level == 0 ? static_cast<double>(v.files(0).size()) / l0_trigger
                                    : static_cast<double>(v.NumLevelBytes(level)) /
                                          static_cast<double>(targets.max_bytes[level]);
    levels += fmt::format(
        "  L{:<3} {:>5} {:>9.2f} {:>6.2f} {:>5} {:>6} {:>7.1f} {:>9.1f} {:>10.1f} "
        "{:>10.1f}\n",
        level, v.files(level).size(), mb(v.NumLevelBytes(level)), score, ls.compactions, ls.moves,
        mb(ls.read_level_bytes), mb(ls.read_next_bytes), mb(ls.write_bytes), mb(ls.moved_bytes));
  }
  return levels;
}

}  // namespace

bool DBImpl::GetPropertyImpl(ColumnFamilyData* cfd, const Slice& property, std::string* value) {
  value->clear();
  if (!CheckOpen().ok()) return false;
  const std::string_view name = property.ToStringView();
  std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();
  if (sv == nullptr) return false;  // dropped
  if (name.starts_with(kNumFilesAtLevelPrefix)) {
    return NumFilesAtLevelProperty(*sv, name.substr(kNumFilesAtLevelPrefix.size()), value);
  }
  using Reader = std::string (DBImpl::*)(const SuperVersion&) const;
  static constexpr std::pair<std::string_view, Reader> kReaders[] = {
      {"shale.cur-size-active-mem-table", &DBImpl::ActiveMemTableSizeProperty},
      {"shale.cur-size-all-mem-tables", &DBImpl::AllMemTablesSizeProperty},
      {"shale.memtable-block-pool-bytes", &DBImpl::MemTableBlockPoolProperty},
      {"shale.num-immutable-mem-table", &DBImpl::NumImmutableMemTablesProperty},
      {"shale.num-entries-active-mem-table", &DBImpl::ActiveMemTableEntriesProperty},
      {"shale.num-deletes-active-mem-table", &DBImpl::ActiveMemTableDeletesProperty},
      {"shale.latest-sequence-number", &DBImpl::LatestSequenceProperty},
      {"shale.num-snapshots", &DBImpl::NumSnapshotsProperty},
      {"shale.estimate-num-keys", &DBImpl::EstimateNumKeysProperty},
      {"shale.estimate-pending-compaction-bytes", &DBImpl::PendingCompactionBytesProperty},
      {"shale.io.async-path", &DBImpl::AsyncPathProperty},
      {"shale.background-errors", &DBImpl::BackgroundErrorsProperty},
      {"shale.write-stall", &DBImpl::WriteStallProperty},
      {"shale.num-running-compactions", &DBImpl::RunningCompactionsProperty},
      {"shale.num-running-flushes", &DBImpl::RunningFlushesProperty},
      {"shale.stats", &DBImpl::StatsProperty},
  };
  for (const auto& [known, read] : kReaders) {
    if (name == known) {
      *value = (this->*read)(*sv);
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- memtables

std::string DBImpl::ActiveMemTableSizeProperty(const SuperVersion& sv) const {
  return std::to_string(sv.mem->ApproximateMemoryUsage());
}

std::string DBImpl::AllMemTablesSizeProperty(const SuperVersion& sv) const {
  size_t total = sv.mem->ApproximateMemoryUsage();
  for (MemTable* m : sv.imm) total += m->ApproximateMemoryUsage();
  return std::to_string(total);
}

std::string DBImpl::MemTableBlockPoolProperty(const SuperVersion& sv) const {
  return std::to_string(sv.cfd->memtable_blocks->pooled_bytes());
}

std::string DBImpl::NumImmutableMemTablesProperty(const SuperVersion& sv) const {
  return std::to_string(sv.imm.size());
}

std::string DBImpl::ActiveMemTableEntriesProperty(const SuperVersion& sv) const {
  return std::to_string(sv.mem->num_entries());
}

std::string DBImpl::ActiveMemTableDeletesProperty(const SuperVersion& sv) const {
  return std::to_string(sv.mem->num_deletes());
}

// ---------------------------------------------------------------- files and keys

bool DBImpl::NumFilesAtLevelProperty(const SuperVersion& sv, std::string_view level_text,
                                     std::string* value) const {
  int level = 0;
  const char* end = level_text.data() + level_text.size();
  auto [ptr, ec] = std::from_chars(level_text.data(), end, level);
  if (ec != std::errc() || ptr != end || level < 0 || level >= sv.current->num_levels()) {
    return false;
  }
  *value = std::to_string(sv.current->files(level).size());
  return true;
}

std::string DBImpl::EstimateNumKeysProperty(const SuperVersion& sv) const {
  // Entries in memtables and tables; overwrites and deletions make it an overestimate.
  uint64_t n = sv.mem->num_entries();
  for (MemTable* m : sv.imm) n += m->num_entries();
  for (int level = 0; level < sv.current->num_levels(); level++) {
    for (const auto& f : sv.current->files(level)) {
      TableRef table;
      if (sv.cfd->table_cache->Find(*f, &table).ok()) n += table->properties().num_entries;
    }
  }
  return std::to_string(n);
}

// ---------------------------------------------------------------- DB state

std::string DBImpl::LatestSequenceProperty(const SuperVersion&) const {
  return std::to_string(last_sequence_.load());
}

std::string DBImpl::NumSnapshotsProperty(const SuperVersion&) const {
  MutexLock l(&mutex_);
  return std::to_string(snapshots_.size());
}

std::string DBImpl::AsyncPathProperty(const SuperVersion&) const { return async_path_; }

std::string DBImpl::BackgroundErrorsProperty(const SuperVersion&) const {
  MutexLock l(&mutex_);
  return bg_error_.ok() ? "0" : "1";
}

std::string DBImpl::PendingCompactionBytesProperty(const SuperVersion& sv) const {
  MutexLock l(&mutex_);
  return std::to_string(sv.cfd->pending_compaction_bytes);
}

std::string DBImpl::RunningCompactionsProperty(const SuperVersion&) const {
  MutexLock l(&mutex_);
  return std::to_string(running_compactions_.size());
}

std::string DBImpl::RunningFlushesProperty(const SuperVersion&) const {
  MutexLock l(&mutex_);
  return flush_running_ ? "1" : "0";
}

std::string DBImpl::WriteStallProperty(const SuperVersion& sv) const {
  MutexLock l(&mutex_);
  // The reason is the DB's (writes stall together), with the family that set it; the counts
  // are this family's.
  const ColumnFamilyData& cfd = *sv.cfd;
  return fmt::format(
      "reason: {}{}; level0-slowdown: {}; level0-stop: {}; memtable-limit: {}; "
      "pending-compaction-bytes-slowdown: {}; pending-compaction-bytes-stop: {}",
      stall_reason_, stall_family_.empty() ? "" : " (column family " + stall_family_ + ")",
      cfd.stall_count_l0_slowdown, cfd.stall_count_l0_stop, cfd.stall_count_memtable,
      cfd.stall_count_pending_slowdown, cfd.stall_count_pending_stop);
}

std::string DBImpl::StatsProperty(const SuperVersion& sv) const {
  MutexLock l(&mutex_);
  const ColumnFamilyData& cfd = *sv.cfd;
  const std::string levels = LevelTable(*sv.current, cfd.options, cfd.level_stats);
  const uint64_t user_bytes = stats_ != nullptr ? stats_->getTickerCount(BYTES_WRITTEN) : 0;
  const double wamp = flush_bytes_ == 0
                          ? 0
                          : static_cast<double>(flush_bytes_ + compaction_write_bytes_) /
                                static_cast<double>(flush_bytes_);
  return fmt::format(
      "** DB Stats **\nLatest sequence: {}\nMemtables: active {} entries {} bytes, {} "
      "immutable\nWAL: {:06}.log\n** Compaction Stats [{}] **\n{}Flushes: {} ({:.2f} MB)\n"
      "Compactions: {} (read {:.2f} MB, wrote {:.2f} MB)\nWrite amplification (flush + "
      "compaction over flush): {:.2f}\nUser bytes written (with statistics): {}\n"
      "Stalls: level0-slowdown {}, level0-stop {}, memtable-limit {}, "
      "pending-compaction-bytes-slowdown {}, pending-compaction-bytes-stop {} (now: {})\n"
      "Pending compaction: {:.2f} MB\nSnapshots: {}\nBackground error: {}\n",
      last_sequence_.load(), sv.mem->num_entries(), sv.mem->ApproximateMemoryUsage(), sv.imm.size(),
      log_number_, cfd.name, levels, num_flushes_, static_cast<double>(flush_bytes_) / 1048576.0,
      num_compactions_, static_cast<double>(compaction_read_bytes_) / 1048576.0,
      static_cast<double>(compaction_write_bytes_) / 1048576.0, wamp, user_bytes,
      cfd.stall_count_l0_slowdown, cfd.stall_count_l0_stop, cfd.stall_count_memtable,
      cfd.stall_count_pending_slowdown, cfd.stall_count_pending_stop, stall_reason_,
      static_cast<double>(cfd.pending_compaction_bytes) / 1048576.0, snapshots_.size(),
      bg_error_.ToString());
}

}  // namespace shale
