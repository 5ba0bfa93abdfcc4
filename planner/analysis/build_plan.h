// Graph → Plan: liveness (usage records), placement by the chosen algorithm, verification.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "planner/algo/algorithms.h"
#include "planner/analysis/node_memory_needs.h"
#include "planner/core/graph.h"

namespace onepool {

/// Plans every non-weight value of `graph` (graph inputs live from step 0, graph outputs to the
/// last step) plus each node's workspace as a one-step record, then verifies the result.
/// External graph inputs and outputs (PlanOptions::external_*) get no record: they appear as
/// tensors with `external` set, share storage with nothing, and take no pool bytes.
/// With options.aliasing, values share storage where `needs.aliasing` allows it; several
/// selections of sharing are placed and the smallest pool is kept (ties: more sharing), so the
/// pool never exceeds the plain one (plain_pool_bytes).
Expected<Plan> build_plan(const Graph& graph, const PlanOptions& options,
                          const NodeMemoryNeeds& needs = {});

/// Plans bare usage records (a `--records` CSV, a benchmark instance): tensor i has id i and is
/// named `names[i]` ("i" when `names` is empty). Sizes are rounded up to the alignment first.
/// The plan has no steps; its tensors have no dtype or shape and producer_op "record".
Expected<Plan> build_plan_from_records(std::span<const UsageRecord> records,
                                       std::span<const std::string> names,
                                       const PlanOptions& options);

}  // namespace onepool
