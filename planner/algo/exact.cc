// `exact`: branch and bound over canonical placements (after MiniMalloc, Moffitt 2023).
//
// Canonical placements: sort any valid placement by offset and drop each record, in that order,
// onto the records already placed that share a step with it (its "skyline"). No record moves up,
// so the pool does not grow: some optimum is a sequence of skyline drops with nondecreasing
// offsets. The search enumerates exactly those sequences:
//  - a record may be placed next only at its skyline height h, and only if h is at least the
//    offset L of the record placed last; records at the same offset never share a step, so their
//    order is fixed by index (symmetry breaking), and identical records (same lifetime and size)
//    are placed in index order;
//  - candidates are tried lowest skyline first, then largest first;
//  - a node is pruned when its bound reaches the best pool found so far (the greedy incumbent to
//    begin with). Bound: every unplaced record lands at or above max(L, its skyline), and the
//    unplaced records live at a step stack above max(L, that step's skyline).
// The search stops at the budget (wall clock, checked every 256 nodes) or when the bound of the
// root is reached; it proves optimality when it finishes. Exponential in the worst case: meant
// for instances of up to a few hundred records.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "planner/algo/algorithms.h"
#include "planner/algo/orders.h"

namespace onepool {
namespace {

using Clock = std::chrono::steady_clock;

struct Item {
  size_t lo;      // first section (compressed step)
  size_t hi;      // last section
  size_t bytes;   // > 0
  size_t record;  // index in the caller's records
  int32_t twin;   // previous item with the same lifetime and size, or -1
};

class ExactSearch {
 public:
  ExactSearch(std::span<const UsageRecord> records, Clock::time_point deadline, uint64_t max_nodes);

  // Searches for a pool below `best_pool` (the incumbent). Returns true when it found one;
  // `proven` says whether the search finished before the deadline.
  bool run(size_t best_pool);
  size_t best_pool() const { return best_pool_; }
  const std::vector<size_t>& best_offsets() const { return best_offsets_; }
  bool proven() const { return proven_; }

 private:
  void search(size_t level, size_t pool, int32_t last);
  size_t bound(size_t level, size_t pool) const;
  void place(int32_t item, size_t offset);
  void unplace(int32_t item);
  bool out_of_time();

