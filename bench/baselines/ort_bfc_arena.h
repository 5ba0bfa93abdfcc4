// ONNX Runtime's CPU arena at run time (BFCArena, "best fit with coalescing", from TensorFlow),
// after the allocation planner's exact-size reuse (ort_reuse.h), with ORT's defaults:
//  - Requests are rounded up to 256 bytes. Free chunks sit in 21 bins by size class (256 B,
//    512 B, ... doubling); a request searches its own bin and the larger ones for the smallest
//    free chunk that fits (lowest address on ties).
//  - The chosen chunk is split when it is at least twice the request, or wastes 128 MiB or
//    more; otherwise the request keeps the whole chunk.
//  - A free merges the chunk with free neighbours in the same region.
//  - When nothing fits, the arena extends by a new region (not adjacent to the others): the
//    next region size (1 MiB at first, doubled after each extension) or, when the request is
//    larger, that size doubled until it fits. Regions are never released.
// The pool is the total bytes of all regions: what the process holds for intermediates.
// Regions are laid end to end in the returned placement so it can be verified.
#pragma once

#include <cstddef>
#include <span>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

struct BfcArenaOptions {
  size_t initial_region_bytes = size_t{1} << 20;
  size_t max_dead_bytes_per_chunk = size_t{128} << 20;
};

/// ORT's defaults.
Expected<Placement> place_ort_bfc_arena(std::span<const UsageRecord> records,
                                        const AlgorithmOptions& options);
Expected<Placement> place_ort_bfc_arena(std::span<const UsageRecord> records,
                                        const AlgorithmOptions& options,
                                        const BfcArenaOptions& arena);

}  // namespace onepool::bench
