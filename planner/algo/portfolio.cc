// The multi-order algorithms: `auto` (the default), `portfolio` and `exact`.
//
//   auto      : greedy by size; unless that reaches the lower bound, greedy by size with first
//               fit (TFLite Micro's gap choice) and greedy by lifetime (the second order of XLA's
//               "best of two") on instances of up to kAutoSecondOrderMaxRecords records, and the
//               other greedy orders (conflicts, breadth, area) on instances of up to
//               kAutoAllOrdersMaxRecords; keeps the smallest pool, so up to
//               kAutoSecondOrderMaxRecords it is never worse than greedy-by-size. Larger
//               instances get one placement: greedy by size with first fit, cut into parts along
//               time above kRecordsPerPart x 2 records (time_parts.cc). Then, on instances of
//               up to kAutoExactMaxRecords still above the lower bound, the exact search limited
//               to kAutoExactMaxNodes search nodes. The record-count and node limits (not a
//               clock) keep it deterministic and within the default mode's speed target: at most
//               three greedy placements on 1,000 records, one on 100,000.
//   portfolio : auto's result, every greedy order, then the exact search on instances of up to
//               kPortfolioExactMaxRecords records (half the time left), then, unless that proved
//               optimality, a local search on the best order (TVM USMP's hill climb, with a fixed
//               move count and seed), all under options.budget_ms.
//   exact     : auto's result (or a better greedy order) as incumbent, then the exact search
//               (exact.cc) for the whole budget.
// Every stage stops as soon as the pool equals the lower bound (provably optimal). Results are
// deterministic unless the budget runs out: the budget is a safety cap, and when it cuts a search
// short the result depends on the machine's speed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "planner/algo/algorithms.h"
#include "planner/algo/orders.h"

