// TVM USMP's greedy_by_size (src/tir/usmp/algo/greedy.cc, as described there and in RFC 0009):
//  - Sort the buffers by size, largest first (ties: more liveness conflicts first, then record
//    order).
//  - Each buffer goes right above every already placed buffer it conflicts with: its offset is
//    the highest end among them (0 when there are none). No gap below that is ever filled.
// Cost O(n^2).
#pragma once

#include <span>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

Expected<Placement> place_tvm_greedy_by_size(std::span<const UsageRecord> records,
                                             const AlgorithmOptions& options);

}  // namespace onepool::bench
