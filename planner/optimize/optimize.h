// Graph optimizations at load, before planning (ONNX Runtime's levels are the anchor).
//   none  : the graph as imported
//   basic : Identity and Dropout removed; BatchNormalization folded into the preceding Conv
//   all   : basic + bias and activation epilogues fused into Conv / ConvTranspose / Gemm /
//           MatMul (see runtime/cpu/kernels/activation.h for the attribute contract); the
//           decomposed GELU (erf or tanh form) fused into one Gelu node; int8 QDQ patterns
//           (DequantizeLinear → Conv / MatMul → QuantizeLinear) made QLinearConv / QLinearMatMul;
//           a 1x1 Conv, the depthwise Conv reading it and the 1x1 projection after that made
//           one PointwiseDepthwiseConv (domain ai.onepool), whose intermediates are never stored
// Outputs must not change beyond float rounding (the QDQ fusion rounds once where the float graph
// rounded every product, so an int8 output can move by one step, to what ONNX Runtime gives).
// Fewer tensors also means a smaller plan.
#pragma once

#include <string>

#include "onepool/status.h"
#include "planner/core/graph.h"
#include "planner/optimize/optimize_report.h"

namespace onepool {

/// Rewrites `graph` in place. On error the graph is unchanged. Runs after import (static shapes,
/// constants are weights) and before planning. Removed nodes disappear from `graph.nodes` (the
/// others keep their order); values and weights no longer referenced are dropped and the ids
/// renumbered densely (compact_graph), so the planner sees no dead tensor.
Expected<OptimizeReport> optimize_graph(Graph& graph, OptimizeLevel level);

/// Drops the values no node, graph input or graph output references and the weights no kept value
/// uses, renumbers value ids and weight indices densely (old order kept, graph inputs and outputs
/// in their order), and rebuilds the edges. Every id in `graph` must be in range.
void compact_graph(Graph& graph);

}  // namespace onepool
