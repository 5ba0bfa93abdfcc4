// The onepool executable's global operator new: blocks of 2 MiB and more ask for transparent huge
// pages (runtime/huge_pages.h), so that the CLI's large tables fault in 2 MiB at a time. Where
// page faults are expensive (virtual machines), they cost more than filling the tables: `plan
// --records` on 100,000 records spent 68 ms creating the plan's 25 MB tensor table and 60 ms in
// the checker's arrays, almost all of it in page faults. The blocks still come from malloc and go
// back through free. Only the executable does this; the library leaves its users' operator new
// alone.
#include <cstdlib>
#include <new>

#include "runtime/huge_pages.h"

// Sanitizer builds keep the sanitizer's own operator new and delete: replacing them here would
// pair its allocations with this file's free() (ASan reports that as a mismatch).
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ONEPOOL_SANITIZED_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ONEPOOL_SANITIZED_BUILD 1
#endif

#ifndef ONEPOOL_SANITIZED_BUILD

void* operator new(std::size_t bytes) {
  for (;;) {
    if (void* block = std::malloc(bytes == 0 ? 1 : bytes)) {
      if (bytes >= onepool::kHugePageBytes) onepool::advise_huge_pages(block, bytes);
      return block;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* operator new[](std::size_t bytes) { return ::operator new(bytes); }

void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }

#endif  // ONEPOOL_SANITIZED_BUILD
