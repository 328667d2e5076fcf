#include "shale/perf_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "src/monitoring/perf_context_imp.h"

namespace shale {
namespace {

// Every field with its printed name, in declaration order: Reset, Add and ToString walk this.
constexpr std::array<std::pair<const char*, PerfMetric>, 28> kFields = {{
    {"get_from_memtable_count", &PerfContext::get_from_memtable_count},
    {"get_from_memtable_time", &PerfContext::get_from_memtable_time},
    {"get_from_output_files_time", &PerfContext::get_from_output_files_time},
    {"bloom_memtable_hit_count", &PerfContext::bloom_memtable_hit_count},
    {"bloom_memtable_miss_count", &PerfContext::bloom_memtable_miss_count},
    {"bloom_sst_hit_count", &PerfContext::bloom_sst_hit_count},
    {"bloom_sst_miss_count", &PerfContext::bloom_sst_miss_count},
    {"block_cache_hit_count", &PerfContext::block_cache_hit_count},
    {"block_read_count", &PerfContext::block_read_count},
    {"block_read_byte", &PerfContext::block_read_byte},
    {"block_read_time", &PerfContext::block_read_time},
    {"index_block_read_count", &PerfContext::index_block_read_count},
    {"filter_block_read_count", &PerfContext::filter_block_read_count},
    {"multiget_async_read_count", &PerfContext::multiget_async_read_count},
    {"iter_async_read_count", &PerfContext::iter_async_read_count},
    {"iter_async_batch_count", &PerfContext::iter_async_batch_count},
    {"internal_merge_count", &PerfContext::internal_merge_count},
    {"get_read_bytes", &PerfContext::get_read_bytes},
    {"multiget_read_bytes", &PerfContext::multiget_read_bytes},
    {"get_merge_operands_read_bytes", &PerfContext::get_merge_operands_read_bytes},
    {"iter_read_bytes", &PerfContext::iter_read_bytes},
    {"internal_key_skipped_count", &PerfContext::internal_key_skipped_count},
    {"internal_delete_skipped_count", &PerfContext::internal_delete_skipped_count},
    {"internal_range_del_reseek_count", &PerfContext::internal_range_del_reseek_count},
    {"write_thread_wait_nanos", &PerfContext::write_thread_wait_nanos},
    {"write_delay_time", &PerfContext::write_delay_time},
    {"write_wal_time", &PerfContext::write_wal_time},
    {"write_memtable_time", &PerfContext::write_memtable_time},
}};
// A field added to the struct but not to kFields would be skipped silently.
static_assert(sizeof(PerfContext) == kFields.size() * sizeof(uint64_t),
              "every PerfContext field must be listed in kFields");

}  // namespace

void SetPerfLevel(PerfLevel level) {
  perf_internal::level = std::clamp(level, PerfLevel::kDisable, PerfLevel::kEnableTime);
}

PerfLevel GetPerfLevel() { return perf_internal::level; }

PerfContext* get_perf_context() { return &perf_internal::context; }

void PerfContext::Reset() { *this = PerfContext(); }

void PerfContext::Add(const PerfContext& other) {
  for (const auto& [name, metric] : kFields) this->*metric += other.*metric;
}

std::string PerfContext::ToString(bool exclude_zero_counters) const {
  std::string r;
  for (const auto& [name, metric] : kFields) {
    if (exclude_zero_counters && this->*metric == 0) continue;
    if (!r.empty()) r += ", ";
    r += fmt::format("{} = {}", name, this->*metric);
  }
  return r;
}

}  // namespace shale
