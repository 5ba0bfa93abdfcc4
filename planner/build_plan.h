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

/// Which storage sharing a node's kernel honours (see planner/alias.h for when the planner
/// uses it).
struct NodeAliasing {
  /// The inputs whose bytes the kernel may overwrite with output 0 (same byte count): bit k for
  /// input k.
  uint32_t in_place_inputs = 0;
  /// Output 0, larger than input 0, may take over input 0's bytes from their start and extend
  /// past them (constant Pad written in place).
  bool in_place_grows = false;
  /// Output 0 may share input 0's bytes: the kernel skips its copy when the addresses match.
  bool output_is_view = false;
  /// Concat: the kernel skips every input whose data already sits at its slice of the output.
  bool concat_in_place = false;
};

/// Per-node facts that come from the backend's kernels.
struct NodeMemoryNeeds {
  std::vector<size_t> workspace_bytes;  // per node (empty: no workspaces)
  /// Per node (empty: none): the scratch a kernel runs faster with. The pool is planned with
  /// workspace_bytes; each workspace then grows towards this size into the free bytes of its
  /// step (planner/workspace_growth.h).
  std::vector<size_t> workspace_preferred_bytes;
  std::vector<NodeAliasing> aliasing;  // per node (empty: no sharing, the plan stays plain)
  /// The plans of graphs nested in nodes (If branches, Loop and Scan bodies), copied into the
  /// Plan: each lies in its node's workspace.
  std::vector<NestedPlan> nested;
};

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
