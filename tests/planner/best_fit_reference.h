// Test-only reference: frozen copies of the best-fit engine (planner/algo/best_fit.cc and
// planner/algo/address_runs.h) and of size_order() as they were before they were optimized. The
// equivalence test in algorithms_test.cc checks that the optimized code returns bit-identical
// orders, offsets and pools. Do not optimize these copies: their job is to stay simple.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool::testing {
namespace reference_detail {

struct AddressRun {
  size_t begin;
  size_t end;
};

// Sorted, disjoint address runs with touching runs merged: the union of some records' bytes.
class AddressRuns {
 public:
  bool empty() const { return runs_.empty(); }
  const std::vector<AddressRun>& runs() const { return runs_; }
  void clear() { runs_.clear(); }

  void add(size_t begin, size_t end) {
    auto first =
        std::lower_bound(runs_.begin(), runs_.end(), begin,
                         [](const AddressRun& run, size_t value) { return run.end < value; });
    auto last = first;
    while (last != runs_.end() && last->begin <= end) {
      begin = std::min(begin, last->begin);
      end = std::max(end, last->end);
      ++last;
    }
    if (first == last) {
      runs_.insert(first, AddressRun{begin, end});
      return;
    }
    *first = AddressRun{begin, end};
    runs_.erase(first + 1, last);
  }

  // Replaces the contents with the union of two sorted run lists.
  void assign_union(const std::vector<AddressRun>& a, const std::vector<AddressRun>& b) {
    runs_.clear();
    runs_.reserve(a.size() + b.size());
    size_t i = 0;
    size_t j = 0;
    while (i < a.size() || j < b.size()) {
      const bool take_a = j == b.size() || (i < a.size() && a[i].begin <= b[j].begin);
      append_merging(take_a ? a[i++] : b[j++]);
    }
  }

  // Appends a run that begins at or after the last run's begin.
  void append_merging(const AddressRun& run) {
    if (!runs_.empty() && run.begin <= runs_.back().end) {
      runs_.back().end = std::max(runs_.back().end, run.end);
      return;
    }
    runs_.push_back(run);
  }

 private:
  std::vector<AddressRun> runs_;
};

// Runs gathered from several lists, each sorted by begin. Merging the lists pairwise costs
// O(n log lists), much less than sorting when a few long sorted lists dominate.
class RunCollector {
 public:
  void clear() {
    runs_.clear();
    ends_.clear();
    singles_.clear();
  }
  // Single runs (most lists hold one) wait apart and are sorted as one more list.
  void append_one(const AddressRun& run) { singles_.push_back(run); }
  void append(const std::vector<AddressRun>& list) {
    if (list.empty()) return;
    runs_.insert(runs_.end(), list.begin(), list.end());
    ends_.push_back(runs_.size());
  }
  // Every run appended so far, sorted by begin.
  const std::vector<AddressRun>& sorted() {
    const auto by_begin = [](const AddressRun& a, const AddressRun& b) {
      return a.begin < b.begin;
    };
    if (!singles_.empty()) {
      std::sort(singles_.begin(), singles_.end(), by_begin);
      append(singles_);
      singles_.clear();
    }
    while (ends_.size() > 1) {
      scratch_.resize(runs_.size());
      size_t merged = 0;
      size_t begin = 0;
      for (size_t i = 0; i < ends_.size(); i += 2) {
        const size_t middle = ends_[i];
        const size_t end = i + 1 < ends_.size() ? ends_[i + 1] : middle;
        std::merge(runs_.begin() + static_cast<std::ptrdiff_t>(begin),
                   runs_.begin() + static_cast<std::ptrdiff_t>(middle),
                   runs_.begin() + static_cast<std::ptrdiff_t>(middle),
                   runs_.begin() + static_cast<std::ptrdiff_t>(end),
                   scratch_.begin() + static_cast<std::ptrdiff_t>(begin), by_begin);
        ends_[merged++] = end;
        begin = end;
      }
      ends_.resize(merged);
      runs_.swap(scratch_);
    }
    return runs_;
  }

