// Marking memory the program still owns as unusable under AddressSanitizer: allocators that keep
// freed memory (the slab allocator, the arena block pool) poison it, so a read of it is reported
// as a use after free would be. Without AddressSanitizer the macros do nothing.
//
//   SHALE_ASAN_POISONING      1 in an AddressSanitizer build, else 0
//   SHALE_POISON(p, n)        bytes [p, p + n) may not be touched
//   SHALE_UNPOISON(p, n)      they may again
//   SHALE_IS_POISONED(p)      whether byte p is poisoned (false without AddressSanitizer)
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define SHALE_ASAN_POISONING 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHALE_ASAN_POISONING 1
#endif
#endif
#ifndef SHALE_ASAN_POISONING
#define SHALE_ASAN_POISONING 0
#endif

#if SHALE_ASAN_POISONING
#include <sanitizer/asan_interface.h>
#define SHALE_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define SHALE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#define SHALE_IS_POISONED(p) (__asan_address_is_poisoned(p) != 0)
#else
#define SHALE_POISON(p, n) ((void)(p), (void)(n))
#define SHALE_UNPOISON(p, n) ((void)(p), (void)(n))
#define SHALE_IS_POISONED(p) ((void)(p), false)
#endif
