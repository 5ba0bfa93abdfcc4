// Peer placement methods, reimplemented from their published descriptions so that plan_bench
// can print each peer's pool next to ours on the same usage records. Benchmark code only: none
// of this is linked into the product.
//
// Every baseline has the planner's algorithm signature (records in, offsets out) and is checked
// with verify_placement() on every run: a baseline that produced an invalid placement would make
// the comparison meaningless, so run_baseline() turns one into an error.
#pragma once

#include <span>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

struct BaselineInfo {
  const char* name;         // "tflm-greedy"
  const char* description;  // one line: whose method, as published
  PlacementAlgorithm run;
};

/// Every baseline, in the order plan_bench prints them.
std::span<const BaselineInfo> all_baselines();

struct BaselineRun {
  Placement placement;
  double placement_ms = 0.0;  // the baseline alone, without the checks
};

/// Runs `baseline` on `records` and verifies the placement; an invalid one is an error that
/// names the baseline.
Expected<BaselineRun> run_baseline(const BaselineInfo& baseline,
                                   std::span<const UsageRecord> records,
                                   const AlgorithmOptions& options);

}  // namespace onepool::bench
