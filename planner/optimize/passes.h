// The optimizer passes, one per file, run in this order by optimize_graph (optimize.cc).
//
// Each pass takes a Graph with current edges and valid ids (check_graph_ids), rewrites it in
// place, counts what it did in `report`, and leaves the edges current with its removed nodes
// erased. A pass returns an error only for an inconsistent graph (shapes or sizes that disagree);
// optimize_graph then discards the partly rewritten copy.
//
// Cost: each rewrite rebuilds the edges, so a pass is O(rewrites × (nodes + values)); a chain of
// 3000 Conv + Relu blocks optimizes in well under a second (tests/planner/optimize_test.cc).
#pragma once

#include "onepool/status.h"
#include "planner/core/graph.h"
#include "planner/optimize/optimize_report.h"

namespace onepool::graph_opt {

/// all (first, before the float rewrites hide the pattern): DequantizeLinear → Conv / MatMul
/// [→ Relu] → QuantizeLinear becomes QLinearConv / QLinearMatMul where exact (fuse_qdq.cc).
Status fuse_qdq(Graph& graph, OptimizeReport& report);
/// basic: Identity and Dropout (inference, mask unused) removed; consumers read the input.
Status remove_identity_nodes(Graph& graph, OptimizeReport& report);
/// basic: BatchNormalization with constant parameters folded into the preceding Conv or
/// ConvTranspose (new weight tensors; shared ones are never mutated).
Status fold_batchnorms(Graph& graph, OptimizeReport& report);
/// all: a zero-padding Pad read only by a Conv (as X) merged into the Conv's pads.
Status fuse_pads(Graph& graph, OptimizeReport& report);
/// all: Add of a constant per-channel tensor folded into the bias of the producing Conv or
/// ConvTranspose.
Status fuse_conv_bias(Graph& graph, OptimizeReport& report);
/// all: MatMul(A 2-D, W constant [K,N]) + Add(constant [N] or [1,N]) becomes Gemm(A, W, bias).
Status fuse_matmul_add(Graph& graph, OptimizeReport& report);
/// all: the decomposed GELU (erf or tanh form, 5–9 elementwise nodes) becomes one Gelu node
/// with attribute approximate "none" or "tanh".
Status fuse_gelus(Graph& graph, OptimizeReport& report);
Status fuse_residual_adds(Graph& graph, OptimizeReport& report);
/// all: a following activation becomes an epilogue of Conv / ConvTranspose / Gemm / MatMul
/// (attributes documented in runtime/cpu/kernels/activation.h).
Status fuse_activations(Graph& graph, OptimizeReport& report);
/// all (after the activations): a 1x1 Conv read only by a depthwise Conv (and the 1x1 projection
/// reading that, if any) becomes one PointwiseDepthwiseConv node (ai.onepool); the intermediate
/// tensors leave the plan.
Status fuse_pointwise_depthwise(Graph& graph, OptimizeReport& report);

}  // namespace onepool::graph_opt
