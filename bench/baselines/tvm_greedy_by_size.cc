#include "bench/baselines/tvm_greedy_by_size.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace onepool::bench {
namespace {

// Per record, how many others are live at some common step: all others minus those that end
// before it starts and those that start after it ends. O(n log n).
std::vector<size_t> conflict_counts(std::span<const UsageRecord> records) {
  std::vector<int64_t> firsts;
  std::vector<int64_t> lasts;
  for (const UsageRecord& record : records) {
    firsts.push_back(record.first);
    lasts.push_back(record.last);
  }
  std::sort(firsts.begin(), firsts.end());
  std::sort(lasts.begin(), lasts.end());
  std::vector<size_t> counts(records.size(), 0);
  for (size_t i = 0; i < records.size(); ++i) {
    const auto ended_before =
        std::lower_bound(lasts.begin(), lasts.end(), records[i].first) - lasts.begin();
    const auto started_after =
        firsts.end() - std::upper_bound(firsts.begin(), firsts.end(), records[i].last);
    counts[i] = records.size() - 1 - static_cast<size_t>(ended_before + started_after);
  }
  return counts;
}

}  // namespace

Expected<Placement> place_tvm_greedy_by_size(std::span<const UsageRecord> records,
                                             const AlgorithmOptions& /*options*/) {
  // Step 1. Size descending, then conflicts descending, then record order.
  const std::vector<size_t> conflicts = conflict_counts(records);
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto ua = static_cast<size_t>(a);
    const auto ub = static_cast<size_t>(b);
    if (records[ua].bytes != records[ub].bytes) return records[ua].bytes > records[ub].bytes;
    if (conflicts[ua] != conflicts[ub]) return conflicts[ua] > conflicts[ub];
    return a < b;
  });
  // Step 2. Each buffer above the highest placed buffer it conflicts with.
  Placement placement;
  placement.offsets.assign(records.size(), 0);
  std::vector<int32_t> placed;
  for (const int32_t index : order) {
    const UsageRecord& wanted = records[static_cast<size_t>(index)];
    size_t offset = 0;
    for (const int32_t other : placed) {
      const UsageRecord& record = records[static_cast<size_t>(other)];
      if (record.first > wanted.last || wanted.first > record.last) continue;
      offset = std::max(offset, placement.offsets[static_cast<size_t>(other)] + record.bytes);
    }
    placement.offsets[static_cast<size_t>(index)] = offset;
    placement.pool_bytes = std::max(placement.pool_bytes, offset + wanted.bytes);
    placed.push_back(index);
  }
  return placement;
}

}  // namespace onepool::bench
