// Placement algorithms: usage records in, offsets out. They know nothing of graphs.
//
// Every algorithm has the same signature, is deterministic (fixed tie-breaks), and is selectable
// by name. Records are `(first, last, bytes)` with first/last inclusive steps and bytes already a
// multiple of the alignment; an algorithm returns one offset per record (a multiple of the
// alignment) such that no two records live at a common step overlap in address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "onepool/status.h"

namespace onepool {

struct UsageRecord {
  int64_t first = 0;  // first step live (inclusive)
  int64_t last = 0;   // last step live (inclusive)
  size_t bytes = 0;   // multiple of the alignment; 0 records get offset 0 and are ignored
};

struct Placement {
  std::vector<size_t> offsets;  // one per record, same order
  size_t pool_bytes = 0;        // max(offset + bytes)
  bool proven_optimal = false;  // no placement has a smaller pool (e.g. pool == lower bound)
};

struct AlgorithmOptions {
  size_t alignment = 256;
  double budget_ms = 100.0;  // for searches that run under a time budget
  // Threads a large instance's placement may use (0: one per core). The placement is the same
  // for every value (see place_greedy_in_time_parts).
  int threads = 1;
};

using PlacementAlgorithm = Expected<Placement> (*)(std::span<const UsageRecord> records,
                                                   const AlgorithmOptions& options);

struct AlgorithmInfo {
  const char* name;         // "greedy-by-size"
  const char* description;  // one line for --help
  PlacementAlgorithm run;
};

/// Every algorithm, the default first.
std::span<const AlgorithmInfo> all_algorithms();
/// The algorithm named `name`, or an error listing the valid names.
Expected<const AlgorithmInfo*> find_algorithm(const std::string& name);

/// Max over steps of the bytes live at that step: no placement can be smaller. O(n log n).
size_t lower_bound_bytes(std::span<const UsageRecord> records);
/// Sum of all record bytes (no reuse).
size_t naive_bytes(std::span<const UsageRecord> records);
/// Checks a placement: aligned, inside pool_bytes, no overlap in time and address. O(n log n).
Status verify_placement(std::span<const UsageRecord> records, const Placement& placement,
                        size_t alignment);
/// Same, naming records with `describe(index)` in the message (e.g. the tensor name).
using RecordDescriber = std::function<std::string(size_t index)>;
Status verify_placement(std::span<const UsageRecord> records, const Placement& placement,
                        size_t alignment, const RecordDescriber& describe);

/// Checks what every algorithm requires of its input: alignment a power of two, first <= last,
/// every size a multiple of the alignment, and the sum of all sizes representable in size_t.
Status check_records(std::span<const UsageRecord> records, size_t alignment);

/// The placement algorithms (one .cc each); reach them by name through find_algorithm().
Expected<Placement> place_linear(std::span<const UsageRecord> records,
                                 const AlgorithmOptions& options);
Expected<Placement> place_greedy_by_size(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options);

/// Which gap a greedy placement takes among those that fit: the smallest (lowest offset on ties)
/// or the lowest (TFLite Micro's first fit). Neither wins always: first fit keeps the low
/// addresses dense, best fit keeps large gaps whole.
enum class GapChoice : uint8_t { kBestFit, kFirstFit };

/// Greedy placement of the records in the given order (the engine of every greedy variant):
/// each record goes to the smallest (best fit) or lowest (first fit) gap that fits among the
/// already placed records that overlap it in time; on top of the highest when none fits. Records
/// of 0 bytes keep offset 0.
Placement place_greedy_in_order(std::span<const UsageRecord> records,
                                std::span<const int32_t> order,
                                GapChoice choice = GapChoice::kBestFit);
/// The parts place_greedy_in_time_parts() cuts an instance of `placed_records` records into.
size_t time_part_count(size_t placed_records);
/// place_greedy_in_order() on a large instance, cut along time into time_part_count() parts:
/// the records live across a cut first (in `order`), then each part's own records (in `order`),
/// the parts on up to `threads` threads. Same offsets for every thread count; on instances too
/// small to cut, exactly place_greedy_in_order().
Placement place_greedy_in_time_parts(std::span<const UsageRecord> records,
                                     std::span<const int32_t> order, GapChoice choice,
                                     size_t threads);
/// Greedy by size with first fit (largest first, lowest gap that fits).
Expected<Placement> place_greedy_by_size_first_fit(std::span<const UsageRecord> records,
                                                   const AlgorithmOptions& options);
/// Greedy best fit, longest lifetime first (ties: larger first).
Expected<Placement> place_greedy_by_lifetime(std::span<const UsageRecord> records,
                                             const AlgorithmOptions& options);
/// Greedy best fit, largest area (bytes × lifetime) first.
Expected<Placement> place_greedy_by_area(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options);
/// Greedy best fit, most conflicts (records live at a common step) first (TVM USMP's order).
Expected<Placement> place_greedy_by_conflicts(std::span<const UsageRecord> records,
                                              const AlgorithmOptions& options);
/// Greedy best fit, Pisarchyk & Lee's greedy by breadth: widest step first, its records largest
/// first.
Expected<Placement> place_greedy_by_breadth(std::span<const UsageRecord> records,
                                            const AlgorithmOptions& options);
/// The default: greedy by size, then (small instances only) the other greedy orders, a
/// node-limited exact search and a move-limited hill climb on the placement order; keeps the
/// smallest pool and stops at the lower bound. Deterministic (no clock); fast enough for every
/// plan.
Expected<Placement> place_auto(std::span<const UsageRecord> records,
                               const AlgorithmOptions& options);
/// Every greedy order, a local search over the placement order and the exact search (small
/// instances), under options.budget_ms; keeps the smallest pool, stops at the lower bound.
Expected<Placement> place_portfolio(std::span<const UsageRecord> records,
                                    const AlgorithmOptions& options);
/// Branch and bound over canonical placements from the best greedy incumbent, under
/// options.budget_ms; proven_optimal tells whether it finished.
Expected<Placement> place_exact(std::span<const UsageRecord> records,
                                const AlgorithmOptions& options);

/// What search_exact() found: a placement with a pool below the incumbent (when improved), and
/// whether the search finished, proving that no pool below the best one exists.
struct ExactOutcome {
  bool improved = false;
  bool proven_optimal = false;
  Placement placement;  // set when improved
};
/// The exact search itself, below `incumbent_pool`, for at most `budget_ms` of wall clock and,
/// when `max_nodes` > 0, at most that many search nodes (a limit that keeps the result
/// independent of the machine's speed). Records must have passed check_records(); O(n^2)
/// memory, exponential time in the worst case.
ExactOutcome search_exact(std::span<const UsageRecord> records, size_t incumbent_pool,
                          double budget_ms, uint64_t max_nodes = 0);

}  // namespace onepool
