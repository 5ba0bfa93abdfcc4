// Placement orders of the greedy family: which record the best-fit engine places next.
//
// Each function returns the indices of the records with bytes > 0 in placement order. Ties break
// by size (larger first), then first step, then index, so every order is deterministic. All are
// O(n log n).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {

/// Largest first (ties: longer lifetime first): TFLite, XNNPACK, Pisarchyk & Lee's greedy by size.
std::vector<int32_t> size_order(std::span<const UsageRecord> records);
/// Longest lifetime first: long-lived tensors settle at the bottom of the pool.
std::vector<int32_t> lifetime_order(std::span<const UsageRecord> records);
/// Largest bytes x lifetime first: the records that block the most address x time.
std::vector<int32_t> area_order(std::span<const UsageRecord> records);
/// Most records live at a common step first (TVM USMP's greedy_by_conflicts).
std::vector<int32_t> conflicts_order(std::span<const UsageRecord> records);
/// Pisarchyk & Lee's greedy by breadth: steps by breadth (bytes live there) descending; at each
/// step, the records live there not yet ordered, largest first.
std::vector<int32_t> breadth_order(std::span<const UsageRecord> records);

}  // namespace onepool