 private:
  std::vector<AddressRun> runs_;
  std::vector<size_t> ends_;  // one past the last run of each list
  std::vector<AddressRun> singles_;
  std::vector<AddressRun> scratch_;
};

// Steps per block of the time index (see PlacedByTime).
constexpr size_t kBlockSteps = 32;
// Runs a node of the starts index may hold back before it is rebuilt from its children.
constexpr size_t kMaxPendingRuns = 1024;

// Placed records indexed by time. Records with the same lifetime share one `Group` and one
// address union, so identical lifetimes (e.g. everything live at once) cost a single run.
//
// Steps are cut into blocks of kBlockSteps; a segment tree over the blocks holds
//  - `cover_`: the union of the groups whose lifetime covers every step of the node's blocks
//    (each group in the O(log B) nodes of its fully covered block range);
//  - `starts_`: the union of the groups starting in the node's blocks, brought up to date only
//    when a query reads the node (inserts just queue their run in the node's `pending_`).
// A group that covers a block only partly is listed in that block's `edges_` (at most two
// blocks per group). All lists are laid out once, up front: every lifetime is known before
// placement starts.
class PlacedByTime {
 public:
  // `lifetimes` holds (lo, hi) compressed steps, one per record to place; `steps` is the
  // number of compressed steps. Sets `group_of[k]` to the group of lifetimes[k].
  PlacedByTime(std::span<const std::pair<int32_t, int32_t>> lifetimes, size_t steps,
               std::vector<int32_t>& group_of);

  void insert(int32_t group, AddressRun run);

  // Appends the runs of every placed record live at some step of the group's lifetime (runs
  // from different lists may overlap).
  void collect(int32_t group, RunCollector& out);

 private:
  // Most groups hold one record: its run is kept inline, the union only from the second on.
  struct Group {
    int32_t lo;
    int32_t hi;
    size_t placed = 0;
    AddressRun single{0, 0};
    AddressRuns runs;
  };
  struct EdgeEntry {
    int32_t lo;
    int32_t hi;
    int32_t group;
  };

  size_t block_of(int32_t step) const { return static_cast<size_t>(step) / kBlockSteps; }
  int32_t block_first(size_t block) const { return static_cast<int32_t>(block * kBlockSteps); }
  int32_t block_last(size_t block) const {
    return static_cast<int32_t>(std::min((block + 1) * kBlockSteps, steps_) - 1);
  }
  void append_group(int32_t group_index, RunCollector& out) const {
    const Group& group = groups_[static_cast<size_t>(group_index)];
    if (group.placed == 1) {
      out.append_one(group.single);
    } else if (group.placed > 1) {
      out.append(group.runs.runs());
    }
  }
  // Groups starting at steps [first, last].
  void append_starting(int32_t first, int32_t last, RunCollector& out) const {
    const auto begin = group_starts_[static_cast<size_t>(first)];
    const auto end = group_starts_[static_cast<size_t>(last) + 1];
    for (int32_t group = begin; group < end; ++group) append_group(group, out);
  }
  const AddressRuns& fresh_starts(size_t node);
  void rebuild_starts(size_t node);

