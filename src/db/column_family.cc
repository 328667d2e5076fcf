#include "src/db/column_family.h"

#include "memtable/memtable.h"
#include "src/db/super_version.h"

namespace shale {

namespace {

TableReaderOptions ReaderOptions(const Options& options, const InternalKeyComparator* icmp,
                                 std::shared_ptr<Cache> block_cache, Statistics* stats) {
  TableReaderOptions ro;
  ro.comparator = icmp;
  ro.block_cache = std::move(block_cache);
  ro.statistics = stats;
  ro.rate_limiter = options.rate_limiter.get();
  ro.check_merge_operator = true;
  ro.merge_operator_name = options.merge_operator ? options.merge_operator->Name() : nullptr;
  ro.prefix_extractor = options.prefix_extractor.get();
  return ro;
}

}  // namespace

ColumnFamilyData::ColumnFamilyData(uint32_t family_id, std::string family_name,
                                   const Options& family_options, const std::string& dbname,
                                   FileSystem* fs, std::shared_ptr<Cache> block_cache,
                                   Statistics* stats)
    : id(family_id),
      name(std::move(family_name)),
      options(family_options),
      icmp(options.comparator),
      table_cache(std::make_unique<TableCache>(
          dbname, fs, ReaderOptions(options, &icmp, std::move(block_cache), stats),
          options.max_open_files, options.use_direct_reads)),
      compact_pointers(options.num_levels),
      // One memtable's worth: a new memtable reuses the blocks of the last one dropped.
      memtable_blocks(MemTable::NewBlockPool(MemTable::ArenaBlockSizeFor(options.write_buffer_size),
                                             options.write_buffer_size)) {}

ColumnFamilyData::~ColumnFamilyData() {
  // The SuperVersion shares this object, so it is gone by now; what is left are the DB's
  // references on the memtables.
  for (const Immutable& i : imm) i.mem->Unref();
  if (mem != nullptr) mem->Unref();
}

MemTable* ColumnFamilyData::NewMemTable() const {
  auto* m = new MemTable(icmp, MemTable::ArenaBlockSizeFor(options.write_buffer_size),
                         static_cast<size_t>(static_cast<double>(options.write_buffer_size) *
                                             options.memtable_bloom_size_ratio),
                         options.prefix_extractor, memtable_blocks);
  m->Ref();  // the caller's reference; the memtable frees itself on the last Unref
  return m;
}

bool ColumnFamilyData::MemTableFull(const MemTable& m) const {
  return m.ApproximateMemoryUsage() >= options.write_buffer_size ||
         (options.memtable_max_range_deletions > 0 &&
          m.num_range_deletions() >= options.memtable_max_range_deletions);
}

}  // namespace shale
