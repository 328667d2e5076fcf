#include "src/db/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "shale/cache.h"
#include "src/base/async_read.h"
#include "src/base/get_context.h"
#include "src/base/multi_get.h"
#include "src/db/level_iterator.h"
#include "src/db/table_cache.h"
#include "src/util/hash.h"
#include "table/table_reader.h"

namespace shale {

Version::Version(const InternalKeyComparator* icmp, TableCache* table_cache, int num_levels)
    : icmp_(icmp), table_cache_(table_cache), files_(num_levels) {}

uint64_t Version::NumLevelBytes(int level) const {
  uint64_t sum = 0;
  for (const auto& f : files_[level]) sum += f->file_size;
  return sum;
}

namespace {

// The next file after (*level, *l0_index) on the path a point read of one key takes through
// the tree: overlapping L0 files newest first, then the one file per deeper level whose range
// holds it; null when none is left. Advances the position past the file returned.
const FileMetaData* NextOnPath(const Version& version, const InternalKeyComparator* icmp,
                               const Slice& user_key, const Slice& ikey, int* level,
                               size_t* l0_index) {
  const Comparator* ucmp = icmp->user_comparator();
  while (*level < version.num_levels()) {
    const FileList& files = version.files(*level);
    if (*level == 0) {
      while (*l0_index < files.size()) {
        const FileMetaData* f = files[(*l0_index)++].get();
        if (ucmp->Compare(user_key, ExtractUserKey(f->smallest)) >= 0 &&
            ucmp->Compare(user_key, ExtractUserKey(f->largest)) <= 0) {
          return f;
        }
      }
      (*level)++;
      continue;
    }
    (*level)++;
    // The first file whose largest key is >= ikey.
    auto it = std::partition_point(files.begin(), files.end(), [&](const auto& f) {
      return icmp->Compare(f->largest, ikey) < 0;
    });
    if (it != files.end() && ucmp->Compare(user_key, ExtractUserKey((*it)->smallest)) >= 0) {
      return it->get();
    }
  }
  return nullptr;
}

}  // namespace

Status Version::Get(const ReadOptions& options, const LookupKey& key, GetContext* ctx) const {
  // Files are taken in windows: the readers already open are pinned and their filter lines
  // requested together, so the filter probes' cache misses overlap instead of following one
  // another; then the files are read in order (a reader not open yet is opened only when its
  // turn comes) until ctx has its answer.
  constexpr size_t kWindow = 8;
  TableCache* tc = table_cache_;
  const uint64_t hash = Hash64(key.user_key());
  int level = 0;
  size_t l0_index = 0;
  const FileMetaData* files[kWindow];
  TableRef tables[kWindow];
  for (;;) {
    size_t n = 0;
    while (n < kWindow && (files[n] = NextOnPath(*this, icmp_, key.user_key(), key.internal_key(),
                                                 &level, &l0_index)) != nullptr)
      n++;
    if (n == 0) return Status::OK();
    for (size_t i = 0; i < n; i++) {
      tables[i] = tc->FindOpen(*files[i]);
      if (tables[i]) tables[i]->PrefetchFilter(hash);
    }
    Status s;
    bool stop = false;
    for (size_t i = 0; i < n && !stop; i++) {
      if (!tables[i]) {
        s = tc->Find(*files[i], &tables[i]);
        if (!s.ok()) break;
      }
      // Values pinned into ctx hold block-cache pins, not the reader: releasing it is safe.
      s = tables[i]->Get(options, key.internal_key(), hash, ctx);
      stop = !s.ok() || ctx->resolved();
    }
    for (size_t i = 0; i < n; i++) tables[i].Reset();
    if (!s.ok() || stop) return s;
  }
}

const FileMetaData* Version::NextCandidate(MultiGetKey* k) const {
  return NextOnPath(*this, icmp_, k->lkey.user_key(), k->lkey.internal_key(), &k->level,
                    &k->l0_index);
}

namespace {

// One Version::MultiGet batch: its keys, the tables it touches, open (and so alive for the
// reads in flight) until the batch ends, and the scratch of its rounds. Thread safety: local to
// the calling thread; borrows the Version and the keys for the call.
class MultiGetBatch {
 public:
  MultiGetBatch(const Version& version, TableCache* table_cache, MultiGetKey* const* keys, size_t n)
      : version_(version), tc_(table_cache), keys_(keys), n_(n) {
    for (size_t i = 0; i < n_; i++) keys_[i]->position = i;
  }
  MultiGetBatch(const MultiGetBatch&) = delete;
  MultiGetBatch& operator=(const MultiGetBatch&) = delete;