  std::span<const UsageRecord> records_;
  Clock::time_point deadline_;
  uint64_t max_nodes_ = 0;  // 0: no limit
  std::vector<Item> items_;
  std::vector<std::vector<int32_t>> overlaps_;  // items sharing a step
  std::vector<size_t> skyline_;                 // per item: top of the placed overlapping items
  std::vector<size_t> offset_;                  // per item, while placed
  std::vector<uint8_t> placed_;
  std::vector<size_t> floor_;      // per section: top of the placed items live there
  std::vector<size_t> remaining_;  // per section: bytes of unplaced items live there
  std::vector<size_t> undo_;       // saved skylines and floors, restored on backtrack
  std::vector<size_t> best_offsets_;
  size_t best_pool_ = 0;
  size_t root_bound_ = 0;
  bool improved_ = false;
  bool proven_ = true;
  uint64_t nodes_ = 0;
};

ExactSearch::ExactSearch(std::span<const UsageRecord> records, Clock::time_point deadline,
                         uint64_t max_nodes)
    : records_(records), deadline_(deadline), max_nodes_(max_nodes) {
  // Step 1. Items in a fixed order (largest first) with sections from the distinct steps.
  std::vector<int64_t> steps;
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    steps.push_back(record.first);
    steps.push_back(record.last);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto section = [&](int64_t step) {
    return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  for (int32_t index : size_order(records)) {
    const UsageRecord& record = records[static_cast<size_t>(index)];
    items_.push_back({section(record.first), section(record.last), record.bytes,
                      static_cast<size_t>(index), -1});
  }
  const size_t count = items_.size();
  // Step 2. Time overlaps and twins (identical lifetime and size: interchangeable).
  overlaps_.resize(count);
  for (size_t a = 0; a < count; ++a) {
    for (size_t b = 0; b < count; ++b) {
      if (a == b || items_[a].hi < items_[b].lo || items_[b].hi < items_[a].lo) continue;
      overlaps_[a].push_back(static_cast<int32_t>(b));
      const bool twin = items_[a].lo == items_[b].lo && items_[a].hi == items_[b].hi &&
                        items_[a].bytes == items_[b].bytes;
      if (twin && b < a) items_[a].twin = static_cast<int32_t>(b);
    }
  }
  skyline_.assign(count, 0);
  offset_.assign(count, 0);
  placed_.assign(count, 0);
  floor_.assign(steps.size(), 0);
  remaining_.assign(steps.size(), 0);
  for (const Item& item : items_) {
    for (size_t s = item.lo; s <= item.hi; ++s) remaining_[s] += item.bytes;
  }
}

bool ExactSearch::out_of_time() {
  if (!proven_) return true;
  ++nodes_;
  if (max_nodes_ != 0 && nodes_ > max_nodes_) proven_ = false;
  if (nodes_ % 256 == 0 && Clock::now() >= deadline_) proven_ = false;
  return !proven_;
}

size_t ExactSearch::bound(size_t level, size_t pool) const {
  size_t result = pool;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (!placed_[i]) result = std::max(result, std::max(skyline_[i], level) + items_[i].bytes);
  }
  for (size_t s = 0; s < floor_.size(); ++s) {
    if (remaining_[s] > 0) result = std::max(result, std::max(floor_[s], level) + remaining_[s]);
  }
  return result;
}

void ExactSearch::place(int32_t item_index, size_t offset) {
  const Item& item = items_[static_cast<size_t>(item_index)];
  const size_t top = offset + item.bytes;
  placed_[static_cast<size_t>(item_index)] = 1;
  offset_[static_cast<size_t>(item_index)] = offset;
  for (int32_t other : overlaps_[static_cast<size_t>(item_index)]) {
    undo_.push_back(skyline_[static_cast<size_t>(other)]);
    skyline_[static_cast<size_t>(other)] = std::max(skyline_[static_cast<size_t>(other)], top);
  }
  for (size_t s = item.lo; s <= item.hi; ++s) {
    undo_.push_back(floor_[s]);
    floor_[s] = std::max(floor_[s], top);
    remaining_[s] -= item.bytes;
  }
}

void ExactSearch::unplace(int32_t item_index) {
  const Item& item = items_[static_cast<size_t>(item_index)];
  for (size_t s = item.hi + 1; s-- > item.lo;) {
    floor_[s] = undo_.back();
    undo_.pop_back();
    remaining_[s] += item.bytes;
  }
  const auto& others = overlaps_[static_cast<size_t>(item_index)];
  for (size_t k = others.size(); k-- > 0;) {
    skyline_[static_cast<size_t>(others[k])] = undo_.back();
    undo_.pop_back();
  }
  placed_[static_cast<size_t>(item_index)] = 0;
}

// `level`: offset of the last placed item (L); `last`: that item, or -1 at the root.
void ExactSearch::search(size_t level, size_t pool, int32_t last) {
  if (out_of_time()) return;
  // Step 1. All placed: a better pool (the bound check below guarantees it).
  std::vector<int32_t> candidates;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (placed_[i]) continue;
    const size_t height = skyline_[i];
    if (height < level) continue;  // placed later, once something below raises it
    if (height == level && static_cast<int32_t>(i) < last) continue;  // same-offset symmetry
    const int32_t twin = items_[i].twin;
    if (twin >= 0 && !placed_[static_cast<size_t>(twin)]) continue;  // twins in index order
    candidates.push_back(static_cast<int32_t>(i));
  }
  if (candidates.empty()) {
    bool all_placed = true;
    for (uint8_t p : placed_) all_placed = all_placed && p != 0;
    if (!all_placed || pool >= best_pool_) return;
    best_pool_ = pool;
    improved_ = true;
    for (size_t i = 0; i < items_.size(); ++i) best_offsets_[items_[i].record] = offset_[i];
    return;
  }
  // Step 2. Lowest skyline first, then largest (items are sorted largest first).
  std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
    return skyline_[static_cast<size_t>(a)] < skyline_[static_cast<size_t>(b)];
  });
  for (int32_t candidate : candidates) {
    // Nothing beats a pool at the root's bound; the clock is checked per candidate, as
    // candidates can be pruned without entering search().
    if (best_pool_ <= root_bound_ || out_of_time()) return;
    const size_t offset = skyline_[static_cast<size_t>(candidate)];
    const size_t new_pool = std::max(pool, offset + items_[static_cast<size_t>(candidate)].bytes);
    if (new_pool >= best_pool_) continue;
    place(candidate, offset);
    if (bound(offset, new_pool) < best_pool_) search(offset, new_pool, candidate);
    unplace(candidate);
  }
}

bool ExactSearch::run(size_t best_pool) {
  best_pool_ = best_pool;
  best_offsets_.assign(records_.size(), 0);
  root_bound_ = bound(0, 0);
  if (root_bound_ < best_pool_) search(0, 0, -1);
  return improved_;
}

}  // namespace

ExactOutcome search_exact(std::span<const UsageRecord> records, size_t incumbent_pool,
                          double budget_ms, uint64_t max_nodes) {
  const auto budget = std::chrono::duration<double, std::milli>(std::max(0.0, budget_ms));
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(budget);
  ExactSearch search(records, deadline, max_nodes);
  ExactOutcome outcome;
  outcome.improved = search.run(incumbent_pool);
  outcome.proven_optimal = search.proven();
  if (outcome.improved) {
    outcome.placement.offsets = search.best_offsets();
    outcome.placement.pool_bytes = search.best_pool();
  }
  return outcome;
}

}  // namespace onepool
