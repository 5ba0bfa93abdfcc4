// TFLite Micro's GreedyMemoryPlanner, as its header and source describe it:
//  - Sort the buffers by size, largest first (ties: record order).
//  - For each buffer, walk the already placed buffers that are live at some common step, in
//    order of offset, and take the first gap (lowest offset) the buffer fits in; when none
//    does, place it after the highest of them.
// First fit, where our greedy orders take the best (smallest) gap. Cost O(n^2).
#pragma once

#include <span>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

Expected<Placement> place_tflm_greedy(std::span<const UsageRecord> records,
                                      const AlgorithmOptions& options);

}  // namespace onepool::bench
