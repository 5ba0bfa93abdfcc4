// Graph → Plan: liveness (usage records), placement by the chosen algorithm, verification.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "planner/algo/algorithms.h"
#include "planner/graph.h"

namespace onepool {

/// Per-node facts that come from the backend's kernels.
struct NodeMemoryNeeds {
  std::vector<size_t> workspace_bytes;  // per node (empty: no workspaces)
};

/// Plans every non-weight value of `graph` (graph inputs live from step 0, graph outputs to the
/// last step) plus each node's workspace as a one-step record, then verifies the result.
Expected<Plan> build_plan(const Graph& graph, const PlanOptions& options,
                          const NodeMemoryNeeds& needs = {});

/// Plans bare usage records (a `--records` CSV, a benchmark instance): tensor i has id i and is
/// named `names[i]` ("i" when `names` is empty). Sizes are rounded up to the alignment first.
/// The plan has no steps; its tensors have no dtype or shape and producer_op "record".
Expected<Plan> build_plan_from_records(std::span<const UsageRecord> records,
                                       std::span<const std::string> names,
                                       const PlanOptions& options);

}  // namespace onepool
