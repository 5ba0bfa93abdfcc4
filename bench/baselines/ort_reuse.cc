#include "bench/baselines/ort_reuse.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace onepool::bench {
namespace {

std::vector<int32_t> execution_order(std::span<const UsageRecord> records) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return records[static_cast<size_t>(a)].first < records[static_cast<size_t>(b)].first;
  });
  return order;
}

}  // namespace

SharedBuffers reuse_freed_exact_size(std::span<const UsageRecord> records) {
  SharedBuffers shared;
  shared.buffer_of.assign(records.size(), -1);
  using LiveBuffer = std::pair<int64_t, int32_t>;  // (last step, buffer), earliest end on top
  std::priority_queue<LiveBuffer, std::vector<LiveBuffer>, std::greater<>> live;
  // Freed buffers by size; the back of each list is the most recently freed.
  std::unordered_map<size_t, std::vector<int32_t>> freed_by_size;
  for (const int32_t index : execution_order(records)) {
    const UsageRecord& record = records[static_cast<size_t>(index)];
    while (!live.empty() && live.top().first < record.first) {
      const int32_t buffer = live.top().second;
      live.pop();
      freed_by_size[shared.buffers[static_cast<size_t>(buffer)].bytes].push_back(buffer);
    }
    std::vector<int32_t>& same_size = freed_by_size[record.bytes];
    int32_t buffer = -1;
    if (!same_size.empty()) {
      buffer = same_size.back();
      same_size.pop_back();
      shared.buffers[static_cast<size_t>(buffer)].last = record.last;
    } else {
      buffer = static_cast<int32_t>(shared.buffers.size());
      shared.buffers.push_back(record);
    }
    shared.buffer_of[static_cast<size_t>(index)] = buffer;
    live.emplace(record.last, buffer);
  }
  return shared;
}

std::vector<BufferEvent> execution_events(std::span<const UsageRecord> buffers) {
  // (step, 0 = allocate / 1 = free, buffer): sorting gives the execution order.
  std::vector<std::tuple<int64_t, int, int32_t>> keyed;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].bytes == 0) continue;
    keyed.emplace_back(buffers[i].first, 0, static_cast<int32_t>(i));
    keyed.emplace_back(buffers[i].last, 1, static_cast<int32_t>(i));
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<BufferEvent> events;
  events.reserve(keyed.size());
  for (const auto& [step, kind, buffer] : keyed) events.push_back({buffer, kind == 0});
  return events;
}

Placement records_placement(const SharedBuffers& shared, std::span<const size_t> buffer_offsets,
                            size_t pool_bytes) {
  Placement placement;
  placement.pool_bytes = pool_bytes;
  placement.offsets.assign(shared.buffer_of.size(), 0);
  for (size_t i = 0; i < shared.buffer_of.size(); ++i) {
    const int32_t buffer = shared.buffer_of[i];
    if (buffer >= 0) placement.offsets[i] = buffer_offsets[static_cast<size_t>(buffer)];
  }
  return placement;
}

}  // namespace onepool::bench
