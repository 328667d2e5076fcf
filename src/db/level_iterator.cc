#include "src/db/level_iterator.h"

#include <algorithm>

#include "src/db/table_cache.h"

namespace shale {
namespace {

class LevelIterator final : public InternalIterator {
 public:
  LevelIterator(TableCache* table_cache, const ReadOptions& options,
                const InternalKeyComparator* icmp, FileList files)
      : table_cache_(table_cache), options_(options), icmp_(icmp), files_(std::move(files)) {}

  bool Valid() const override { return file_iter_ != nullptr && file_iter_->Valid(); }
  void SeekToFirst() override {
    OpenFileForward(0);
    if (file_iter_ != nullptr) file_iter_->SeekToFirst();
    SkipForward();
  }
  void SeekToLast() override {
    OpenFileBackward(files_.size() - 1);
    if (file_iter_ != nullptr) file_iter_->SeekToLast();
    SkipBackward();
  }
  void Seek(const Slice& target) override {
    OpenFileForward(FindFile(target));
    if (file_iter_ != nullptr) file_iter_->Seek(target);
    SkipForward();
  }
  bool SeekInPrefix(const Slice& target, const PrefixSeek& prefix) override {
    if (OpenPrefixDecider(target)) {
      if (!file_iter_->SeekInPrefix(target, prefix)) return false;
    } else if (file_iter_ != nullptr) {
      file_iter_->Seek(target);
    }
    SkipForward();
    return true;
  }
  // Opens the file the seek lands in, as the seek would, and lets it stage its block.
  void PrepareSeek(const Slice& target, bool for_prev, StagedReads* reads) override {
    if (for_prev) {
      size_t i = FindFile(target);
      if (i >= files_.size()) i = files_.size() - 1;
      OpenFileBackward(i);
    } else {
      OpenFileForward(FindFile(target));
    }
    if (file_iter_ != nullptr) file_iter_->PrepareSeek(target, for_prev, reads);
  }
  // Opens the file SeekInPrefix positions, and lets it stage its block as SeekInPrefix will
  // position it.
  void PrepareSeekInPrefix(const Slice& target, const PrefixSeek& prefix,
                           StagedReads* reads) override {
    if (OpenPrefixDecider(target)) {
      file_iter_->PrepareSeekInPrefix(target, prefix, reads);
    } else if (file_iter_ != nullptr) {
      file_iter_->PrepareSeek(target, false, reads);
    }
  }
  void SeekForPrev(const Slice& target) override {
    size_t i = FindFile(target);
    if (i >= files_.size()) i = files_.size() - 1;
    OpenFileBackward(i);
    if (file_iter_ != nullptr) file_iter_->SeekForPrev(target);
    SkipBackward();
  }
  void Next() override {
    file_iter_->Next();
    SkipForward();
  }
  void Prev() override {
    file_iter_->Prev();
    SkipBackward();
  }
  Slice key() const override { return file_iter_->key(); }
  Slice value() const override { return file_iter_->value(); }
  Status status() const override {
    if (!status_.ok()) return status_;
    return file_iter_ != nullptr ? file_iter_->status() : Status::OK();
  }

 private:
  // The first file whose largest key is >= target (files_.size() if none).
  size_t FindFile(const Slice& target) const {
    return static_cast<size_t>(std::partition_point(files_.begin(), files_.end(),
                                                    [&](const auto& f) {
                                                      return icmp_->Compare(f->largest, target) < 0;
                                                    }) -
                               files_.begin());
  }
  // Opens the file a seek to target lands in, and returns whether that file decides a prefix
  // seek for the whole level: keys of one prefix are adjacent and the file's last key is past the
  // target, so when its filter rules the prefix out no key of the level at or after target has
  // it. Not so when a range tombstone ends the file (its keys may stop short of the target's
  // prefix, which the next file may then hold): the caller then seeks the file plainly.
  bool OpenPrefixDecider(const Slice& target) {
    const size_t i = FindFile(target);
    OpenFileForward(i);
    return file_iter_ != nullptr && !IsRangeDeletionSentinel(files_[i]->largest);
  }
  // Opens file i (no-op if already open); past either end closes the current one.
  void OpenFile(size_t i) {
    if (i >= files_.size()) {
      CloseFile();
      return;
    }
    if (file_iter_ != nullptr && index_ == i) return;
    CloseFile();
    index_ = i;
    file_iter_ = table_cache_->NewIterator(options_, *files_[i]);
  }
  // OpenFile, unless the scan going forward (backward) has passed the upper (lower) bound at
  // file i: every key of it is >= the upper bound (< the lower one). Then the iterator is
  // invalid, and the file is not opened.
  void OpenFileForward(size_t i) {
    const Slice* upper = options_.iterate_upper_bound;
    if (i < files_.size() && upper != nullptr &&
        icmp_->user_comparator()->Compare(ExtractUserKey(files_[i]->smallest), *upper) >= 0) {
      i = files_.size();
    }
    OpenFile(i);
  }
  void OpenFileBackward(size_t i) {
    const Slice* lower = options_.iterate_lower_bound;
    if (i < files_.size() && lower != nullptr &&
        icmp_->user_comparator()->Compare(ExtractUserKey(files_[i]->largest), *lower) < 0) {
      i = files_.size();
    }
    OpenFile(i);
  }
  void CloseFile() {
    if (file_iter_ != nullptr && !file_iter_->status().ok() && status_.ok()) {
      status_ = file_iter_->status();
    }
    file_iter_.reset();
    index_ = files_.size();
  }
  void SkipForward() {
    while (file_iter_ != nullptr && !file_iter_->Valid()) {
      if (!file_iter_->status().ok()) return;  // stop on an error: status() reports it
      const size_t next = index_ + 1;
      OpenFileForward(next);
      if (file_iter_ != nullptr) file_iter_->SeekToFirst();
    }
  }
  void SkipBackward() {
    while (file_iter_ != nullptr && !file_iter_->Valid()) {
      if (!file_iter_->status().ok()) return;
      if (index_ == 0) {
        CloseFile();
        return;
      }
      OpenFileBackward(index_ - 1);
      if (file_iter_ != nullptr) file_iter_->SeekToLast();
    }
  }

  TableCache* const table_cache_;
  const ReadOptions options_;
  const InternalKeyComparator* const icmp_;
  const FileList files_;
  std::unique_ptr<InternalIterator> file_iter_;
  size_t index_ = 0;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewLevelIterator(TableCache* table_cache,
                                                   const ReadOptions& options,
                                                   const InternalKeyComparator* icmp,
                                                   FileList files) {
  if (files.empty()) return NewErrorInternalIterator(Status::OK());
  return std::make_unique<LevelIterator>(table_cache, options, icmp, std::move(files));
}

}  // namespace shale
