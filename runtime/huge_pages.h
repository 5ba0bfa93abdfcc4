// Transparent huge pages for large, long-lived blocks (the weights, the pools).
#pragma once

#include <cstddef>

namespace onepool {

/// Blocks of at least this many bytes are worth the advice (one 2 MiB page).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// Asks the kernel to back the 2 MiB-aligned part of [block, block + bytes) with transparent huge
/// pages (madvise MADV_HUGEPAGE), so that its first touch costs one page fault per 2 MiB instead
/// of one per 4 KiB. A hint: where transparent huge pages are off, or on a block smaller than one
/// aligned huge page, nothing happens; the contents and every later use of the block are the same.
/// Faults are expensive in virtual machines (about 11 us each on the one the README's numbers
/// come from): copying ResNet-50's 97 MB of weights in took 260 ms of page faults.
void advise_huge_pages(void* block, size_t bytes);

}  // namespace onepool
