// Bounds of a placement problem (lower bound, naive) and the input check every algorithm runs.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

constexpr size_t kSizeMax = std::numeric_limits<size_t>::max();

size_t saturating_add(size_t a, size_t b) { return a > kSizeMax - b ? kSizeMax : a + b; }

}  // namespace

size_t naive_bytes(std::span<const UsageRecord> records) {
  size_t total = 0;
  for (const UsageRecord& record : records) total = saturating_add(total, record.bytes);
  return total;
}

// Sweep over step events: at one step every record starting there is added before any record
// ending there is removed, so the running sum after the additions is the bytes live at that step.
size_t lower_bound_bytes(std::span<const UsageRecord> records) {
  struct Event {
    int64_t step;
    int kind;  // 0: starts, 1: ends after this step
    size_t bytes;
  };
  std::vector<Event> events;
  events.reserve(records.size() * 2);
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    events.push_back({record.first, 0, record.bytes});
    events.push_back({record.last, 1, record.bytes});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.step != b.step ? a.step < b.step : a.kind < b.kind;
  });
  unsigned __int128 live = 0;
  unsigned __int128 peak = 0;
  for (const Event& event : events) {
    if (event.kind == 0) {
      live += event.bytes;
      peak = std::max(peak, live);
    } else {
      live -= event.bytes;
    }
  }
  return peak > kSizeMax ? kSizeMax : static_cast<size_t>(peak);
}

Status check_records(std::span<const UsageRecord> records, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return make_status(StatusCode::kInvalidArgument, "alignment must be a power of two, got ",
                       alignment);
  }
  size_t total = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const UsageRecord& record = records[i];
    if (record.first > record.last) {
      return make_status(StatusCode::kInvalidArgument, "record ", i, ": first step ",
                         record.first, " is after last step ", record.last);
    }
    if (record.bytes % alignment != 0) {
      return make_status(StatusCode::kInvalidArgument, "record ", i, ": size ", record.bytes,
                         " bytes is not a multiple of the alignment ", alignment);
    }
    if (record.bytes > kSizeMax - total) {
      return make_status(StatusCode::kOutOfRange, "record ", i,
                         ": the sum of all record sizes overflows size_t");
    }
    total += record.bytes;
  }
  return Status::ok();
}

}  // namespace onepool
