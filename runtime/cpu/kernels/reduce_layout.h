// Reduce* shape analysis, done once at prepare time.
//
// The input dims are simplified first: size-1 dims are dropped and adjacent dims that are all
// kept or all reduced are merged (merging is exact because the tensor is row-major). What is left
// picks the loop:
//   kInner   [kept K][reduced R]        each output folds R contiguous inputs (LayerNorm-like
//                                        mean over the last dim; "reduce all" is K = 1)
//   kColumn  [kept O][reduced R][kept I] each output row of I accumulates R input rows
//   kGeneral anything else               per output: kept offset + odometer over reduced dims
//   kCopy    noop_with_empty_axes with no axes: output = input
// e.g. [2,3,4] over axes {1}: kColumn O=2 R=3 I=4; over {1,2}: kInner K=2 R=12; over {0,2}:
// kGeneral with kept {3 @ stride 4} and reduced {2 @ 12, 4 @ 1}.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace onepool::cpu {

enum class ReducePath : uint8_t { kInner, kColumn, kGeneral, kCopy };

/// Dims and element strides of one group of axes (kept or reduced), outermost first.
struct AxisGroup {
  int rank = 0;
  std::array<int64_t, Shape::kMaxRank> dims{};
  std::array<int64_t, Shape::kMaxRank> strides{};
};

struct ReduceLayout {
  ReducePath path = ReducePath::kInner;
  Shape output_shape;
  int64_t output_count = 0;  // kept elements
  int64_t reduce_count = 1;  // inputs folded into each output
  int64_t outer = 1;         // kInner: K; kColumn: O
  int64_t inner = 1;         // kColumn: I
  AxisGroup kept;            // kGeneral
  AxisGroup reduced;         // kGeneral
};

/// Reads the axes (attribute `axes`, or input 1 which must be a constant), normalizes negative
/// axes, applies keepdims and noop_with_empty_axes, checks the declared output shape, and plans
/// the loop. Errors name the node, the input and the offending axis or shape.
Expected<ReduceLayout> plan_reduce(const NodeContext& node);

/// Normalizes `axis` (may be negative) against `rank`; kInvalidModel naming the node if outside.
Expected<int> normalize_axis(const NodeContext& node, int64_t axis, int rank);

/// Fails (kInvalidModel) unless the node's output 0 is declared with `expected`.
Status check_output_shape(const NodeContext& node, const Shape& expected);

/// [outer, axis dim, inner] around one axis of a shape: the layout of ArgMax and Softmax.
struct AxisSplit {
  int64_t outer = 1;
  int64_t dim = 1;
  int64_t inner = 1;
};
/// Splits input 0's shape at `axis`. With `flatten`, dim is the product of dims [axis, rank) and
/// inner is 1 (Softmax before opset 13). kOutOfRange when a product overflows.
Expected<AxisSplit> split_at_axis(const NodeContext& node, int axis, bool flatten);

}  // namespace onepool::cpu
