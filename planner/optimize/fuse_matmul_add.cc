// Pass: MatMul(A, W) + Add(bias) → Gemm(A, W, bias).
//
// Only when A is 2-D [M, K], W a float32 constant [K, N], bias a float32 constant [N] or [1, N]
// (Gemm's C broadcasts it over the rows), and the MatMul output feeds only the Add. Batched
// MatMul (A of rank 3+) stays as it is: Gemm is 2-D only.
#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

bool is_row_bias(const HostTensor* bias, int64_t n) {
  if (bias == nullptr || bias->dtype != DType::kFloat32) return false;
  if (bias->shape.rank() == 1) return bias->shape[0] == n;
  return bias->shape.rank() == 2 && bias->shape[0] == 1 && bias->shape[1] == n;
}

// The MatMul that Add node `add_id` can absorb through its input `side`, else nullptr.
Node* fusable_matmul(Graph& graph, NodeId add_id, size_t side) {
  const Node& add = graph.nodes[static_cast<size_t>(add_id)];
  const ValueId x = add.inputs[side];
  if (!only_feeds(graph, x, add_id)) return nullptr;
  Node* matmul = producer_of(graph, x);
  if (matmul == nullptr || !is_op(*matmul, "MatMul") || matmul->inputs.size() != 2) return nullptr;
  if (has_fused_activation(*matmul) || matmul->outputs.size() != 1) return nullptr;
  if (matmul->inputs[0] == kNoValue) return nullptr;
  const HostTensor* w = weight_of(graph, matmul->inputs[1]);
  if (w == nullptr || w->dtype != DType::kFloat32 || w->shape.rank() != 2) return nullptr;
  const Value& a = value_at(graph, matmul->inputs[0]);
  const Value& out = value_at(graph, x);
  if (a.dtype != DType::kFloat32 || a.shape.rank() != 2 || out.shape.rank() != 2) return nullptr;
  if (!is_row_bias(weight_of(graph, add.inputs[1 - side]), w->shape[1])) return nullptr;
  if (!(value_at(graph, add.outputs[0]).shape == out.shape)) return nullptr;
  return matmul;
}

void turn_into_gemm(Node& matmul, ValueId bias, ValueId output) {
  matmul.op_type = "Gemm";
  matmul.inputs.push_back(bias);
  matmul.outputs[0] = output;
  matmul.attributes.set("alpha", float_attribute(1.0f));
  matmul.attributes.set("beta", float_attribute(1.0f));
  matmul.attributes.set("transA", int_attribute(0));
  matmul.attributes.set("transB", int_attribute(0));
}

bool fuse_one(Graph& graph, NodeId add_id) {
  const Node& add = graph.nodes[static_cast<size_t>(add_id)];
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  if (add.inputs[0] == kNoValue || add.inputs[1] == kNoValue) return false;
  for (size_t side = 0; side < 2; ++side) {
    Node* matmul = fusable_matmul(graph, add_id, side);
    if (matmul == nullptr) continue;
    turn_into_gemm(*matmul, add.inputs[1 - side], add.outputs[0]);
    remove_node(graph, add_id);
    graph.rebuild_edges();
    return true;
  }
  return false;
}

}  // namespace

Status fuse_matmul_add(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (fuse_one(graph, static_cast<NodeId>(n))) ++report.fused_biases;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
