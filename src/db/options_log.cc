#include "src/db/options_log.h"

#include <fmt/format.h>

#include "shale/cache.h"
#include "shale/file_system.h"
#include "shale/merge_operator.h"
#include "shale/statistics.h"
#include "src/util/logging.h"

namespace shale {
namespace {

template <typename T>
std::string NameOf(const T* object) {
  return object == nullptr ? "None" : object->Name();
}

const char* RecoveryModeName(WALRecoveryMode mode) {
  switch (mode) {
    case WALRecoveryMode::kTolerateCorruptedTailRecords:
      return "kTolerateCorruptedTailRecords";
    case WALRecoveryMode::kAbsoluteConsistency:
      return "kAbsoluteConsistency";
    case WALRecoveryMode::kPointInTimeRecovery:
      return "kPointInTimeRecovery";
  }
  return "unknown";
}

template <typename T>
void PutOption(Logger* info_log, const char* name, const T& value) {
  LogHeader(info_log, "{:>45}: {}", fmt::format("Options.{}", name), value);
}

}  // namespace

void LogDBOptions(Logger* info_log, const DBOptions& o) {
  if (info_log == nullptr) return;
  auto put = [info_log](const char* name, const auto& value) { PutOption(info_log, name, value); };
  put("create_if_missing", o.create_if_missing);
  put("error_if_exists", o.error_if_exists);
  put("create_missing_column_families", o.create_missing_column_families);
  put("paranoid_checks", o.paranoid_checks);
  put("wal_recovery_mode", RecoveryModeName(o.wal_recovery_mode));
  put("avoid_flush_during_recovery", o.avoid_flush_during_recovery);
  put("file_system", o.file_system ? o.file_system->Name() : "default (PosixFileSystem)");
  put("statistics", o.statistics ? "set" : "None");
  put("rate_limiter", o.rate_limiter ? "set" : "None");
  put("info_log_level", static_cast<int>(o.info_log_level));
  put("db_log_dir", o.db_log_dir);
  put("max_log_file_size", o.max_log_file_size);
  put("log_file_time_to_roll", o.log_file_time_to_roll);
  put("keep_log_file_num", o.keep_log_file_num);
  put("stats_dump_period_sec", o.stats_dump_period_sec);
  put("max_write_batch_group_size_bytes", o.max_write_batch_group_size_bytes);
  put("enable_write_thread_adaptive_yield", o.enable_write_thread_adaptive_yield);
  put("write_thread_max_yield_usec", o.write_thread_max_yield_usec);
  put("enable_pipelined_write", o.enable_pipelined_write);
  put("delayed_write_rate", o.delayed_write_rate);
  put("max_total_wal_size", o.max_total_wal_size);
  put("max_background_jobs", o.max_background_jobs);
  put("max_background_compactions", o.max_background_compactions);
  put("atomic_flush", o.atomic_flush);
  put("max_subcompactions", o.max_subcompactions);
  put("max_open_files", o.max_open_files);
  put("max_manifest_file_size", o.max_manifest_file_size);
  put("use_direct_reads", o.use_direct_reads);
  put("bytes_per_sync", o.bytes_per_sync);
  put("require_io_uring", o.require_io_uring);
}

void LogFamilyOptions(Logger* info_log, const std::string& family, const ColumnFamilyOptions& o) {
  if (info_log == nullptr) return;
  LogHeader(info_log, "Options for column family [{}]:", family);
  auto put = [info_log](const char* name, const auto& value) { PutOption(info_log, name, value); };
  put("comparator", NameOf(o.comparator));
  put("merge_operator", NameOf(o.merge_operator.get()));
  put("prefix_extractor", NameOf(o.prefix_extractor.get()));
  put("block_cache", o.block_cache ? fmt::format("{} ({} bytes)", o.block_cache->Name(),
                                                 o.block_cache->GetCapacity())
                                   : std::string("default"));
  put("write_buffer_size", o.write_buffer_size);
  put("max_write_buffer_number", o.max_write_buffer_number);
  put("memtable_bloom_size_ratio", o.memtable_bloom_size_ratio);
  put("memtable_max_range_deletions", o.memtable_max_range_deletions);
  put("max_sequential_skip_in_iterations", o.max_sequential_skip_in_iterations);
  put("num_levels", o.num_levels);
  put("level0_file_num_compaction_trigger", o.level0_file_num_compaction_trigger);
  put("level0_slowdown_writes_trigger", o.level0_slowdown_writes_trigger);
  put("level0_stop_writes_trigger", o.level0_stop_writes_trigger);
  put("soft_pending_compaction_bytes_limit", o.soft_pending_compaction_bytes_limit);
  put("hard_pending_compaction_bytes_limit", o.hard_pending_compaction_bytes_limit);
  put("target_file_size_base", o.target_file_size_base);
  put("max_bytes_for_level_base", o.max_bytes_for_level_base);
  put("max_bytes_for_level_multiplier", o.max_bytes_for_level_multiplier);
  put("level_compaction_dynamic_level_bytes", o.level_compaction_dynamic_level_bytes);
  put("compaction_pri", static_cast<int>(o.compaction_pri));
  put("disable_auto_compactions", o.disable_auto_compactions);
  put("read_compaction_bytes_per_seek", o.read_compaction_bytes_per_seek);
  put("compression", static_cast<int>(o.compression));
  put("block_size", o.block_size);
  put("block_restart_interval", o.block_restart_interval);
  put("bloom_bits_per_key", o.bloom_bits_per_key);
  put("whole_key_filtering", o.whole_key_filtering);
  put("format_version", o.format_version);
}

}  // namespace shale
