// Host evaluators for the ops constant folding handles. Each returns the node's outputs, or
// kUnsupported (keep the node), kResourceExhausted (output above the limit, keep the node), or
// another error naming the node when the model itself is wrong. Internal to import.
#pragma once

#include <string>

#include "planner/import_fold_util.h"

namespace onepool {

/// Add, Sub, Mul, Div, Max, Min, Equal, Less, Greater, Where, Neg, Floor, Ceil, Sqrt, Not, Cast.
FoldResult fold_math_op(const FoldContext& context);
/// Gather, Unsqueeze, Squeeze, Concat, Identity, Reshape, Expand.
FoldResult fold_layout_op(const FoldContext& context);
/// Slice, ConstantOfShape, Range, ReduceProd.
FoldResult fold_generator_op(const FoldContext& context);
/// True when one of the evaluators above handles `op_type` (default domain).
bool is_foldable_op(const std::string& op_type);

}  // namespace onepool
