// FLOP counts from static shapes (see node_flops.h).
#include "runtime/node_flops.h"

#include <algorithm>

#include "planner/core/onepool_ops.h"

namespace onepool {

namespace {

const Shape* shape_of(const Graph& graph, ValueId id) {
  if (id == kNoValue) return nullptr;
  return &graph.values[static_cast<size_t>(id)].shape;
}

double product(const Shape& shape, int first, int last) {
  double result = 1;
  for (int axis = first; axis < last; ++axis) result *= static_cast<double>(shape[axis]);
  return result;
}

// Conv: 2 * N * C_out * output_spatial * (C_in / group) * kernel_spatial; W is [C_out, C_in /
// group, k...], so the last factors are W's element count per output channel.
double conv_flops(const Shape& w, const Shape& y) {
  if (w.rank() < 3 || y.rank() != w.rank()) return 0;
  return 2.0 * product(y, 0, y.rank()) * product(w, 1, w.rank());
}

// ConvTranspose: every input element meets W[c, :, k...] (C_out / group * kernel_spatial).
double conv_transpose_flops(const Shape& x, const Shape& w) {
  if (w.rank() < 3 || x.rank() != w.rank()) return 0;
  return 2.0 * product(x, 0, x.rank()) * product(w, 1, w.rank());
}

// MatMul: 2 * Y elements * K, with K the last dim of A (a 1-D A is [K]).
double matmul_flops(const Shape& a, const Shape& y) {
  if (a.rank() < 1) return 0;
  return 2.0 * product(y, 0, y.rank()) * static_cast<double>(a[a.rank() - 1]);
}

// Gemm: 2 * M * N * K, K from A [M, K] or A^T.
double gemm_flops(const Node& node, const Shape& a, const Shape& y) {
  if (a.rank() != 2) return 0;
  const int64_t k = node.attributes.get_int("transA", 0) != 0 ? a[0] : a[1];
  return 2.0 * product(y, 0, y.rank()) * static_cast<double>(k);
}

// PointwiseDepthwiseConv: the expansion over X's [N, C, H, W] map (2 * N * M * H * W * C, W1 is
// [M, C, 1, 1]; none without W1), the depthwise window over the [N, M, OH, OW] output (2 * N * M
// * OH * OW * kernel_spatial, W2 is [M, 1, k...]) and the projection (2 * N * P * OH * OW * M,
// W3 is [P, M, 1, 1]; none without W3).
double pointwise_depthwise_flops(const Graph& graph, const Node& node, const Shape& x,
                                 const Shape& y) {
  const Shape* w1 = shape_of(graph, node.input(1));
  const Shape* w2 = shape_of(graph, node.input(3));
  const Shape* w3 = shape_of(graph, node.input(5));
  if (x.rank() != 4 || y.rank() != 4 || w2 == nullptr || w2->rank() != 4) return 0;
  const double channels = static_cast<double>((*w2)[0]);
  const double out_positions = product(y, 0, 1) * product(y, 2, 4);
  double flops = 2.0 * out_positions * channels * product(*w2, 2, 4);
  if (w1 != nullptr && w1->rank() == 4) flops += 2.0 * channels * product(x, 0, 4);
  if (w3 != nullptr && w3->rank() == 4) flops += 2.0 * out_positions * product(*w3, 0, 2);
  return flops;
}

}  // namespace

double node_flops(const Graph& graph, const Node& node) {
  const Shape* a = shape_of(graph, node.input(0));
  const Shape* b = shape_of(graph, node.input(1));
  const Shape* y = node.outputs.empty() ? nullptr : shape_of(graph, node.outputs[0]);
  if (node.domain == kOnePoolDomain && node.op_type == kPointwiseDepthwiseOp) {
    return a == nullptr || y == nullptr ? 0 : pointwise_depthwise_flops(graph, node, *a, *y);
  }
  if (a == nullptr || b == nullptr || y == nullptr) return 0;
  if (node.op_type == "Conv") return conv_flops(*b, *y);
  if (node.op_type == "ConvTranspose") return conv_transpose_flops(*a, *b);
  if (node.op_type == "MatMul") return matmul_flops(*a, *y);
  if (node.op_type == "Gemm") return gemm_flops(node, *a, *y);
  return 0;
}

}  // namespace onepool
