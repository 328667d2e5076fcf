// Randomized model test: random operations against the DB and against a std::map model per
// column family (1-4 families, created and dropped as the run goes, batches and MultiGets that
// span them), across option sets, with results compared after every read. Any failure prints its
// seed and option set; SHALE_MODEL_SEED=<n> replays one seed, SHALE_MODEL_OPS=<n> lengthens runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "shale/cache.h"
#include "shale/column_family.h"
#include "src/util/random.h"
#include "src/util/test_hook.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

// The model: user key → value, with merges applied eagerly by string append.
using Model = std::map<std::string, std::string>;

struct OptionSet {
  const char* name;
  bool merge_operator;
  bool sync;
  WALRecoveryMode recovery_mode;
  size_t max_group_bytes;
  // LSM shape: tiny buffers and files make flushes and compactions happen all the time.
  size_t write_buffer_size = 64 << 20;
  uint64_t target_file_size = 64 << 20;
  uint64_t level_base = 256 << 20;
  size_t block_size = 4096;
  CompressionType compression = CompressionType::kNoCompression;
  bool avoid_flush_during_recovery = false;
  double bloom_bits = 10;
  double memtable_bloom_size_ratio = 1.0 / 64;
  CompactionPri compaction_pri = CompactionPri::kMinOverlappingRatio;
  // Write stalls on pending compaction bytes (0: the defaults).
  uint64_t soft_pending_bytes = 0;
  uint64_t hard_pending_bytes = 0;
  // Compactions in parallel: background jobs (4: up to 3 compactions at once) and parts of an
  // L0 or manual compaction.
  int max_background_jobs = 2;
  uint32_t max_subcompactions = 1;
  // Background IO paced (bytes per second, all IO; 0: no rate limiter).
  int64_t rate_limit = 0;
  bool dynamic_level_bytes = false;
  // The block cache: the CLOCK cache, or the LRU one.
  bool lru_block_cache = false;
  // Column families flush together (Options::atomic_flush).
  bool atomic_flush = false;
  // The info log: a new LOG file every this many bytes (0: one per Open), the newest kept.
  uint64_t max_log_file_size = 0;
  uint64_t keep_log_file_num = 1000;
};

const OptionSet kOptionSets[] = {
    {"default", true, false, WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20},
    {"no-merge", false, false, WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20},
    {"sync", true, true, WALRecoveryMode::kAbsoluteConsistency, 1 << 20},
    {"point-in-time-small-groups", true, false, WALRecoveryMode::kPointInTimeRecovery, 64},
    {"tiny-lsm", true, false, WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20, 4096, 2048,
     8192, 256},
    {"tiny-lsm-zstd-no-filter", true, false, WALRecoveryMode::kPointInTimeRecovery, 1 << 20, 8192,
     4096, 16384, 512, CompressionType::kZSTD, false, 0},
    {"small-lsm-keep-logs", false, false, WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20,
     16384, 8192, 32768, 1024, CompressionType::kNoCompression, true, 10, 0},
    {"tiny-lsm-round-robin-pending-limits", true, false,
     WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20, 4096, 2048, 8192, 256,
     CompressionType::kNoCompression, false, 10, 1.0 / 64, CompactionPri::kRoundRobin, 16 << 10,
     64 << 10},
    {"tiny-lsm-parallel-compactions-rate-limited", true, false,
     WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20, 4096, 1024, 4096, 256,
     CompressionType::kNoCompression, false, 10, 1.0 / 64, CompactionPri::kMinOverlappingRatio,
     16 << 10, 64 << 10, 4, 3, 64 << 20},
    // Dynamic level sizes with up to 3 compactions at once; column families flush together.
    // clang-format off
    {"tiny-lsm-dynamic-levels-parallel-atomic-flush", true, false,
     WALRecoveryMode::kTolerateCorruptedTailRecords, 1 << 20, 4096, 1024, 4096, 256,
     CompressionType::kNoCompression, false, 10, 1.0 / 64, CompactionPri::kMinOverlappingRatio,
     0, 0, 4, 2, 0, true, /*lru_block_cache=*/true, /*atomic_flush=*/true,
     /*max_log_file_size=*/4096, /*keep_log_file_num=*/3},
    // clang-format on
};

// The models of every live column family, by family name.
using Models = std::map<std::string, Model>;

class DBModelTest : public DBTestBase, public ::testing::WithParamInterface<OptionSet> {
 protected:
  void TearDown() override {
    test_hook::ClearAll();  // a callback may count into the test's frame
    handles_.clear();
    Close();
  }
  void Run(uint64_t seed, int ops);

