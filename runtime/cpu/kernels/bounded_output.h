// Checks shared by the kernels whose outputs have data-dependent size (NonZero, Compress, Unique,
// NonMaxSuppression, and the readers of such tensors): the output views carry the planned
// bound, run() reports each actual shape in RunContext::output_shapes.
#pragma once

#include <string>

#include "runtime/cpu/kernel.h"

namespace onepool::cpu {

/// kOutOfRange unless `actual` fits inside `bound` dim by dim (same rank), naming the node, the
/// output and both shapes: the kernel then writes nothing past the planned region.
inline Status check_within_bound(const std::string& node, const std::string& output,
                                 const Shape& bound, const Shape& actual) {
  bool fits = bound.rank() == actual.rank();
  for (int axis = 0; fits && axis < actual.rank(); ++axis) fits = actual[axis] <= bound[axis];
  if (fits) return Status::ok();
  return make_status(StatusCode::kOutOfRange, node, ": output '", output, "': the actual shape ",
                     actual.to_string(), " does not fit the planned bound ", bound.to_string());
}

/// kInternal when a data-dependent kernel runs without RunContext::output_shapes.
inline Status require_output_shapes(const RunContext& context, const std::string& node) {
  if (context.output_shapes != nullptr) return Status::ok();
  return make_status(StatusCode::kInternal, node,
                     ": run without RunContext::output_shapes (a data-dependent kernel)");
}

}  // namespace onepool::cpu
