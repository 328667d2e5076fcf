// SHALE_TEST_HOOK(point): a named place in the library where a test can run code of its own,
// to pause a thread there or act at that moment, so that an interleaving of threads that is
// otherwise rarely hit can be tested deterministically.
//
// On where invariant checks are (Debug builds, and Release builds with SHALE_INVARIANTS); else
// compiled out (test_hook::kEnabled false: tests that need a hook skip). Hooks sit on rare
// paths only (closing, exclusive sections): with no callback set a hook costs one relaxed load.
//
// Thread safety: Set and ClearAll may race hooks (a hook reached by a thread started after
// Set, or by the thread that called it, sees the callback); a callback runs on the thread that
// reaches the hook, outside any lock of this facility, and may run on several threads at once.
// Ownership: the registry owns copies of the callbacks until they are cleared.
#pragma once

#include <functional>
#include <string_view>

namespace shale::test_hook {

#if !defined(NDEBUG) || defined(SHALE_INVARIANTS)
inline constexpr bool kEnabled = true;
#else
inline constexpr bool kEnabled = false;
#endif

// Runs callback at every hook named point from now on (replacing an earlier one).
void Set(std::string_view point, std::function<void()> callback);
// Removes every callback.
void ClearAll();
// Runs point's callback, if one is set.
void Run(std::string_view point);

}  // namespace shale::test_hook

#if !defined(NDEBUG) || defined(SHALE_INVARIANTS)
#define SHALE_TEST_HOOK(point) ::shale::test_hook::Run(point)
#else
#define SHALE_TEST_HOOK(point) static_cast<void>(0)
#endif
