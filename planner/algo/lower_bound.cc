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

namespace {

// Steps that span fewer values than this many per record are swept with a table, not sorted.
constexpr uint64_t kDenseStepsPerRecord = 4;

// The sweep of lower_bound_bytes() over a table indexed by step (offset by `first_step`): bytes
// starting and ending at each step, then one pass. Requires the sum of all sizes to fit in
// size_t (so no partial sum overflows).
size_t dense_peak(std::span<const UsageRecord> records, int64_t first_step, size_t span) {
  std::vector<size_t> starting(span, 0);
  std::vector<size_t> ending(span, 0);
  const auto index_of = [first_step](int64_t step) {
    return static_cast<size_t>(static_cast<uint64_t>(step) - static_cast<uint64_t>(first_step));
  };
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    starting[index_of(record.first)] += record.bytes;
    ending[index_of(record.last)] += record.bytes;
  }
  size_t live = 0;
  size_t peak = 0;
  for (size_t step = 0; step < span; ++step) {
    live += starting[step];
    peak = std::max(peak, live);
    live -= ending[step];
  }
  return peak;
}

// The sweep over step events sorted by step: any steps, any sizes.
size_t sorted_peak(std::span<const UsageRecord> records) {
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

}  // namespace

// Sweep over step events: at one step every record starting there is added before any record
// ending there is removed, so the running sum after the additions is the bytes live at that step.
// Dense steps (the usual case) are swept with a table; the general case sorts the events.
size_t lower_bound_bytes(std::span<const UsageRecord> records) {
  int64_t first_step = std::numeric_limits<int64_t>::max();
  int64_t last_step = std::numeric_limits<int64_t>::min();
  size_t total = 0;
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    first_step = std::min(first_step, record.first);
    last_step = std::max(last_step, record.last);
    total = saturating_add(total, record.bytes);
  }
  if (first_step > last_step) return 0;
  // Unsigned arithmetic: the span of two int64 steps may not fit in int64.
  const uint64_t span = static_cast<uint64_t>(last_step) - static_cast<uint64_t>(first_step);
  if (total < kSizeMax && span < kDenseStepsPerRecord * records.size()) {
    return dense_peak(records, first_step, static_cast<size_t>(span) + 1);
  }
  return sorted_peak(records);
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
      return make_status(StatusCode::kInvalidArgument, "record ", i, ": first step ", record.first,
                         " is after last step ", record.last);
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