  // Places every key that is neither done nor exhausted at the next file on its path whose
  // filter may hold it. Filter probes need no IO, so a key whose entries sit deep in the tree
  // is placed there in this round: the reads of all levels go out together instead of one
  // level after another. A key whose table cannot be opened takes the table's error. False
  // when no key was placed.
  bool PlaceKeys() {
    unplaced_.clear();
    for (size_t i = 0; i < n_; i++) {
      // A range tombstone met in the last round's table covers the rest of the key's path.
      if (!keys_[i]->done()) keys_[i]->ctx.EndIfCovered();
      if (!keys_[i]->done() && !keys_[i]->exhausted) unplaced_.push_back(keys_[i]);
    }
    placed_.clear();
    while (!unplaced_.empty()) {
      for (MultiGetKey* k : unplaced_) {
        const FileMetaData* f = version_.NextCandidate(k);
        if (f == nullptr) {
          k->exhausted = true;
          continue;
        }
        k->table = TableOf(f);
        if (open_[k->table].status.ok()) Reader(k->table)->PrefetchFilter(k->hash);
      }
      next_.clear();
      for (MultiGetKey* k : unplaced_) {
        if (k->exhausted) continue;
        const OpenTable& t = open_[k->table];
        if (!t.status.ok()) {
          k->status = t.status;
          continue;
        }
        // Before the filter: a key it rules out may still be covered.
        Reader(k->table)->ApplyRangeTombstones(k->lkey.internal_key(), &k->ctx);
        if (Reader(k->table)->FilterMayMatch(k->lkey.user_key(), k->hash)) {
          placed_.emplace_back(k->table, k->position);
        } else {
          k->ctx.EndIfCovered();
          if (!k->done()) next_.push_back(k);
        }
      }
      unplaced_.swap(next_);
    }
    return !placed_.empty();
  }

  // Looks the placed keys up: one TableReader::MultiGet per file, its keys in batch (sorted)
  // order. With io, each file's reads go out while the next file's keys are placed in blocks,
  // and the round ends when all of them are done.
  void ReadPlaced(const ReadOptions& options, AsyncIo* io) {
    std::sort(placed_.begin(), placed_.end());
    for (size_t i = 0; i < placed_.size();) {
      size_t j = i;
      group_.clear();
      for (; j < placed_.size() && placed_[j].first == placed_[i].first; j++) {
        group_.push_back(keys_[placed_[j].second]);
      }
      Reader(placed_[i].first)
          ->MultiGet(options, group_.data(), group_.size(), io,
                     /*filter_checked=*/true);
      if (io != nullptr) io->Flush();
      i = j;
    }
    if (io != nullptr) io->RunUntilDone();
  }

 private:
  struct OpenTable {
    const FileMetaData* file;
    TableRef table;
    Status status;
  };

  // The index in open_ of f's table, opened on first use.
  size_t TableOf(const FileMetaData* f) {
    for (size_t i = 0; i < open_.size(); i++) {
      if (open_[i].file == f) return i;
    }
    OpenTable& t = open_.emplace_back();
    t.file = f;
    t.status = tc_->Find(*f, &t.table);
    return open_.size() - 1;
  }
  TableReader* Reader(size_t i) const { return open_[i].table.get(); }

