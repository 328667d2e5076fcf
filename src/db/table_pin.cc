#include "src/db/table_pin.h"

#include "src/util/invariants.h"

namespace shale {

TablePin& TablePin::operator=(const TablePin& other) noexcept {
  if (this != &other) Reset();
  return *this;
}

bool TablePin::Install(const std::shared_ptr<Cache>& cache, Cache::Handle* handle,
                       TableReader* reader) {
  SHALE_ASSERT(handle != nullptr && reader != nullptr);
  Cache::Handle* expected = nullptr;
  if (!handle_.compare_exchange_strong(expected, handle, std::memory_order_acq_rel)) return false;
  cache_ = cache;
  reader_.store(reader, std::memory_order_release);
  return true;
}

void TablePin::Reset() {
  Cache::Handle* handle = handle_.exchange(nullptr, std::memory_order_acq_rel);
  if (handle == nullptr) return;
  // Install sets cache_ before it publishes reader_; exclusive access here means it is done.
  SHALE_ASSERT(cache_ != nullptr);
  reader_.store(nullptr, std::memory_order_relaxed);
  cache_->Release(handle);
  cache_.reset();
}

}  // namespace shale