  std::string RandomKey(Random* rnd) {
    // A small key space so that overwrites, deletes and merges hit existing keys.
    return "key" + std::to_string(rnd->Uniform(rnd->OneIn(10) ? 1000 : 60));
  }
  // A key to read, seek to or bound an iterator with: one time in eight a single-delete key.
  std::string RandomReadKey(Random* rnd) {
    return rnd->OneIn(8) ? SingleDeleteKey(rnd) : RandomKey(rnd);
  }
  // Keys written only by Put (while absent) and SingleDelete (while present).
  static std::string SingleDeleteKey(Random* rnd) {
    return "sd" + std::to_string(rnd->Uniform(40));
  }
  // The next write to single-delete key k, as SingleDelete's contract allows (at most one Put
  // since the key's last SingleDelete, no Merge), applied to model m and owing (the keys Put
  // since their last SingleDelete): Put while absent and not owing one; while present, a
  // SingleDelete, or one time in three a Delete (the SingleDelete stays owed); while absent and
  // owing, a SingleDelete.
  enum class SdWrite { kPut, kSingleDelete, kDelete };
  static SdWrite NextSingleDeleteKeyWrite(Random* rnd, Model* m, std::set<std::string>* owing,
                                          const std::string& k, const std::string& value) {
    if (m->count(k) != 0) {
      m->erase(k);
      if (rnd->OneIn(3)) return SdWrite::kDelete;
      owing->erase(k);
      return SdWrite::kSingleDelete;
    }
    if (owing->count(k) != 0) {
      owing->erase(k);
      return SdWrite::kSingleDelete;
    }
    (*m)[k] = value;
    owing->insert(k);
    return SdWrite::kPut;
  }
  // A value or operand that starts with name (unique per operation) and one time in eight is
  // padded to 200..700 bytes so that values and operands are stored
  // both inside memtable entries and out of line (MemTable::kMaxInlineValue is 256).
  static std::string RandomValue(Random* rnd, const std::string& name) {
    std::string v = name;
    if (rnd->OneIn(8)) v.resize(200 + rnd->Uniform(501), static_cast<char>('a' + rnd->Uniform(26)));
    return v;
  }
  static void ApplyMerge(Model* m, const std::string& k, const std::string& v) {
    auto it = m->find(k);
    if (it == m->end()) {
      (*m)[k] = v;
    } else {
      it->second += "," + v;
    }
  }
  // [begin, end) for a DeleteRange: mostly two random read keys in order; sometimes one key
  // alone (k, k + '\0'), an empty range (k, k), a reversed one, or every key ("", "z").
  std::pair<std::string, std::string> RandomRange(Random* rnd) {
    std::string a = RandomReadKey(rnd);
    std::string b = RandomReadKey(rnd);
    switch (rnd->Uniform(12)) {
      case 0:
        return {a, a};
      case 1:
        return {a, a + '\0'};
      case 2:
        return {std::max(a, b), std::min(a, b)};
      case 3:
        if (rnd->OneIn(4)) return {"", "z"};
        [[fallthrough]];
      default:
        return {std::min(a, b), std::max(a, b)};
    }
  }
  // What DeleteRange(begin, end) does to a model. Single-delete keys it removes keep their
  // owed SingleDelete, as after a Delete.
  static void EraseRange(Model* m, const std::string& begin, const std::string& end) {
    if (begin < end) m->erase(m->lower_bound(begin), m->lower_bound(end));
  }
  // A DeleteRange on a random family, checked against the rules (end before begin:
  // InvalidArgument, nothing deleted) and applied to its model.
  void DeleteRandomRange(Random* rnd, const WriteOptions& wo, Models* models) {
    const std::string family = PickFamily(rnd, *models);
    ColumnFamilyHandle* cf = HandleFor(rnd, family);
    const auto [begin, end] = RandomRange(rnd);
    const Status s =
        cf != nullptr ? db_->DeleteRange(wo, cf, begin, end) : db_->DeleteRange(wo, begin, end);
    if (end < begin) {
      ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
      return;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    EraseRange(&(*models)[family], begin, end);
  }
  static std::string ModelGet(const Model& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? "NOT_FOUND" : it->second;
  }
  // Family name's model in models, or an empty one (the family was created after them).
  static const Model& FamilyModel(const Models& models, const std::string& name) {
    static const Model kEmpty;
    auto it = models.find(name);
    return it == models.end() ? kEmpty : it->second;
  }
  static std::string ModelContents(const Model& m) {
    std::string r;
    for (const auto& [k, v] : m) {
      if (!r.empty()) r += ' ';
      r += k + "=" + v;
    }
    return r;
  }

  // A live family chosen at random, the default one half the time.
  std::string PickFamily(Random* rnd, const Models& models) {
    if (models.size() == 1 || rnd->OneIn(2)) return kDefaultColumnFamilyName;
    auto it = std::next(models.begin(), rnd->Uniform(static_cast<uint32_t>(models.size())));
    return it->first;
  }
  // The handle to call with for family name: for the default family, null half the time (the
  // calls without a handle act on it).
  ColumnFamilyHandle* HandleFor(Random* rnd, const std::string& name) {
    if (name != kDefaultColumnFamilyName) return handles_.at(name).get();
    return rnd->OneIn(2) ? db_->DefaultColumnFamily() : nullptr;
  }
  ColumnFamilyHandle* Handle(const std::string& name) {
    return name == kDefaultColumnFamilyName ? db_->DefaultColumnFamily() : handles_.at(name).get();
  }
  // "k1=v1 k2=v2 ..." of family name over a whole forward scan.
  std::string FamilyContents(const std::string& name) {
    std::string r;
    auto it = db_->NewIterator(ReadOptions(), Handle(name));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!r.empty()) r += ' ';
      r += it->key().ToString() + "=" + it->value().ToString();
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return r;
  }
  // Closes, and opens with a descriptor for every family of models.
  // A prefix extractor and filter contents for the next open, at random: none, fixed or
  // capped prefixes of the model's keys ("key1", "key12", "sd3" ...), whole keys in the table
  // filters or not; the format of new tables; and the rate of read-triggered compactions.
  // Families keep their data across a change.
  void PickPrefixOptions(Random* rnd) {
    switch (rnd->Uniform(4)) {
      case 0:
        options_.prefix_extractor = nullptr;
        break;
      case 1:
        options_.prefix_extractor = NewFixedPrefixTransform(4);
        break;
      case 2:
        options_.prefix_extractor = NewFixedPrefixTransform(5);
        break;
      default:
        options_.prefix_extractor = NewCappedPrefixTransform(4);
        break;
    }
    options_.whole_key_filtering = !rnd->OneIn(4);
    options_.format_version = format_rnd_->OneIn(3) ? 1 : 3;
    // Read-triggered compactions: half the opens after 100 seeks per file (they then run
    // often), else at the default rate or (one in four) off.
    switch (read_compaction_rnd_->Uniform(4)) {
      case 0:
      case 1:
        options_.read_compaction_bytes_per_seek = uint64_t{1} << 40;
        break;
      case 2:
        options_.read_compaction_bytes_per_seek =
            ColumnFamilyOptions().read_compaction_bytes_per_seek;
        break;
      default:
        options_.read_compaction_bytes_per_seek = 0;
        break;
    }
  }
  void ReopenFamilies(const Models& models) {
    handles_.clear();
    Close();
    std::vector<ColumnFamilyDescriptor> descriptors;
    for (const auto& [name, model] : models) descriptors.emplace_back(name, options_);
    std::vector<std::unique_ptr<ColumnFamilyHandle>> handles;
    Status s = DB::Open(options_, dbname_, descriptors, &handles, &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (auto& h : handles) {
      if (h->GetName() != kDefaultColumnFamilyName) handles_[h->GetName()] = std::move(h);
    }
  }
  void CheckAllContents(const Models& models, const std::string& when) {
    for (const auto& [name, model] : models) {
      ASSERT_EQ(FamilyContents(name), ModelContents(model)) << name << " " << when;
    }
  }

  // Seeks and steps an iterator, bounded or not, randomly, comparing with the model at every
  // position.
  void CheckIterator(Random* rnd, const Model& full_model, const Snapshot* snap,
                     ColumnFamilyHandle* cf);

  Random* prefix_rnd_ = nullptr;           // the current run's draws of prefix options
  Random* format_rnd_ = nullptr;           // and of the table format
  Random* read_compaction_rnd_ = nullptr;  // and of read-triggered compactions
  Random* io_rnd_ = nullptr;               // and of iterators' async_io
  // The non-default families' handles, by name.
  std::map<std::string, std::unique_ptr<ColumnFamilyHandle>> handles_;
};

void DBModelTest::CheckIterator(Random* rnd, const Model& full_model, const Snapshot* snap,
                                ColumnFamilyHandle* cf) {
  ReadOptions ro;
  ro.snapshot = snap;
  // A quarter of the iterators read each seek's blocks one run after another.
  ro.async_io = !io_rnd_->OneIn(4);
  // Half the iterators are bounded (a lower bound, an upper one or both, keys that may or may
  // not exist); the model then holds only the keys within the bounds.
  std::string lower_key, upper_key;
  Slice lower, upper;
  Model bounded_model;
  const Model* model_ptr = &full_model;
  if (rnd->OneIn(2)) {
    const uint64_t sides = 1 + rnd->Uniform(3);  // 1: lower, 2: upper, 3: both
    lower_key = RandomReadKey(rnd);
    upper_key = RandomReadKey(rnd);
    if (sides == 3 && upper_key < lower_key) std::swap(lower_key, upper_key);
    lower = Slice(lower_key);
    upper = Slice(upper_key);
    if (sides & 1) ro.iterate_lower_bound = &lower;
    if (sides & 2) ro.iterate_upper_bound = &upper;
    auto from = (sides & 1) ? full_model.lower_bound(lower_key) : full_model.begin();
    auto to = (sides & 2) ? full_model.lower_bound(upper_key) : full_model.end();
    bounded_model = Model(from, to);
    model_ptr = &bounded_model;
  }
  // With a prefix extractor, a third of the iterators keep to the prefix of each seek's key
  // (the model of a seek is then the keys of that prefix), and a quarter seek without the
  // prefix filters.
  ro.prefix_same_as_start = prefix_rnd_->OneIn(3);
  ro.total_order_seek = prefix_rnd_->OneIn(4);
  const SliceTransform* extractor = options_.prefix_extractor.get();
  Model prefix_model;
  const Model* current = model_ptr;
  // The model for a seek to key (a prefix seek unless !limit).
  auto model_for = [&](const Slice& key, bool limit) -> const Model& {
    if (!limit || !ro.prefix_same_as_start || extractor == nullptr || !extractor->InDomain(key)) {
      current = model_ptr;
      return *current;
    }
    prefix_model.clear();
    const Slice prefix = extractor->Transform(key);
    for (const auto& [k, v] : *model_ptr) {
      if (extractor->InDomain(k) && extractor->Transform(k) == prefix) prefix_model.emplace(k, v);
    }
    current = &prefix_model;
    return *current;
  };
  std::unique_ptr<Iterator> it = cf != nullptr ? db_->NewIterator(ro, cf) : db_->NewIterator(ro);
  std::optional<Model::const_iterator> pos;  // model position; nullopt = invalid
  auto check = [&](const char* op) {
    const Model& model = *current;
    bool model_valid = pos.has_value() && *pos != model.end();
    ASSERT_EQ(it->Valid(), model_valid) << op;
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    if (model_valid) {
      ASSERT_EQ(it->key().ToString(), (*pos)->first) << op;
      ASSERT_EQ(it->value().ToString(), (*pos)->second) << op;
    }
  };
  for (int step = 0; step < 20; step++) {
    int choice = static_cast<int>(rnd->Uniform(6));
    bool model_valid = pos.has_value() && *pos != current->end();
    if (!model_valid && (choice == 4 || choice == 5)) choice = static_cast<int>(rnd->Uniform(4));
    std::string target = RandomReadKey(rnd);
    switch (choice) {
      case 0: {
        it->SeekToFirst();
        const Model& model = model_for(Slice(), false);
        pos = model.begin();
        check("SeekToFirst");
        break;
      }
      case 1: {
        it->SeekToLast();
        const Model& model = model_for(Slice(), false);
        pos = model.empty() ? model.end() : std::prev(model.end());
        check("SeekToLast");
        break;
      }
      case 2: {
        it->Seek(target);
        // A seek below the lower bound seeks the bound.
        const Model& model = model_for(target, true);  // the target's prefix, whatever the bound
        pos = model.lower_bound(target);
        check("Seek");
        break;
      }
      case 3: {
        it->SeekForPrev(target);
        const Model& model = model_for(target, true);
        auto ub = model.upper_bound(target);
        pos = ub == model.begin() ? model.end() : std::prev(ub);
        check("SeekForPrev");
        break;
      }
      case 4:
        it->Next();
        pos = std::next(*pos);
        check("Next");
        break;
      case 5:
        it->Prev();
        pos = *pos == current->begin() ? current->end() : std::prev(*pos);
        check("Prev");
        break;
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

void DBModelTest::Run(uint64_t seed, int ops) {
  const OptionSet& set = GetParam();
  SCOPED_TRACE("seed=" + std::to_string(seed) + " options=" + set.name);
  options_.merge_operator =
      set.merge_operator ? MergeOperators::CreateStringAppendOperator(',') : nullptr;
  options_.wal_recovery_mode = set.recovery_mode;
  options_.max_write_batch_group_size_bytes = set.max_group_bytes;
  options_.write_buffer_size = set.write_buffer_size;
  options_.target_file_size_base = set.target_file_size;
  options_.max_bytes_for_level_base = set.level_base;
  options_.block_size = set.block_size;
  options_.compression = set.compression;
  options_.avoid_flush_during_recovery = set.avoid_flush_during_recovery;
  options_.memtable_bloom_size_ratio = set.memtable_bloom_size_ratio;
  options_.compaction_pri = set.compaction_pri;
  if (set.soft_pending_bytes > 0) {
    options_.soft_pending_compaction_bytes_limit = set.soft_pending_bytes;
    options_.hard_pending_compaction_bytes_limit = set.hard_pending_bytes;
    options_.delayed_write_rate = 64 << 20;
  }
  options_.bloom_bits_per_key = set.bloom_bits;
  options_.max_background_jobs = set.max_background_jobs;
  options_.max_subcompactions = set.max_subcompactions;
  options_.level_compaction_dynamic_level_bytes = set.dynamic_level_bytes;
  options_.rate_limiter = set.rate_limit > 0 ? NewGenericRateLimiter(set.rate_limit, 10 * 1000, 10,
                                                                     RateLimiter::Mode::kAllIo)
                                             : nullptr;
  options_.atomic_flush = set.atomic_flush;
  options_.max_log_file_size = set.max_log_file_size;
  options_.keep_log_file_num = set.keep_log_file_num;
  options_.level0_file_num_compaction_trigger = 2;
  options_.num_levels = 5;
  // Small: blocks get evicted and re-read.
  options_.block_cache = set.lru_block_cache
                             ? NewLRUCache(64 << 10)
                             : HyperClockCacheOptions(64 << 10, set.block_size).MakeSharedCache();
  Random rnd(seed);
  // The prefix choices draw from a stream of their own, so that the operations of a seed stay
  // those of runs before prefixes were tested.
  Random prefix_rnd(seed ^ 0x5bd1e995);
  prefix_rnd_ = &prefix_rnd;
  // Each open writes new tables in format 3 or (one in three) 1: a DB holds tables of both,
  // and reads each (a stream of its own, as above).
  Random format_rnd(seed ^ 0x3c6ef372);
  format_rnd_ = &format_rnd;
  Random read_compaction_rnd(seed ^ 0x1b873593);
  read_compaction_rnd_ = &read_compaction_rnd;
  // So do range deletions, and whether iterators read the blocks of a seek together.
  Random range_rnd(seed ^ 0x2545f491);
  Random io_rnd(seed ^ 0x68e31da4);
  io_rnd_ = &io_rnd;
  // One run in three switches a memtable once it holds 1-4 range tombstones (also while the
  // WAL is replayed): more flushes of tombstones, and replays that fill several memtables.
  Random limit_rnd(seed ^ 0x1b873593);
  options_.memtable_max_range_deletions = limit_rnd.OneIn(3) ? 1 + limit_rnd.Uniform(4) : 0;
  // One run in three bounds the table cache to 20 readers (Options::max_open_files): readers
  // are closed and reopened as the tiny LSMs' files come and go, and none is pinned in its
  // file's metadata; a stream of its own, as above.
  Random open_rnd(seed ^ 0xc2b2ae35);
  options_.max_open_files = open_rnd.OneIn(3) ? 30 : -1;
  // One run in two starts table writeback every few pages (Options::bytes_per_sync); a stream
  // of its own, as above.
  Random sync_rnd(seed ^ 0x85ebca6b);
  options_.bytes_per_sync = sync_rnd.OneIn(2) ? 4096 * (1 + sync_rnd.Uniform(16)) : 0;
  // Two runs in three have iterators seek past runs of versions of a key after 0-3 of them
  // (the default 8 is seldom reached here); a stream of its own, as above.
  Random skip_rnd(seed ^ 0xc2b2ae35);
  options_.max_sequential_skip_in_iterations = skip_rnd.OneIn(3) ? 8 : skip_rnd.Uniform(4);
  // One run in two pipelines its writes (a stream of its own, as above).
  Random pipeline_rnd(seed ^ 0x27d4eb2f);
  options_.enable_pipelined_write = pipeline_rnd.OneIn(2);
  PickPrefixOptions(prefix_rnd_);
  Open();
  // The default family and up to three more, created and dropped as the run goes; each
  // operation acts on one family (a batch or MultiGet on several).
  Models models = {{kDefaultColumnFamilyName, Model()}};
  // Per family, the single-delete keys written by a Put since their last SingleDelete.
  std::map<std::string, std::set<std::string>> owing;
  int families_created = 0;
  struct Snap {
    const Snapshot* snapshot;
    Models models;
  };
  std::vector<Snap> snapshots;
  WriteOptions wo;
  wo.sync = set.sync;

  auto create_family = [&] {
    const std::string name = "cf" + std::to_string(++families_created);
    std::unique_ptr<ColumnFamilyHandle> h;
    Status cs = db_->CreateColumnFamily(options_, name, &h);
    ASSERT_TRUE(cs.ok()) << cs.ToString();
    handles_[name] = std::move(h);
    models[name];
  };
  for (int op = 0; op < ops; op++) {
    // Every run has more than one family, whatever its seed draws.
    if (op == ops / 4 && families_created == 0) {
      create_family();
      if (HasFatalFailure()) return;
    }
    if (range_rnd.OneIn(20)) {
      DeleteRandomRange(&range_rnd, wo, &models);
      if (HasFatalFailure()) return;
    }
    const uint64_t kind = rnd.Uniform(100);
    const std::string key = RandomKey(&rnd);
    const std::string family = PickFamily(&rnd, models);
    Model& model = models[family];
    ColumnFamilyHandle* cf = HandleFor(&rnd, family);
    if (kind < 6) {
      // SingleDelete as its contract allows, on keys "sd*" (see NextSingleDeleteKeyWrite).
      const std::string sd_key = SingleDeleteKey(&rnd);
      const std::string value = RandomValue(&rnd, "s" + std::to_string(op));
      Status s;
      switch (NextSingleDeleteKeyWrite(&rnd, &model, &owing[family], sd_key, value)) {
        case SdWrite::kPut:
          s = cf != nullptr ? db_->Put(wo, cf, sd_key, value) : db_->Put(wo, sd_key, value);
          break;
        case SdWrite::kSingleDelete:
          s = cf != nullptr ? db_->SingleDelete(wo, cf, sd_key) : db_->SingleDelete(wo, sd_key);
          break;
        case SdWrite::kDelete:
          s = cf != nullptr ? db_->Delete(wo, cf, sd_key) : db_->Delete(wo, sd_key);
          break;
      }
      ASSERT_TRUE(s.ok()) << s.ToString();
    } else if (kind < 30) {
      std::string value = RandomValue(&rnd, "v" + std::to_string(op));
      Status ps = cf != nullptr ? db_->Put(wo, cf, key, value) : db_->Put(wo, key, value);
      ASSERT_TRUE(ps.ok()) << ps.ToString();
      model[key] = value;
    } else if (kind < 40) {
      ASSERT_TRUE((cf != nullptr ? db_->Delete(wo, cf, key) : db_->Delete(wo, key)).ok());
      model.erase(key);
    } else if (kind < 50) {
      std::string operand = RandomValue(&rnd, "m" + std::to_string(op));
      Status s = cf != nullptr ? db_->Merge(wo, cf, key, operand) : db_->Merge(wo, key, operand);
      if (set.merge_operator) {
        ASSERT_TRUE(s.ok()) << s.ToString();
        ApplyMerge(&model, key, operand);
      } else {
        ASSERT_TRUE(s.IsInvalidArgument());
      }
    } else if (kind < 58) {
      // A batch whose records go to random families: all of it applies, atomically.
      WriteBatch batch;
      Models next = models;
      auto next_owing = owing;
      int n = 1 + static_cast<int>(rnd.Uniform(8));
      // One batch in five also deletes a range (in order: the batch must apply) at position
      // range_at among its records.
      const int range_at = range_rnd.OneIn(5) ? static_cast<int>(range_rnd.Uniform(n + 1)) : -1;
      auto add_range = [&] {
        const std::string f = PickFamily(&range_rnd, models);
        const auto [a, b] = RandomRange(&range_rnd);
        const std::string& lo = std::min(a, b);
        const std::string& hi = std::max(a, b);
        ASSERT_TRUE(batch.DeleteRange(HandleFor(&range_rnd, f), lo, hi).ok());
        EraseRange(&next[f], lo, hi);
      };
      for (int i = 0; i < n; i++) {
        if (i == range_at) add_range();
        std::string k = RandomKey(&rnd);
        const std::string f = PickFamily(&rnd, models);
        ColumnFamilyHandle* h = HandleFor(&rnd, f);
        Model& m = next[f];
        if (rnd.OneIn(5)) {
          // A Put or SingleDelete of a single-delete key (as above), by the state the batch
          // leaves it in so far.
          k = SingleDeleteKey(&rnd);
          const std::string v = "bs" + std::to_string(op);
          switch (NextSingleDeleteKeyWrite(&rnd, &m, &next_owing[f], k, v)) {
            case SdWrite::kPut:
              ASSERT_TRUE(batch.Put(h, k, v).ok());
              break;
            case SdWrite::kSingleDelete:
              ASSERT_TRUE(batch.SingleDelete(h, k).ok());
              break;
            case SdWrite::kDelete:
              ASSERT_TRUE(batch.Delete(h, k).ok());
              break;
          }
          continue;
        }
        switch (rnd.Uniform(set.merge_operator ? 3 : 2)) {
          case 0:
            ASSERT_TRUE(batch.Put(h, k, "b" + std::to_string(op) + "." + std::to_string(i)).ok());
            m[k] = "b" + std::to_string(op) + "." + std::to_string(i);
            break;
          case 1:
            ASSERT_TRUE(batch.Delete(h, k).ok());
            m.erase(k);
            break;
          case 2:
            ASSERT_TRUE(batch.Merge(h, k, "bm" + std::to_string(i)).ok());
            ApplyMerge(&m, k, "bm" + std::to_string(i));
            break;
        }
      }
      if (range_at == n) add_range();
      ASSERT_TRUE(db_->Write(wo, &batch).ok());
      models = std::move(next);
      owing = std::move(next_owing);
    } else if (kind < 74) {
      const std::string read_key = rnd.OneIn(4) ? SingleDeleteKey(&rnd) : key;
      if (cf != nullptr) {
        std::string v;
        Status gs = db_->Get(ReadOptions(), cf, read_key, &v);
        ASSERT_TRUE(gs.ok() || gs.IsNotFound()) << gs.ToString();
        ASSERT_EQ(gs.ok() ? v : "NOT_FOUND", ModelGet(model, read_key)) << "op " << op;
      } else {
        ASSERT_EQ(Get(read_key), ModelGet(model, read_key)) << "op " << op;
      }
      // KeyMayExist never rules out a key that has a value, and a value it finds is the value.
      std::string may_value;
      bool value_found = false;
      const bool may =
          db_->KeyMayExist(ReadOptions(), Handle(family), read_key, &may_value, &value_found);
      if (!may) {
        ASSERT_EQ(ModelGet(model, read_key), "NOT_FOUND") << "op " << op;
      }
      if (value_found) {
        ASSERT_EQ(may_value, ModelGet(model, read_key)) << "op " << op;
      }
    } else if (kind < 78) {
      // Merge operands, oldest first (a base value is the first), against the model's value,
      // whose operands are joined by ','. Sometimes with too little room (Incomplete).
      const Snap* snap =
          !snapshots.empty() && rnd.OneIn(3) ? &snapshots[rnd.Uniform(snapshots.size())] : nullptr;
      const std::string expect =
          ModelGet(snap != nullptr ? FamilyModel(snap->models, family) : model, key);
      ReadOptions ro;
      ro.snapshot = snap != nullptr ? snap->snapshot : nullptr;
      GetMergeOperandsOptions gmo;
      gmo.expected_max_number_of_operands = rnd.OneIn(5) ? 1 : 64;
      // Drawn here, whatever the outcome: the random sequence must not depend on how far
      // background compaction has merged operands, or a seed would not replay.
      const bool release_on_another_thread = rnd.OneIn(4);
      std::vector<PinnableSlice> ops(64);
      int n = -1;
      Status gs = cf != nullptr ? db_->GetMergeOperands(ro, cf, key, ops.data(), &gmo, &n)
                                : db_->GetMergeOperands(ro, key, ops.data(), &gmo, &n);
      if (expect == "NOT_FOUND") {
        ASSERT_TRUE(gs.IsNotFound()) << gs.ToString() << " op " << op;
      } else {
        // Compaction may already have merged some operands into one value: the count can be
        // lower than the model's, the joined contents cannot differ.
        const int most = 1 + static_cast<int>(std::count(expect.begin(), expect.end(), ','));
        ASSERT_GE(n, 1) << "op " << op;
        ASSERT_LE(n, most) << "op " << op;
        if (n > gmo.expected_max_number_of_operands) {
          ASSERT_TRUE(gs.IsIncomplete()) << gs.ToString();
        } else {
          ASSERT_TRUE(gs.ok()) << gs.ToString();
          std::string joined;
          for (int i = 0; i < n; i++) joined += (i > 0 ? "," : "") + ops[i].ToString();
          ASSERT_EQ(joined, expect) << "op " << op;
          if (release_on_another_thread) {
            // Half of the slices released on another thread (the count's slow path), the
            // rest when ops goes out of scope here.
            std::thread other([&] {
              for (int i = 0; i < n; i += 2) ops[i].Reset();
            });
            other.join();
          }
        }
      }
    } else if (kind < 82) {
      // Keys of one family, or (with a handle per key) of random families, at one snapshot.
      std::vector<std::string> keys_storage, key_families;
      std::vector<Slice> keys;
      int n = 1 + static_cast<int>(rnd.Uniform(10));
      const bool mixed = rnd.OneIn(2);
      for (int i = 0; i < n; i++) {
        keys_storage.push_back(RandomReadKey(&rnd));
        key_families.push_back(mixed ? PickFamily(&rnd, models) : family);
      }
      for (const auto& k : keys_storage) keys.emplace_back(k);
      // Synchronous or asynchronous block reads, latest state or a snapshot.
      ReadOptions ro;
      ro.async_io = rnd.OneIn(2);
      ro.fill_cache = !rnd.OneIn(4);
      const Models* expect = &models;
      if (!snapshots.empty() && rnd.OneIn(3)) {
        const auto& snap = snapshots[rnd.Uniform(static_cast<uint32_t>(snapshots.size()))];
        ro.snapshot = snap.snapshot;
        expect = &snap.models;
      }
      std::vector<std::string> values;
      std::vector<Status> statuses;
      if (mixed) {
        std::vector<ColumnFamilyHandle*> handles;
        for (const std::string& f : key_families) handles.push_back(Handle(f));
        statuses = db_->MultiGet(ro, handles, keys, &values);
      } else if (cf != nullptr) {
        statuses =
            db_->MultiGet(ro, std::vector<ColumnFamilyHandle*>(keys.size(), cf), keys, &values);
      } else {
        statuses = db_->MultiGet(ro, keys, &values);
      }
      for (int i = 0; i < n; i++) {
        ASSERT_TRUE(statuses[i].ok() || statuses[i].IsNotFound()) << statuses[i].ToString();
        std::string got = statuses[i].IsNotFound() ? "NOT_FOUND" : values[i];
        ASSERT_EQ(got, ModelGet(FamilyModel(*expect, key_families[i]), keys_storage[i]))
            << "op " << op;
      }
    } else if (kind < 86) {
      if (rnd.OneIn(4)) {
        // Iterators over every family at one sequence.
        std::vector<ColumnFamilyHandle*> handles;
        for (const auto& [name, m] : models) handles.push_back(Handle(name));
        std::vector<std::unique_ptr<Iterator>> its;
        ASSERT_TRUE(db_->NewIterators(ReadOptions(), handles, &its).ok());
        size_t i = 0;
        for (const auto& [name, m] : models) {
          std::string got;
          for (its[i]->SeekToFirst(); its[i]->Valid(); its[i]->Next()) {
            if (!got.empty()) got += ' ';
            got += its[i]->key().ToString() + "=" + its[i]->value().ToString();
          }
          ASSERT_EQ(got, ModelContents(m)) << name << " op " << op;
          i++;
        }
      } else {
        CheckIterator(&rnd, model, nullptr, cf);
        if (HasFatalFailure()) return;
      }
    } else if (kind < 90) {
      if (snapshots.size() < 4) {
        snapshots.push_back({db_->GetSnapshot(), models});
      } else {
        size_t i = rnd.Uniform(snapshots.size());
        db_->ReleaseSnapshot(snapshots[i].snapshot);
        snapshots.erase(snapshots.begin() + static_cast<long>(i));
      }
    } else if (kind < 96) {
      if (!snapshots.empty()) {
        const Snap& s = snapshots[rnd.Uniform(snapshots.size())];
        // A family created after the snapshot reads as empty at it.
        const Model& snap_model = FamilyModel(s.models, family);
        ReadOptions ro;
        ro.snapshot = s.snapshot;
        std::string v;
        Status gs = db_->Get(ro, Handle(family), key, &v);
        ASSERT_TRUE(gs.ok() || gs.IsNotFound()) << gs.ToString();
        ASSERT_EQ(gs.ok() ? v : "NOT_FOUND", ModelGet(snap_model, key)) << "op " << op;
        if (rnd.OneIn(3)) {
          CheckIterator(&rnd, snap_model, s.snapshot, cf);
          if (HasFatalFailure()) return;
        }
      }
    } else if (kind < 97) {
      ASSERT_TRUE(db_->SyncWAL().ok());
    } else if (kind < 98) {
      // Flush one family or several, compact a random range, wait for background work, or
      // create or drop a family.
      const uint64_t what = rnd.Uniform(5);
      if (what == 0) {
        if (rnd.OneIn(2)) {
          ASSERT_TRUE(
              (cf != nullptr ? db_->Flush(FlushOptions(), cf) : db_->Flush(FlushOptions())).ok());
        } else {
          std::vector<ColumnFamilyHandle*> handles;
          for (const auto& [name, m] : models) handles.push_back(Handle(name));
          ASSERT_TRUE(db_->Flush(FlushOptions(), handles).ok());
        }
      } else if (what == 1) {
        std::string a = RandomKey(&rnd), b = RandomKey(&rnd);
        if (b < a) std::swap(a, b);
        Slice begin(a), end(b);
        CompactRangeOptions co;
        co.bottommost_level_compaction = static_cast<BottommostLevelCompaction>(rnd.Uniform(4));
        const Slice* from = rnd.OneIn(4) ? nullptr : &begin;
        const Slice* to = rnd.OneIn(4) ? nullptr : &end;
        Status cs =
            cf != nullptr ? db_->CompactRange(co, cf, from, to) : db_->CompactRange(co, from, to);
        ASSERT_TRUE(cs.ok()) << cs.ToString();
      } else if (what == 2) {
        ASSERT_TRUE(db_->WaitForCompact().ok());
      } else if (what == 3 && models.size() < 4) {
        create_family();
        if (HasFatalFailure()) return;
      } else if (what == 4 && family != kDefaultColumnFamilyName) {
        ASSERT_TRUE(db_->DropColumnFamily(Handle(family)).ok());
        // A dropped family's handle refuses writes; destroying it is the caller's.
        ASSERT_TRUE(db_->Put(wo, Handle(family), key, "x").IsInvalidArgument());
        ASSERT_TRUE(db_->DestroyColumnFamilyHandle(std::move(handles_.at(family))).ok());
        handles_.erase(family);
        models.erase(family);
        owing.erase(family);
      }
    } else if (kind < 99 && rnd.OneIn(2)) {
      // Reads with a cold block cache.
      CheckAllContents(models, "op " + std::to_string(op));
      if (HasFatalFailure()) return;
    } else {
      for (const Snap& s : snapshots) db_->ReleaseSnapshot(s.snapshot);
      snapshots.clear();
      PickPrefixOptions(prefix_rnd_);
      ReopenFamilies(models);
      if (HasFatalFailure()) return;
      CheckAllContents(models, "after reopen at op " + std::to_string(op));
      if (HasFatalFailure()) return;
    }
  }
  CheckAllContents(models, "at the end");
  EXPECT_GT(families_created, 0);  // the run had more than the default family
  if (set.write_buffer_size < (1 << 20)) {
    // The tiny option sets must really exercise the LSM: files below L0.
    int deeper = 0;
    for (int level = 1; level < options_.num_levels; level++) {
      std::string n;
      ASSERT_TRUE(db_->GetProperty("shale.num-files-at-level" + std::to_string(level), &n));
      deeper += std::atoi(n.c_str());
    }
    std::string stats;
    ASSERT_TRUE(db_->GetProperty("shale.stats", &stats));
    EXPECT_GT(deeper, 0) << stats;
  }
  for (const Snap& s : snapshots) db_->ReleaseSnapshot(s.snapshot);
  ReopenFamilies(models);
  if (HasFatalFailure()) return;
  CheckAllContents(models, "after the last reopen");
}

TEST_P(DBModelTest, RandomOperationsMatchModel) {
  const char* seed_env = std::getenv("SHALE_MODEL_SEED");
  const char* ops_env = std::getenv("SHALE_MODEL_OPS");
  // 7 option sets × 4 seeds × 4,000 operations = 112,000 operations per run.
  const int ops = ops_env != nullptr ? std::atoi(ops_env) : 4000;
  if (seed_env != nullptr) {
    Run(std::strtoull(seed_env, nullptr, 10), ops);
    return;
  }
  // Trivial moves that take several files down at once (counted where test hooks are built).
  std::atomic<int> several_file_moves{0};
  test_hook::Set("DBImpl::MoveFileDownLocked:SeveralFiles", [&] { several_file_moves++; });
  for (uint64_t seed = 1; seed <= 4 && !HasFatalFailure(); seed++) {
    Run(seed * 7919, ops);
    handles_.clear();
    Close();
    ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  }
  test_hook::ClearAll();
  const OptionSet& set = GetParam();
  if (test_hook::kEnabled && ops_env == nullptr && set.write_buffer_size <= 4096 &&
      !set.dynamic_level_bytes) {
    // The smallest LSMs with static level targets move runs of neighbouring files down whole
    // (1–2 a seed), so the model checks reads across them.
    EXPECT_GT(several_file_moves.load(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(OptionSets, DBModelTest, ::testing::ValuesIn(kOptionSets),
                         [](const ::testing::TestParamInfo<OptionSet>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace shale::test
