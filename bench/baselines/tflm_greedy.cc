#include "bench/baselines/tflm_greedy.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace onepool::bench {
namespace {

bool live_together(const UsageRecord& a, const UsageRecord& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

Expected<Placement> place_tflm_greedy(std::span<const UsageRecord> records,
                                      const AlgorithmOptions& /*options*/) {
  // Step 1. Largest first; stable, so equal sizes keep the order they were added in.
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return records[static_cast<size_t>(a)].bytes > records[static_cast<size_t>(b)].bytes;
  });
  // Step 2. First fit among the placed buffers kept sorted by offset.
  Placement placement;
  placement.offsets.assign(records.size(), 0);
  std::vector<int32_t> placed_by_offset;
  for (const int32_t index : order) {
    const UsageRecord& wanted = records[static_cast<size_t>(index)];
    size_t candidate = 0;
    for (const int32_t other : placed_by_offset) {
      const UsageRecord& placed = records[static_cast<size_t>(other)];
      if (!live_together(wanted, placed)) continue;
      const size_t placed_offset = placement.offsets[static_cast<size_t>(other)];
      if (placed_offset >= candidate && placed_offset - candidate >= wanted.bytes) break;
      candidate = std::max(candidate, placed_offset + placed.bytes);
    }
    placement.offsets[static_cast<size_t>(index)] = candidate;
    const auto position =
        std::upper_bound(placed_by_offset.begin(), placed_by_offset.end(), candidate,
                         [&](size_t offset, int32_t other) {
                           return offset < placement.offsets[static_cast<size_t>(other)];
                         });
    placed_by_offset.insert(position, index);
    placement.pool_bytes = std::max(placement.pool_bytes, candidate + wanted.bytes);
  }
  return placement;
}

}  // namespace onepool::bench
