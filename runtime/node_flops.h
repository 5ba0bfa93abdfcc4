// Floating-point operations of one node, for the profiler's GFLOP/s column.
#pragma once

#include "planner/core/graph.h"

namespace onepool {

/// Multiply-adds counted as two operations, from the node's static shapes: Conv,
/// ConvTranspose, MatMul, Gemm and PointwiseDepthwiseConv (bias and fused activations not
/// counted). 0 for any other op or a shape the count does not understand.
double node_flops(const Graph& graph, const Node& node);

}  // namespace onepool
