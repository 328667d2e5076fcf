// SHALE_ASSERT(condition): an invariant the code relies on, checked where it is stated.
//
// On in Debug builds (NDEBUG not defined) and in Release builds configured with
// -DSHALE_INVARIANTS=ON (which defines SHALE_INVARIANTS); otherwise compiled out, the condition
// not evaluated, so it may be as expensive as the check needs. A failure prints the condition
// and where it was stated, then aborts: a broken invariant means state that may already be
// damaged, and going on could write it to disk.
//
// kInvariantChecks lets a check that needs a loop or a local be written as
//   if constexpr (kInvariantChecks) { ... SHALE_ASSERT(...); }
// Thread safety: stateless.
#pragma once

namespace shale {

#if !defined(NDEBUG) || defined(SHALE_INVARIANTS)
inline constexpr bool kInvariantChecks = true;
#else
inline constexpr bool kInvariantChecks = false;
#endif

[[noreturn]] void InvariantFailed(const char* condition, const char* file, int line);

}  // namespace shale

#if !defined(NDEBUG) || defined(SHALE_INVARIANTS)
#define SHALE_ASSERT(condition) \
  ((condition) ? static_cast<void>(0) : ::shale::InvariantFailed(#condition, __FILE__, __LINE__))
#else
#define SHALE_ASSERT(condition) static_cast<void>(sizeof(static_cast<bool>(condition)))
#endif
