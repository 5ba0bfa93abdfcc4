// The placement checker: aligned, inside the pool, no two records overlapping in time and address.
//
// Sweep over step events keeping the address intervals live at the current step in an ordered
// set. The set holds disjoint intervals, so a new interval overlaps some live one iff it overlaps
// its predecessor or its successor: O(n log n) in all.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

struct LiveInterval {
  size_t offset;
  size_t end;
  size_t index;
  bool operator<(const LiveInterval& other) const {
    return offset != other.offset ? offset < other.offset : index < other.index;
  }
};

std::string describe_interval(const RecordDescriber& describe, const UsageRecord& record,
                              size_t index, size_t offset) {
  return str_cat(describe(index), " (steps ", record.first, "..", record.last, ", bytes [", offset,
                 ", ", offset + record.bytes, "))");
}

Status check_each_record(std::span<const UsageRecord> records, const Placement& placement,
                         size_t alignment, const RecordDescriber& describe) {
  for (size_t i = 0; i < records.size(); ++i) {
    const UsageRecord& record = records[i];
    const size_t offset = placement.offsets[i];
    if (record.bytes == 0) continue;
    if (record.first > record.last) {
      return make_status(StatusCode::kInvalidArgument, describe(i), ": first step ", record.first,
                         " is after last step ", record.last);
    }
    if (offset % alignment != 0) {
      return make_status(StatusCode::kInternal, describe(i), ": offset ", offset,
                         " is not a multiple of the alignment ", alignment);
    }
    if (offset > placement.pool_bytes || record.bytes > placement.pool_bytes - offset) {
      return make_status(StatusCode::kInternal, describe(i), ": bytes [", offset, ", ",
                         offset + record.bytes, ") end past the pool of ", placement.pool_bytes,
                         " bytes");
    }
  }
  return Status::ok();
}

Status check_no_overlap(std::span<const UsageRecord> records, const Placement& placement,
                        const RecordDescriber& describe) {
  struct Event {
    int64_t step;
    int kind;  // 0: starts, 1: ends after this step
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(records.size() * 2);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    events.push_back({records[i].first, 0, i});
    events.push_back({records[i].last, 1, i});
  }
  // Starts before ends at one step: records sharing a step are live together.
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.step != b.step) return a.step < b.step;
    return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
  });
  std::set<LiveInterval> live;
  auto collision = [&](size_t a, size_t b) {
    return make_status(StatusCode::kInternal, "overlap: ",
                       describe_interval(describe, records[a], a, placement.offsets[a]), " and ",
                       describe_interval(describe, records[b], b, placement.offsets[b]),
                       " are live at a common step and overlap in address");
  };
  for (const Event& event : events) {
    const size_t offset = placement.offsets[event.index];
    const LiveInterval interval{offset, offset + records[event.index].bytes, event.index};
    if (event.kind == 1) {
      live.erase(interval);
      continue;
    }
    auto next = live.lower_bound(interval);
    if (next != live.end() && next->offset < interval.end) {
      return collision(next->index, event.index);
    }
    if (next != live.begin() && std::prev(next)->end > interval.offset) {
      return collision(std::prev(next)->index, event.index);
    }
    live.insert(next, interval);
  }
  return Status::ok();
}

}  // namespace

Status verify_placement(std::span<const UsageRecord> records, const Placement& placement,
                        size_t alignment) {
  return verify_placement(records, placement, alignment,
                          [](size_t index) { return str_cat("record ", index); });
}

Status verify_placement(std::span<const UsageRecord> records, const Placement& placement,
                        size_t alignment, const RecordDescriber& describe) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return make_status(StatusCode::kInvalidArgument, "alignment must be a power of two, got ",
                       alignment);
  }
  if (placement.offsets.size() != records.size()) {
    return make_status(StatusCode::kInternal, "placement has ", placement.offsets.size(),
                       " offsets for ", records.size(), " records");
  }
  ONEPOOL_RETURN_IF_ERROR(check_each_record(records, placement, alignment, describe));
  return check_no_overlap(records, placement, describe);
}

}  // namespace onepool
