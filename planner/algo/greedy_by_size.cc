// `greedy-by-size` (the default): greedy by size with best fit, as in TFLite's ArenaPlanner,
// XNNPACK and Pisarchyk & Lee 2020.
//
// Algorithm:
//  - Sort the records by size, largest first (ties: longer lifetime first, then lower first step,
//    then lower index), so the result is deterministic.
//  - For each record, gather the address intervals of the already placed records that are live at
//    some common step, sort them by offset and scan the gaps between them.
//  - Place the record in the smallest gap that fits (lowest offset on ties); when none fits, at
//    the end of the highest overlapping record.
//  - Placed records are kept as address unions in a segment tree over the T (compressed) steps:
//    a query for a lifetime reads O(log T) nodes' unions instead of every overlapping record.
//
// Cost: O(n log n) to sort; per record, O(log T) union updates of O(log R + R) each and a query
// of O(Q log Q), where R is the number of disjoint address runs in a node's union and Q <= 4 R
// log T the runs read. Unions of many records are mostly solid, so R stays small both on
// DNN-like instances and when every record is live at once (R = 1). The worst case, unions
// fragmented into O(n) runs, is O(n^2 log n). Measured CPU time on a loaded 2-core machine
// (bench/plan_bench has the instances): 100k DNN-like records ~0.55 s, 100k records all live at
// once 22 ms, 10k records with uniformly random long lifetimes 1.6 s.
//
// Not optimal: DSA is NP-complete. The lower bound (max bytes live at one step) is often reached
// on chains and CNNs, but a few huge tensors with staggered lifetimes can leave gaps no later
// record fits in.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

// Disjoint address runs [begin, end), sorted, with touching runs merged: the union of the
// address intervals of a set of records. Only the union matters for finding gaps, and unions of
// many records tend to be a few runs.
class AddressRuns {
 public:
  bool empty() const { return runs_.empty(); }
  const std::vector<std::pair<size_t, size_t>>& runs() const { return runs_; }

  void add(size_t begin, size_t end) {
    // Runs are disjoint and sorted, so their ends are sorted too.
    auto first = std::lower_bound(runs_.begin(), runs_.end(), begin,
                                  [](const auto& run, size_t value) { return run.second < value; });
    auto last = first;
    while (last != runs_.end() && last->first <= end) {
      begin = std::min(begin, last->first);
      end = std::max(end, last->second);
      ++last;
    }
    if (first == last) {
      runs_.insert(first, {begin, end});
      return;
    }
    *first = {begin, end};
    runs_.erase(first + 1, last);
  }

 private:
  std::vector<std::pair<size_t, size_t>> runs_;
};

// Placed records indexed by time: a segment tree over compressed steps [0, size). A record is
// added to the `own` runs of the O(log T) nodes that cover its lifetime, and to the `below` runs
// of those nodes and their ancestors. The records meeting a query range [lo, hi] are exactly
// those in `below` of the query's covering nodes plus those in `own` of their ancestors.
class PlacedByTime {
 public:
  explicit PlacedByTime(size_t size)
      : size_(std::max<size_t>(size, 1)), own_(4 * size_), below_(4 * size_) {}

  void insert(size_t lo, size_t hi, size_t begin, size_t end) {
    insert(1, 0, size_ - 1, lo, hi, begin, end);
  }

  // Appends the address runs of every placed record live at some step in [lo, hi] (runs from
  // different nodes may overlap; the gap scan handles that).
  void collect(size_t lo, size_t hi, std::vector<std::pair<size_t, size_t>>& out) const {
    collect(1, 0, size_ - 1, lo, hi, out);
  }

 private:
  void insert(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi, size_t begin,
              size_t end) {
    below_[node].add(begin, end);
    if (lo <= node_lo && node_hi <= hi) {
      own_[node].add(begin, end);
      return;
    }
    const size_t mid = node_lo + (node_hi - node_lo) / 2;
    if (lo <= mid) insert(2 * node, node_lo, mid, lo, hi, begin, end);
    if (hi > mid) insert(2 * node + 1, mid + 1, node_hi, lo, hi, begin, end);
  }

  void collect(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi,
               std::vector<std::pair<size_t, size_t>>& out) const {
    if (below_[node].empty()) return;
    if (lo <= node_lo && node_hi <= hi) {
      out.insert(out.end(), below_[node].runs().begin(), below_[node].runs().end());
      return;
    }
    out.insert(out.end(), own_[node].runs().begin(), own_[node].runs().end());
    const size_t mid = node_lo + (node_hi - node_lo) / 2;
    if (lo <= mid) collect(2 * node, node_lo, mid, lo, hi, out);
    if (hi > mid) collect(2 * node + 1, mid + 1, node_hi, lo, hi, out);
  }

  size_t size_;
  std::vector<AddressRuns> own_;    // records whose lifetime covers the node's range
  std::vector<AddressRuns> below_;  // records stored at the node or any descendant
};

std::vector<int32_t> order_by_size(std::span<const UsageRecord> records) {
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

std::vector<int64_t> distinct_steps(std::span<const UsageRecord> records) {
  std::vector<int64_t> steps;
  steps.reserve(records.size() * 2);
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    steps.push_back(record.first);
    steps.push_back(record.last);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

size_t step_index(const std::vector<int64_t>& steps, int64_t step) {
  return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
}

// Smallest gap of at least `bytes` between the sorted intervals, or the end of the highest one.
size_t best_fit_offset(std::vector<std::pair<size_t, size_t>>& intervals, size_t bytes) {
  std::sort(intervals.begin(), intervals.end());
  size_t cursor = 0;
  size_t best_offset = 0;
  size_t best_gap = std::numeric_limits<size_t>::max();
  bool found = false;
  for (const auto& [offset, end] : intervals) {
    if (offset > cursor) {
      const size_t gap = offset - cursor;
      if (gap >= bytes && gap < best_gap) {
        best_gap = gap;
        best_offset = cursor;
        found = true;
      }
    }
    cursor = std::max(cursor, end);
  }
  return found ? best_offset : cursor;
}

}  // namespace

Placement place_greedy_in_order(std::span<const UsageRecord> records,
                                std::span<const int32_t> order) {
  // Step 1. Compress steps so the tree size depends on the record count, not on step values.
  const std::vector<int64_t> steps = distinct_steps(records);
  PlacedByTime placed(steps.size());
  // Step 2. Place each record at the best gap among the placed records it overlaps in time.
  Placement placement;
  placement.offsets.assign(records.size(), 0);
  std::vector<std::pair<size_t, size_t>> intervals;
  for (int32_t index : order) {
    const UsageRecord& record = records[static_cast<size_t>(index)];
    if (record.bytes == 0) continue;
    const size_t lo = step_index(steps, record.first);
    const size_t hi = step_index(steps, record.last);
    intervals.clear();
    placed.collect(lo, hi, intervals);
    const size_t offset = best_fit_offset(intervals, record.bytes);
    placement.offsets[static_cast<size_t>(index)] = offset;
    placement.pool_bytes = std::max(placement.pool_bytes, offset + record.bytes);
    placed.insert(lo, hi, offset, offset + record.bytes);
  }
  return placement;
}

Expected<Placement> place_greedy_by_size(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  // Size descending with deterministic tie-breaks, then best fit in that order.
  const std::vector<int32_t> order = order_by_size(records);
  return place_greedy_in_order(records, order);
}

}  // namespace onepool
