// The other greedy orders of the portfolio and the portfolio itself. Every order is fed to the
// same best-fit engine (place_greedy_in_order); only the placement order differs.
//   lifetime  : longest lifetime first — long-lived tensors settle at the bottom of the pool
//   area      : bytes × lifetime first — the records that block the most address × time
//   conflicts : most time-overlapping records first (TVM USMP greedy_by_conflicts)
//   portfolio : size, lifetime, area, conflicts; keeps the smallest pool (XLA's "best of"),
//               stopping as soon as one reaches the lower bound; then a bounded local search
//               (min(400, 40000 / n) re-placements) around the best order. Above 2,000 records
//               no local search, above 20,000 greedy by size alone, so the default mode keeps
//               greedy-by-size's speed on huge instances.
// All ties break by size, then first step, then index, so results are deterministic.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

// Records with bytes > 0, ordered by `key` descending, ties by size desc, first asc, index.
template <class Key>
std::vector<int32_t> order_by(std::span<const UsageRecord> records, const Key& key) {
  std::vector<int32_t> order;
  std::vector<double> keys(records.size(), 0.0);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    order.push_back(static_cast<int32_t>(i));
    keys[i] = key(i);
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto ia = static_cast<size_t>(a);
    const auto ib = static_cast<size_t>(b);
    if (keys[ia] != keys[ib]) return keys[ia] > keys[ib];
    if (records[ia].bytes != records[ib].bytes) return records[ia].bytes > records[ib].bytes;
    if (records[ia].first != records[ib].first) return records[ia].first < records[ib].first;
    return a < b;
  });
  return order;
}

double lifetime(const UsageRecord& record) {
  return static_cast<double>(record.last - record.first + 1);
}

// Number of other records live at a common step, for every record: O(n log n) by counting
// records that start at or before its last step minus those that end before its first step.
std::vector<double> conflict_counts(std::span<const UsageRecord> records) {
  std::vector<int64_t> firsts;
  std::vector<int64_t> lasts;
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    firsts.push_back(record.first);
    lasts.push_back(record.last);
  }
  std::sort(firsts.begin(), firsts.end());
  std::sort(lasts.begin(), lasts.end());
  std::vector<double> counts(records.size(), 0.0);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    const auto started = std::upper_bound(firsts.begin(), firsts.end(), records[i].last) -
                         firsts.begin();
    const auto ended = std::lower_bound(lasts.begin(), lasts.end(), records[i].first) -
                       lasts.begin();
    counts[i] = static_cast<double>(started - ended - 1);
  }
  return counts;
}

std::vector<int32_t> size_order(std::span<const UsageRecord> records) {
  return order_by(records, [&](size_t i) { return static_cast<double>(records[i].bytes); });
}
std::vector<int32_t> lifetime_order(std::span<const UsageRecord> records) {
  return order_by(records, [&](size_t i) { return lifetime(records[i]); });
}
std::vector<int32_t> area_order(std::span<const UsageRecord> records) {
  return order_by(records, [&](size_t i) {
    return static_cast<double>(records[i].bytes) * lifetime(records[i]);
  });
}
std::vector<int32_t> conflicts_order(std::span<const UsageRecord> records) {
  const std::vector<double> counts = conflict_counts(records);
  return order_by(records, [&](size_t i) { return counts[i]; });
}

}  // namespace

Expected<Placement> place_greedy_by_lifetime(std::span<const UsageRecord> records,
                                             const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, lifetime_order(records));
}

Expected<Placement> place_greedy_by_area(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, area_order(records));
}

Expected<Placement> place_greedy_by_conflicts(std::span<const UsageRecord> records,
                                              const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, conflicts_order(records));
}

namespace {

// Cost bounds of the portfolio: every greedy order costs one O(n log n)-ish placement, the local
// search re-places the whole instance per step. Beyond these sizes only the cheaper stages run.
constexpr size_t kLocalSearchMaxRecords = 2000;
constexpr size_t kAllOrdersMaxRecords = 20000;

// Local search after the greedy orders (TVM USMP's hill climb, made deterministic): perturb the
// best order by moving one record a few places earlier, keep the change when the pool shrinks.
// A fixed iteration count (not a clock) keeps the result reproducible; it scales down with the
// record count so large instances stay fast.
void improve_by_local_search(std::span<const UsageRecord> records, size_t bound,
                             std::vector<int32_t>& order, Placement& best) {
  const size_t count = order.size();
  if (count < 3 || count > kLocalSearchMaxRecords) return;
  const size_t iterations = std::min<size_t>(400, 40000 / count);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (size_t i = 0; i < iterations && best.pool_bytes > bound; ++i) {
    const size_t from = 1 + next() % (count - 1);
    const size_t distance = 1 + next() % std::min<size_t>(from, 8);
    std::vector<int32_t> candidate_order = order;
    std::rotate(candidate_order.begin() + static_cast<std::ptrdiff_t>(from - distance),
                candidate_order.begin() + static_cast<std::ptrdiff_t>(from),
                candidate_order.begin() + static_cast<std::ptrdiff_t>(from + 1));
    Placement candidate = place_greedy_in_order(records, candidate_order);
    if (candidate.pool_bytes < best.pool_bytes) {
      best = std::move(candidate);
      order = std::move(candidate_order);
    }
  }
}

}  // namespace

Expected<Placement> place_portfolio(std::span<const UsageRecord> records,
                                    const AlgorithmOptions& options) {
  // Step 1. Greedy by size (the default member): often optimal already.
  ONEPOOL_ASSIGN_OR_RETURN(Placement best, place_greedy_by_size(records, options));
  const size_t bound = lower_bound_bytes(records);
  if (best.pool_bytes <= bound || records.size() > kAllOrdersMaxRecords) return best;
  // Step 2. The other orders; keep the smallest pool, stop at the lower bound.
  using OrderFn = std::vector<int32_t> (*)(std::span<const UsageRecord>);
  constexpr OrderFn kOrders[] = {&size_order, &lifetime_order, &area_order, &conflicts_order};
  std::vector<int32_t> best_order = size_order(records);
  for (OrderFn order_fn : kOrders) {
    std::vector<int32_t> order = order_fn(records);
    Placement candidate = place_greedy_in_order(records, order);
    if (candidate.pool_bytes < best.pool_bytes) {
      best = std::move(candidate);
      best_order = std::move(order);
    }
    if (best.pool_bytes <= bound) return best;  // provably optimal: nothing can beat it
  }
  // Step 3. Local search around the best order found.
  improve_by_local_search(records, bound, best_order, best);
  return best;
}

}  // namespace onepool