  size_t steps_;
  size_t leaves_ = 1;                  // blocks, rounded up to a power of two
  std::vector<Group> groups_;          // sorted by (lo, hi)
  std::vector<int32_t> group_starts_;  // groups starting at step s: [starts[s], starts[s + 1])
  std::vector<int32_t> edge_starts_;   // edge entries of block b: [starts[b], starts[b + 1])
  std::vector<EdgeEntry> edges_;
  std::vector<AddressRuns> cover_;
  std::vector<AddressRuns> starts_;
  // starts_ is brought up to date lazily: runs inserted since the last query wait in pending_;
  // a node with too many waiting runs drops them and is rebuilt from its children instead.
  std::vector<std::vector<AddressRun>> pending_;
  std::vector<uint8_t> rebuild_;
  AddressRuns merged_;
  RunCollector scratch_;
};

inline PlacedByTime::PlacedByTime(std::span<const std::pair<int32_t, int32_t>> lifetimes,
                                  size_t steps, std::vector<int32_t>& group_of)
    : steps_(std::max<size_t>(steps, 1)) {
  const size_t blocks = (steps_ + kBlockSteps - 1) / kBlockSteps;
  while (leaves_ < blocks) leaves_ *= 2;
  cover_.resize(2 * leaves_);
  starts_.resize(2 * leaves_);
  pending_.resize(2 * leaves_);
  rebuild_.assign(2 * leaves_, 0);
  // Step 1. One group per distinct lifetime, sorted by (lo, hi), indexed by first step.
  std::vector<int32_t> by_lifetime(lifetimes.size());
  for (size_t k = 0; k < lifetimes.size(); ++k) by_lifetime[k] = static_cast<int32_t>(k);
  std::sort(by_lifetime.begin(), by_lifetime.end(), [&](int32_t a, int32_t b) {
    return lifetimes[static_cast<size_t>(a)] < lifetimes[static_cast<size_t>(b)];
  });
  group_of.assign(lifetimes.size(), 0);
  group_starts_.assign(steps_ + 1, 0);
  for (int32_t k : by_lifetime) {
    const auto [lo, hi] = lifetimes[static_cast<size_t>(k)];
    if (groups_.empty() || groups_.back().lo != lo || groups_.back().hi != hi) {
      groups_.push_back(Group{lo, hi, 0, AddressRun{0, 0}, {}});
      ++group_starts_[static_cast<size_t>(lo) + 1];
    }
    group_of[static_cast<size_t>(k)] = static_cast<int32_t>(groups_.size() - 1);
  }
  for (size_t s = 0; s < steps_; ++s) group_starts_[s + 1] += group_starts_[s];
  // Step 2. Edge lists: the blocks a group covers only partly.
  std::vector<std::pair<size_t, EdgeEntry>> entries;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    const EdgeEntry entry{group.lo, group.hi, static_cast<int32_t>(g)};
    const size_t first_block = block_of(group.lo);
    const size_t last_block = block_of(group.hi);
    if (group.lo != block_first(first_block) || group.hi < block_last(first_block)) {
      entries.push_back({first_block, entry});
    }
    if (last_block != first_block && group.hi != block_last(last_block)) {
      entries.push_back({last_block, entry});
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  edge_starts_.assign(blocks + 1, 0);
  edges_.reserve(entries.size());
  for (const auto& [block, entry] : entries) {
    ++edge_starts_[block + 1];
    edges_.push_back(entry);
  }
  for (size_t b = 0; b < blocks; ++b) edge_starts_[b + 1] += edge_starts_[b];
}

inline void PlacedByTime::insert(int32_t group_index, AddressRun run) {
  Group& group = groups_[static_cast<size_t>(group_index)];
  if (group.placed++ == 0) {
    group.single = run;
  } else {
    if (group.placed == 2) group.runs.add(group.single.begin, group.single.end);
    group.runs.add(run.begin, run.end);
  }
  // Fully covered blocks: [first, end) after dropping the partly covered end blocks (those are
  // in edges_).
  const size_t first = block_of(group.lo) + (group.lo != block_first(block_of(group.lo)) ? 1 : 0);
  const size_t end = block_of(group.hi) + (group.hi == block_last(block_of(group.hi)) ? 1 : 0);
  for (size_t left = first + leaves_, right = end + leaves_; left < right; left /= 2, right /= 2) {
    if (left & 1) cover_[left++].add(run.begin, run.end);
    if (right & 1) cover_[--right].add(run.begin, run.end);
  }
  for (size_t node = block_of(group.lo) + leaves_; node >= 1; node /= 2) {
    if (rebuild_[node]) continue;
    std::vector<AddressRun>& pending = pending_[node];
    pending.push_back(run);
    if (pending.size() > kMaxPendingRuns) {
      rebuild_[node] = 1;
      pending = {};
    }
  }
}

inline void PlacedByTime::collect(int32_t group_index, RunCollector& out) {
  const int32_t lo = groups_[static_cast<size_t>(group_index)].lo;
  const int32_t hi = groups_[static_cast<size_t>(group_index)].hi;
  // Step 1. Live at lo: groups covering lo's whole block, then those covering it partly.
  const size_t block = block_of(lo);
  for (size_t node = block + leaves_; node >= 1; node /= 2) out.append(cover_[node].runs());
  for (int32_t e = edge_starts_[block]; e < edge_starts_[block + 1]; ++e) {
    const EdgeEntry& entry = edges_[static_cast<size_t>(e)];
    if (entry.lo <= lo && lo <= entry.hi) append_group(entry.group, out);
  }
  // Step 2. Starting in (lo, hi]: directly for short ranges, else whole blocks from the tree.
  if (lo == hi) return;
  const size_t last_block = block_of(hi);
  if (last_block <= block + 1) {
    append_starting(lo + 1, hi, out);
    return;
  }
  append_starting(lo + 1, block_last(block), out);
  for (size_t left = block + 1 + leaves_, right = last_block + leaves_; left < right;
       left /= 2, right /= 2) {
    if (left & 1) {
      const std::vector<AddressRun>& runs = fresh_starts(left++).runs();
      out.append(runs);
    }
    if (right & 1) {
      const std::vector<AddressRun>& runs = fresh_starts(--right).runs();
      out.append(runs);
    }
  }
  append_starting(block_first(last_block), hi, out);
}

inline const AddressRuns& PlacedByTime::fresh_starts(size_t node) {
  AddressRuns& runs = starts_[node];
  if (rebuild_[node]) {
    rebuild_[node] = 0;
    rebuild_starts(node);
    return runs;
  }
  std::vector<AddressRun>& pending = pending_[node];
  if (pending.empty()) return runs;
  std::sort(pending.begin(), pending.end(),
            [](const AddressRun& a, const AddressRun& b) { return a.begin < b.begin; });
  merged_.assign_union(runs.runs(), pending);
  std::swap(runs, merged_);
  pending.clear();
  return runs;
}

// Recomputes starts_[node] from its children (a leaf: from its block's groups).
inline void PlacedByTime::rebuild_starts(size_t node) {
  AddressRuns& runs = starts_[node];
  if (node < leaves_) {
    runs.assign_union(fresh_starts(2 * node).runs(), fresh_starts(2 * node + 1).runs());
    return;
  }
  const size_t block = node - leaves_;
  scratch_.clear();
  if (block_first(block) < static_cast<int32_t>(steps_)) {
    append_starting(block_first(block), block_last(block), scratch_);
  }
  runs.clear();
  for (const AddressRun& run : scratch_.sorted()) runs.append_merging(run);
}

inline std::vector<int64_t> distinct_steps(std::span<const UsageRecord> records) {
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

inline int32_t step_index(const std::vector<int64_t>& steps, int64_t step) {
  return static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
}

// Smallest gap of at least `bytes` between the runs, sorted by begin (runs may overlap), lowest
// offset on ties; or the end of the highest run when no gap fits.
inline size_t best_fit_offset(const std::vector<AddressRun>& runs, size_t bytes) {
  size_t cursor = 0;
  size_t best_offset = 0;
  size_t best_gap = std::numeric_limits<size_t>::max();
  for (const AddressRun& run : runs) {
    if (run.begin > cursor) {
      const size_t gap = run.begin - cursor;
      if (gap >= bytes && gap < best_gap) {
        best_gap = gap;
        best_offset = cursor;
        if (gap == bytes) return best_offset;  // a perfect fit: no smaller gap exists
      }
    }
    cursor = std::max(cursor, run.end);
  }
  return best_gap != std::numeric_limits<size_t>::max() ? best_offset : cursor;
}

}  // namespace reference_detail

inline Placement reference_place_greedy_in_order(std::span<const UsageRecord> records,
                                                 std::span<const int32_t> order) {
  // Step 1. Compress steps so the index size depends on the record count, not on step values.
  // Lifetimes are looked up in record order (records usually come in step order, so the
  // searches stay in cache), then gathered in placement order.
  const std::vector<int64_t> steps = reference_detail::distinct_steps(records);
  std::vector<std::pair<int32_t, int32_t>> lifetimes(records.size(), {0, 0});
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    lifetimes[i] = {reference_detail::step_index(steps, records[i].first),
                    reference_detail::step_index(steps, records[i].last)};
  }
  struct Next {
    int32_t index;
    size_t bytes;
  };
  std::vector<Next> next;
  std::vector<std::pair<int32_t, int32_t>> ordered_lifetimes;
  next.reserve(order.size());
  ordered_lifetimes.reserve(order.size());
  for (int32_t index : order) {
    const size_t bytes = records[static_cast<size_t>(index)].bytes;
    if (bytes == 0) continue;
    next.push_back({index, bytes});
    ordered_lifetimes.push_back(lifetimes[static_cast<size_t>(index)]);
  }
  std::vector<int32_t> group_of;
  reference_detail::PlacedByTime placed(ordered_lifetimes, steps.size(), group_of);
  // Step 2. Place each record at the best gap among the placed records it overlaps in time.
  Placement placement;
  placement.offsets.assign(records.size(), 0);
  reference_detail::RunCollector runs;
  for (size_t k = 0; k < next.size(); ++k) {
    runs.clear();
    placed.collect(group_of[k], runs);
    const size_t offset = reference_detail::best_fit_offset(runs.sorted(), next[k].bytes);
    placement.offsets[static_cast<size_t>(next[k].index)] = offset;
    placement.pool_bytes = std::max(placement.pool_bytes, offset + next[k].bytes);
    placed.insert(group_of[k], reference_detail::AddressRun{offset, offset + next[k].bytes});
  }
  return placement;
}

// size_order() as it was: a comparator sort (bytes descending, longer lifetime first, lower
// first step first, lower index first).
inline std::vector<int32_t> reference_size_order(std::span<const UsageRecord> records) {
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

}  // namespace onepool::testing
