#include "src/util/test_hook.h"

#include <atomic>
#include <map>
#include <string>

#include "src/util/mutex.h"

namespace shale::test_hook {
namespace {

struct Registry {
  Mutex mu;
  std::map<std::string, std::function<void()>, std::less<>> callbacks GUARDED_BY(mu);
  std::atomic<size_t> size{0};  // callbacks.size(), read without mu by Run's fast path
};

Registry& TheRegistry() {
  static Registry* const registry = new Registry();  // never destroyed: hooks may run late
  return *registry;
}

}  // namespace

void Set(std::string_view point, std::function<void()> callback) {
  Registry& r = TheRegistry();
  MutexLock l(&r.mu);
  r.callbacks.insert_or_assign(std::string(point), std::move(callback));
  r.size.store(r.callbacks.size(), std::memory_order_relaxed);
}

void ClearAll() {
  Registry& r = TheRegistry();
  MutexLock l(&r.mu);
  r.callbacks.clear();
  r.size.store(0, std::memory_order_relaxed);
}

void Run(std::string_view point) {
  Registry& r = TheRegistry();
  if (r.size.load(std::memory_order_relaxed) == 0) return;
  std::function<void()> callback;
  {
    MutexLock l(&r.mu);
    auto it = r.callbacks.find(point);
    if (it == r.callbacks.end()) return;
    callback = it->second;
  }
  callback();
}

}  // namespace shale::test_hook