namespace onepool {
namespace {

using Clock = std::chrono::steady_clock;
using OrderFn = std::vector<int32_t> (*)(std::span<const UsageRecord>);

constexpr size_t kAutoSecondOrderMaxRecords = 20000;
constexpr size_t kAutoAllOrdersMaxRecords = 512;
constexpr size_t kAutoExactMaxRecords = 400;
constexpr uint64_t kAutoExactMaxNodes = 20000;  // about a millisecond
constexpr size_t kAutoLocalSearchMoves = 200;
constexpr size_t kAutoLocalSearchWork = 20000;  // moves x records: 200 moves up to 100 records
constexpr double kNoTimeLimitMs = 1e12;
constexpr size_t kLocalSearchMaxRecords = 5000;
constexpr size_t kLocalSearchWork = 200000;  // moves x records: ~200 moves on 1,000 records
constexpr size_t kPortfolioExactMaxRecords = 400;
constexpr size_t kExactMaxRecords = 2000;  // the exact search keeps an n x n overlap table

constexpr OrderFn kOtherOrders[] = {&lifetime_order, &conflicts_order, &breadth_order, &area_order};

struct Best {
  Placement placement;
  std::vector<int32_t> order;
  size_t lower_bound = 0;
  bool optimal() const { return placement.pool_bytes <= lower_bound; }
};

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

size_t placed_count(std::span<const UsageRecord> records) {
  return static_cast<size_t>(std::count_if(records.begin(), records.end(),
                                           [](const UsageRecord& r) { return r.bytes > 0; }));
}

// Threads a placement may use: options.threads, 0 meaning one per core.
size_t placement_threads(const AlgorithmOptions& options) {
  if (options.threads > 0) return static_cast<size_t>(options.threads);
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

// Greedy by size, the first incumbent. Large instances, which get this one placement only, take
// first fit: on 100,000 DNN-like records it lands 3% above the lower bound where best fit lands
// 15% above (best fit keeps shaving small gaps off large ones), and it stops at the first gap.
// They are also cut into parts along time (place_greedy_in_time_parts): smaller time indexes,
// and parts that run on several threads with the same result.
Best greedy_by_size_first(std::span<const UsageRecord> records, const AlgorithmOptions& options) {
  Best best;
  best.lower_bound = lower_bound_bytes(records);
  best.order = size_order(records);
  if (placed_count(records) > kAutoSecondOrderMaxRecords) {
    best.placement = place_greedy_in_time_parts(records, best.order, GapChoice::kFirstFit,
                                                placement_threads(options));
    return best;
  }
  best.placement = place_greedy_in_order(records, best.order, GapChoice::kBestFit);
  return best;
}

void try_order(std::span<const UsageRecord> records, std::vector<int32_t> order, Best& best,
               GapChoice choice = GapChoice::kBestFit) {
  Placement candidate = place_greedy_in_order(records, order, choice);
  if (candidate.pool_bytes >= best.placement.pool_bytes) return;
  best.placement = std::move(candidate);
  best.order = std::move(order);
}

// Whether one more greedy placement, taking about `placement_ms` like the first one did, ends
// within the budget: a search stops before it would overrun, not after.
bool time_for_one_more(Clock::time_point start, double budget_ms, double placement_ms) {
  return elapsed_ms(start) + placement_ms <= budget_ms;
}

// Tries the other greedy orders while the pool is above the lower bound and time is left.
void try_other_orders(std::span<const UsageRecord> records, Best& best, Clock::time_point start,
                      double budget_ms, double placement_ms) {
  for (OrderFn order_fn : kOtherOrders) {
    if (best.optimal() || !time_for_one_more(start, budget_ms, placement_ms)) return;
    try_order(records, order_fn(records), best);
  }
}

// Hill climb on the placement order: move one record a few places earlier or swap two records,
// keep the change when the pool shrinks. A fixed seed and move count keep it reproducible.
void improve_by_local_search(std::span<const UsageRecord> records, Best& best,
                             Clock::time_point start, double budget_ms, double placement_ms,
                             size_t max_moves = 1000, size_t work = kLocalSearchWork) {
  const size_t count = best.order.size();
  if (count < 3 || count > kLocalSearchMaxRecords) return;
  const size_t moves = std::min<size_t>(max_moves, work / count);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (size_t move = 0; move < moves && !best.optimal() && !best.placement.proven_optimal; ++move) {
    if (!time_for_one_more(start, budget_ms, placement_ms)) return;
    std::vector<int32_t> order = best.order;
    const size_t from = 1 + next() % (count - 1);
    if (move % 2 == 0) {
      const size_t distance = 1 + next() % std::min<size_t>(from, 8);
      std::rotate(order.begin() + static_cast<std::ptrdiff_t>(from - distance),
                  order.begin() + static_cast<std::ptrdiff_t>(from),
                  order.begin() + static_cast<std::ptrdiff_t>(from + 1));
    } else {
      std::swap(order[from], order[next() % from]);
    }
    try_order(records, std::move(order), best);
  }
}

Placement finish(Best best) {
  best.placement.proven_optimal = best.placement.proven_optimal || best.optimal();
  return std::move(best.placement);
}

// Runs the exact search below the incumbent with `share` of the time left.
void improve_by_exact_search(std::span<const UsageRecord> records, Best& best,
                             Clock::time_point start, double budget_ms, double share) {
  if (best.optimal() || best.placement.proven_optimal) return;
  const double left_ms = (budget_ms - elapsed_ms(start)) * share;
  if (left_ms <= 0) return;
  ExactOutcome outcome = search_exact(records, best.placement.pool_bytes, left_ms);
  if (outcome.improved) best.placement = std::move(outcome.placement);
  best.placement.proven_optimal = outcome.proven_optimal;
}

// auto's stages after greedy by size: the other greedy orders within their record-count limits,
// then the node-limited exact search on small instances still above the lower bound.
void run_auto_stages(std::span<const UsageRecord> records, const AlgorithmOptions& options,
                     Best& best) {
  const size_t count = placed_count(records);
  if (!best.optimal() && count <= kAutoSecondOrderMaxRecords) {
    try_order(records, best.order, best, GapChoice::kFirstFit);
  }
  for (OrderFn order_fn : kOtherOrders) {
    const size_t max_records =
        order_fn == &lifetime_order ? kAutoSecondOrderMaxRecords : kAutoAllOrdersMaxRecords;
    if (best.optimal() || count > max_records) continue;
    try_order(records, order_fn(records), best);
  }
  if (best.optimal() || count > kAutoExactMaxRecords) return;
  // The node limit alone bounds this search (no clock), so auto stays deterministic.
  ExactOutcome outcome =
      search_exact(records, best.placement.pool_bytes, kNoTimeLimitMs, kAutoExactMaxNodes);
  if (outcome.improved) best.placement = std::move(outcome.placement);
  best.placement.proven_optimal = outcome.proven_optimal;
  // A short hill climb on the best greedy order, bounded by its move count alone (no clock):
  // MobileNetV2 with its expansions fused planned 12% above the lower bound at two threads on
  // every greedy order and after the exact search's node limit; the climb reaches the bound.
  improve_by_local_search(records, best, Clock::now(), kNoTimeLimitMs, 0.0, kAutoLocalSearchMoves,
                          kAutoLocalSearchWork);
}

}  // namespace

Expected<Placement> place_auto(std::span<const UsageRecord> records,
                               const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  Best best = greedy_by_size_first(records, options);
  run_auto_stages(records, options, best);
  return finish(std::move(best));
}

Expected<Placement> place_portfolio(std::span<const UsageRecord> records,
                                    const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  const Clock::time_point start = Clock::now();
  // Step 1. What auto finds (so portfolio is never worse), then every other greedy order.
  Best best = greedy_by_size_first(records, options);
  const double placement_ms = elapsed_ms(start);
  run_auto_stages(records, options, best);
  try_other_orders(records, best, start, options.budget_ms, placement_ms);
  // Step 2. The exact search on small instances, with half the time left.
  if (placed_count(records) <= kPortfolioExactMaxRecords) {
    improve_by_exact_search(records, best, start, options.budget_ms, 0.5);
  }
  // Step 3. Local search around the best order found (the exact search may have placed records
  // in no greedy order; the order kept is the best greedy one).
  improve_by_local_search(records, best, start, options.budget_ms, placement_ms);
  return finish(std::move(best));
}

Expected<Placement> place_exact(std::span<const UsageRecord> records,
                                const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  const Clock::time_point start = Clock::now();
  Best best = greedy_by_size_first(records, options);
  const double placement_ms = elapsed_ms(start);
  run_auto_stages(records, options, best);  // auto's result is the first incumbent
  try_other_orders(records, best, start, options.budget_ms, placement_ms);
  if (placed_count(records) <= kExactMaxRecords) {
    improve_by_exact_search(records, best, start, options.budget_ms, 1.0);
  }
  return finish(std::move(best));
}

}  // namespace onepool
