#include "src/base/internal_iterator.h"

namespace shale {
namespace {

class ErrorIterator final : public InternalIterator {
 public:
  explicit ErrorIterator(const Status& s) : status_(s) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(const Slice&) override {}
  void SeekForPrev(const Slice&) override {}
  void Next() override {}
  void Prev() override {}
  Slice key() const override { return Slice(); }
  Slice value() const override { return Slice(); }
  Status status() const override { return status_; }

 private:
  const Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewErrorInternalIterator(const Status& s) {
  return std::make_unique<ErrorIterator>(s);
}

}  // namespace shale