  const Version& version_;
  TableCache* const tc_;
  MultiGetKey* const* const keys_;
  const size_t n_;
  std::vector<OpenTable> open_;
  std::vector<MultiGetKey*> unplaced_, next_;
  std::vector<std::pair<size_t, size_t>> placed_;  // (table, key position in the batch)
  std::vector<MultiGetKey*> group_;
};

}  // namespace

void Version::MultiGet(const ReadOptions& options, MultiGetKey* const* keys, size_t n,
                       AsyncIo* io) const {
  MultiGetBatch batch(*this, table_cache_, keys, n);
  while (batch.PlaceKeys()) batch.ReadPlaced(options, io);
}

Status Version::AddRangeTombstones(RangeTombstoneLists* lists) const {
  std::shared_ptr<const RangeTombstoneLists> found;
  {
    MutexLock l(&range_del_mu_);
    found = range_tombstones_;
  }
  if (found == nullptr) {
    // One list for the whole Version: an iterator's check of a key is then one binary search,
    // not one per table. Within a table fragments are disjoint, so at any key at most one
    // fragment per table is active while they are cut together. A single table's list is
    // taken as it is.
    auto collected = std::make_shared<RangeTombstoneLists>();
    for (const FileList& files : files_) {
      for (const auto& f : files) {
        if (f->num_range_deletions == 0) continue;
        std::shared_ptr<const FragmentedRangeTombstoneList> list;
        Status s = table_cache_->GetRangeTombstones(*f, &list);
        if (!s.ok()) return s;
        collected->push_back(std::move(list));
      }
    }
    if (collected->size() > 1) {
      std::vector<RangeTombstone> raw;
      for (const auto& list : *collected) {
        for (const auto& frag : list->fragments()) {
          for (SequenceNumber seq : list->seqs(frag)) raw.push_back({frag.start, frag.end, seq});
        }
      }
      collected->assign(1, std::make_shared<const FragmentedRangeTombstoneList>(
                               icmp_->user_comparator(), std::move(raw)));
    }
    MutexLock l(&range_del_mu_);
    range_tombstones_ = collected;
    found = std::move(collected);
  }
  lists->insert(lists->end(), found->begin(), found->end());
  return Status::OK();
}

bool Version::KeyMayExist(const LookupKey& key) const {
  int level = 0;
  size_t l0_index = 0;
  while (const FileMetaData* f =
             NextOnPath(*this, icmp_, key.user_key(), key.internal_key(), &level, &l0_index)) {
    const TableRef table = table_cache_->FindOpen(*f);
    if (!table || table->KeyMayMatch(key.user_key())) return true;
  }
  return false;
}

Status Version::ApproximateSize(const Slice& start, const Slice& limit, uint64_t* size) const {
  *size = 0;
  const Comparator* ucmp = icmp_->user_comparator();
  std::string start_key, limit_key;  // the first possible entries of start and limit
  AppendInternalKey(&start_key, start, kMaxSequenceNumber, kValueTypeForSeek);
  AppendInternalKey(&limit_key, limit, kMaxSequenceNumber, kValueTypeForSeek);
  for (const FileList& files : files_) {
    for (const auto& f : files) {
      const Slice smallest = ExtractUserKey(f->smallest), largest = ExtractUserKey(f->largest);
      if (ucmp->Compare(largest, start) < 0 || ucmp->Compare(smallest, limit) >= 0) continue;
      if (ucmp->Compare(smallest, start) >= 0 && ucmp->Compare(largest, limit) < 0) {
        *size += f->file_size;
        continue;
      }
      TableRef table;
      Status s = table_cache_->Find(*f, &table);
      if (!s.ok()) return s;
      const uint64_t from = table->ApproximateOffsetOf(start_key);
      const uint64_t to = table->ApproximateOffsetOf(limit_key);
      if (to > from) *size += to - from;
    }
  }
  return Status::OK();
}

void Version::AddIterators(const ReadOptions& options,
                           std::vector<std::unique_ptr<InternalIterator>>* iters,
                           std::vector<SequenceNumber>* newest) const {
  TableCache* tc = table_cache_;
  const Comparator* ucmp = icmp_->user_comparator();
  for (const auto& f : files_[0]) {
    // An L0 table whose keys all lie outside the iterator's bounds is not opened.
    if (options.iterate_upper_bound != nullptr &&
        ucmp->Compare(ExtractUserKey(f->smallest), *options.iterate_upper_bound) >= 0) {
      continue;
    }
    if (options.iterate_lower_bound != nullptr &&
        ucmp->Compare(ExtractUserKey(f->largest), *options.iterate_lower_bound) < 0) {
      continue;
    }
    iters->push_back(tc->NewIterator(options, *f));
    if (newest != nullptr) newest->push_back(f->largest_seqno);
  }
  for (int level = 1; level < num_levels(); level++) {
    if (files_[level].empty()) continue;
    iters->push_back(NewLevelIterator(tc, options, icmp_, files_[level]));
    if (newest != nullptr) {
      SequenceNumber largest = 0;
      for (const auto& f : files_[level]) largest = std::max(largest, f->largest_seqno);
      newest->push_back(largest);
    }
  }
}

FileList Version::OverlappingInputs(int level, const Slice* begin, const Slice* end) const {
  const Comparator* ucmp = icmp_->user_comparator();
  FileList out;
  for (const auto& f : files_[level]) {
    if (begin != nullptr && ucmp->Compare(ExtractUserKey(f->largest), *begin) < 0) continue;
    if (end != nullptr && ucmp->Compare(ExtractUserKey(f->smallest), *end) > 0) continue;
    out.push_back(f);
  }
  return out;
}

bool Version::RangeNotInLevelsBelow(int level, const Slice& start, const Slice& end) const {
  SHALE_ASSERT(level >= 0);
  const Comparator* ucmp = icmp_->user_comparator();
  for (int l = level + 1; l < num_levels(); l++) {
    // Below L0 a level's files are sorted and disjoint: the first file ending at or after
    // start is the only candidate.
    const FileList& files = files_[l];
    auto it = std::partition_point(files.begin(), files.end(), [&](const auto& f) {
      return ucmp->Compare(ExtractUserKey(f->largest), start) < 0;
    });
    if (it != files.end() && ucmp->Compare(ExtractUserKey((*it)->smallest), end) < 0) {
      return false;
    }
  }
  return true;
}

const FileMetaData* Version::L0FileOverlappingOtherRuns(const Slice& user_key) const {
  const Comparator* ucmp = icmp_->user_comparator();
  auto holds = [&](const FileMetaData& f) {
    return ucmp->Compare(user_key, ExtractUserKey(f.smallest)) >= 0 &&
           ucmp->Compare(user_key, ExtractUserKey(f.largest)) <= 0;
  };
  const FileMetaData* top = nullptr;
  for (const auto& f : files_[0]) {  // newest first
    if (!holds(*f)) continue;
    if (top != nullptr) return top;
    top = f.get();
  }
  if (top == nullptr) return nullptr;
  for (int level = 1; level < num_levels(); level++) {
    const FileList& files = files_[level];
    auto it = std::partition_point(files.begin(), files.end(), [&](const auto& f) {
      return ucmp->Compare(ExtractUserKey(f->largest), user_key) < 0;
    });
    if (it != files.end() && holds(**it)) return top;
  }
  return nullptr;
}

bool Version::KeyNotInLevelsBelow(int level, const Slice& user_key) const {
  SHALE_ASSERT(level >= 0);
  const Comparator* ucmp = icmp_->user_comparator();
  for (int l = level + 1; l < num_levels(); l++) {
    const FileList& files = files_[l];
    auto it = std::partition_point(files.begin(), files.end(), [&](const auto& f) {
      return ucmp->Compare(ExtractUserKey(f->largest), user_key) < 0;
    });
    if (it != files.end() && ucmp->Compare(user_key, ExtractUserKey((*it)->smallest)) >= 0) {
      return false;
    }
  }
  return true;
}

}  // namespace shale
