// `greedy-by-size`: greedy by size with best fit, as in TFLite's ArenaPlanner, XNNPACK and
// Pisarchyk & Lee 2020.
//
// Algorithm:
//  - Sort the records by size, largest first (ties: longer lifetime first, then lower first step,
//    then lower index), so the result is deterministic.
//  - Place each record in the smallest gap (lowest offset on ties) among the already placed
//    records that are live at some common step; when none fits, on top of the highest of them.
//    The engine (best_fit.cc) keeps placed records in address unions indexed by time.
//
// Cost: O(n log n) to sort, then per record about O(L log L) for the L records live at one step
// (see best_fit.cc). Not optimal: DSA is NP-complete. The lower bound (max bytes live at one
// step) is often reached on chains and CNNs, but a few huge tensors with staggered lifetimes can
// leave gaps no later record fits in.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/algo/algorithms.h"
#include "planner/algo/orders.h"

namespace onepool {

std::vector<int32_t> size_order(std::span<const UsageRecord> records) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const UsageRecord& ra = records[static_cast<size_t>(a)];
    const UsageRecord& rb = records[static_cast<size_t>(b)];
    if (ra.bytes != rb.bytes) return ra.bytes > rb.bytes;
    const int64_t length_a = ra.last - ra.first;
    const int64_t length_b = rb.last - rb.first;
    if (length_a != length_b) return length_a > length_b;
    if (ra.first != rb.first) return ra.first < rb.first;
    return a < b;
  });
  return order;
}

Expected<Placement> place_greedy_by_size(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, size_order(records));
}

}  // namespace onepool
