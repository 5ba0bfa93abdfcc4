// Placing a shape of a model with a plan made at another shape: reusing the top-of-range plan's
// offsets (static pool), or evaluating a symbolic plan (any shape with the same structure).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "onepool/plan.h"
#include "onepool/status.h"
#include "planner/analysis/build_plan.h"
#include "planner/analysis/symbolic_plan.h"
#include "planner/core/graph.h"

namespace onepool {

/// A plan for `graph` (the model loaded at a smaller shape) that keeps every offset of `top`
/// (the plan at the top of the range): no placement runs. Matches tensors by name and
/// workspaces by node. Fails, naming the tensor, when the graphs differ in structure or
/// execution order, when a tensor (or a kernel's workspace in `needs`) is larger than its slot
/// in `top`, or when storage sharing (views, in place, Concat in place) differs at this shape.
/// The result is verified: slots only shrink, so no two live tensors can overlap.
Expected<Plan> reuse_top_plan(const Plan& top, const Graph& graph, const NodeMemoryNeeds& needs);

/// A plan placed once (by the placement algorithms) and the structure of its placement
/// (planner/analysis/symbolic_plan.h), with its tensors indexed for matching another shape's.
/// Immutable.
struct SymbolicSource {
  Plan plan;
  SymbolicPlan symbolic;
  std::unordered_map<std::string, int32_t> value_tensor;  // name → index in plan.tensors
  std::vector<int32_t> workspace_tensor;                  // step → index in plan.tensors, or -1

  /// Errors: the plan has too many pairs of tensors live at a common step (SymbolicPlan).
  static Expected<SymbolicSource> create(Plan plan);
};

/// A plan for `graph` (the model loaded at another shape) with the source's structure and this
/// shape's sizes: sizes come from shape inference of this shape (liveness of `graph`), offsets
/// from evaluating the source's symbolic plan; no placement runs. Fails, naming the tensor, when
/// the structure differs: other nodes or order, a tensor or workspace missing or added, a
/// lifetime outside the source's, or storage sharing that differs at this shape. The caller
/// then places this shape on its own. The result is verified.
Expected<Plan> place_symbolically(const SymbolicSource& source, const Graph& graph,
                                  const NodeMemoryNeeds& needs);

}  // namespace onepool
