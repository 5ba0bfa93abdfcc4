// Reusing a plan made at the top of a shape range for a smaller shape of the same model.
#pragma once

#include "onepool/plan.h"
#include "onepool/status.h"
#include "planner/build_plan.h"
#include "planner/graph.h"

namespace onepool {

/// A plan for `graph` (the model loaded at a smaller shape) that keeps every offset of `top`
/// (the plan at the top of the range): no placement runs. Matches tensors by name and
/// workspaces by node. Fails, naming the tensor, when the graphs differ in structure or
/// execution order, when a tensor (or a kernel's workspace in `needs`) is larger than its slot
/// in `top`, or when storage sharing (views, in place, Concat in place) differs at this shape.
/// The result is verified: slots only shrink, so no two live tensors can overlap.
Expected<Plan> reuse_top_plan(const Plan& top, const Graph& graph, const NodeMemoryNeeds& needs);

}  // namespace onepool
