// Graph → Plan: liveness (usage records), placement by the chosen algorithm, verification.
#pragma once

#include <cstddef>
#include <vector>

#include "onepool/plan.h"
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

}  // namespace onepool
