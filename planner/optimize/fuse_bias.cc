// Pass: fold Add(conv_out, c) into the Conv / ConvTranspose bias when c is a constant that only
// varies along the channel axis.
//
// ONNX broadcasting aligns shapes on the right, so against an output [N, C, H, W] the constant
// [1, C, 1, 1] or [C, 1, 1] is per-channel, while [C] lines up with W and is NOT (it is fused only
// when its single dim is 1). Every dim of c except the one aligned with axis 1 must be 1, and the
// Add's output must have the conv output's shape (c does not widen the broadcast).
#include <vector>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

// True when `c` broadcast against `out` (rank >= 2) varies at most along axis 1.
bool is_per_channel(const Shape& c, const Shape& out) {
  if (c.rank() > out.rank() || out.rank() < 2) return false;
  const int offset = out.rank() - c.rank();
  for (int i = 0; i < c.rank(); ++i) {
    const int axis = offset + i;
    if (c[i] == 1) continue;
    if (axis != 1 || c[i] != out[1]) return false;
  }
  return true;
}

// The conv that Add node `add_id` can fold into through its input `side`, else nullptr.
Node* fusable_conv(Graph& graph, NodeId add_id, size_t side) {
  const Node& add = graph.nodes[static_cast<size_t>(add_id)];
  const ValueId x = add.inputs[side];
  const HostTensor* c = weight_of(graph, add.inputs[1 - side]);
  if (c == nullptr || c->dtype != DType::kFloat32 || !only_feeds(graph, x, add_id)) return nullptr;
  const Value& out = value_at(graph, x);
  if (out.dtype != DType::kFloat32 || !is_per_channel(c->shape, out.shape)) return nullptr;
  if (!(value_at(graph, add.outputs[0]).shape == out.shape)) return nullptr;
  Node* conv = producer_of(graph, x);
  if (conv == nullptr || !(is_op(*conv, "Conv") || is_op(*conv, "ConvTranspose"))) return nullptr;
  if (conv->outputs.size() != 1 || has_fused_activation(*conv)) return nullptr;
  const ValueId bias = conv->input(2);
  if (bias == kNoValue) return conv;
  const HostTensor* b = weight_of(graph, bias);
  if (b == nullptr || b->dtype != DType::kFloat32 || b->element_count() != out.shape[1]) {
    return nullptr;
  }
  return conv;
}

// The conv's bias plus c, per channel.
std::vector<double> summed_bias(const Graph& graph, const Node& conv, const HostTensor& c,
                                int64_t channels) {
  std::vector<double> bias(static_cast<size_t>(channels), 0.0);
  const HostTensor* old_bias = weight_of(graph, conv.input(2));
  for (int64_t k = 0; k < channels; ++k) {
    const double old_value = old_bias == nullptr ? 0.0 : old_bias->float_at(k);
    bias[static_cast<size_t>(k)] = old_value + c.float_at(c.element_count() == 1 ? 0 : k);
  }
  return bias;
}

bool fuse_one(Graph& graph, NodeId add_id) {
  const Node& add = graph.nodes[static_cast<size_t>(add_id)];
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  if (add.inputs[0] == kNoValue || add.inputs[1] == kNoValue) return false;
  for (size_t side = 0; side < 2; ++side) {
    Node* conv = fusable_conv(graph, add_id, side);
    if (conv == nullptr) continue;
    const int64_t channels = value_at(graph, add.inputs[side]).shape[1];
    const HostTensor& c = *weight_of(graph, add.inputs[1 - side]);
    std::vector<double> bias = summed_bias(graph, *conv, c, channels);
    const ValueId bias_id =
        add_weight(graph, str_cat(conv->name, "_B_fused"), make_float_weight({channels}, bias));
    if (conv->inputs.size() < 3) conv->inputs.resize(3, kNoValue);
    conv->inputs[2] = bias_id;
    conv->outputs[0] = add.outputs[0];
    remove_node(graph, add_id);
    graph.rebuild_edges();
    return true;
  }
  return false;
}

}  // namespace

Status fuse_conv_bias(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (fuse_one(graph, static_cast<NodeId>(n))) ++report.fused_biases;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
