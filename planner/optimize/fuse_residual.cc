// Pass: fold z = Add(conv_out, skip) into the Conv as a residual epilogue (ResNet's and
// MobileNetV2's shortcut connections): the Conv takes `skip` as a fourth input and writes z, so
// the sum happens while each block of the output is still in cache instead of in a pass of its
// own over three tensors. A Relu after the Add then fuses as the Conv's activation (fuse_activation
// runs later), giving act(conv + bias + skip) in one kernel.
//
// Numerics: the kernel rounds conv + bias to float first and adds skip to that, exactly what the
// Conv and Add nodes computed (float addition is commutative, so which side of the Add the conv
// was on does not matter): the same bits as the unfused graph.
//
// Fused only when: the Conv is float32, ungrouped, without a fused activation, and its output
// feeds only this Add; skip has the output's exact shape and dtype (no broadcasting), is not the
// conv's own output, and is computed before the Conv in node order (so the Conv can still run
// where it stands). When both Add inputs come from such Convs, the later one takes the other's
// output (ResNet's downsample blocks: the downsample Conv reads conv3's output as its residual).
#include <optional>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

constexpr size_t kResidualInput = 3;

bool has_bound(const Value& value) { return !value.bound.empty(); }

// True when `skip` is ready before node `conv_id` runs: a graph input, a weight, or the output of
// an earlier node.
bool ready_before(const Graph& graph, ValueId skip, NodeId conv_id) {
  const NodeId producer = value_at(graph, skip).producer;
  return producer == kNoNode || producer < conv_id;
}

// The Conv producing Add input `side` when it can take the other input as its residual.
std::optional<NodeId> fusable_conv(Graph& graph, NodeId add_id, size_t side) {
  const Node& add = graph.nodes[static_cast<size_t>(add_id)];
  const ValueId conv_out = add.inputs[side];
  const ValueId skip = add.inputs[1 - side];
  if (conv_out == skip || !only_feeds(graph, conv_out, add_id)) return std::nullopt;
  const Value& out = value_at(graph, conv_out);
  const Value& other = value_at(graph, skip);
  const Value& sum = value_at(graph, add.outputs[0]);
  if (out.dtype != DType::kFloat32 || other.dtype != DType::kFloat32 ||
      sum.dtype != DType::kFloat32 || !(other.shape == out.shape) || !(sum.shape == out.shape) ||
      has_bound(out) || has_bound(other) || has_bound(sum)) {
    return std::nullopt;
  }
  const Node* conv = producer_of(graph, conv_out);
  if (conv == nullptr || !is_op(*conv, "Conv") || conv->outputs.size() != 1 ||
      conv->inputs.size() > kResidualInput || has_fused_activation(*conv) ||
      conv->attributes.get_int("group", 1) != 1) {
    return std::nullopt;
  }
  const NodeId conv_id = out.producer;
  if (!ready_before(graph, skip, conv_id)) return std::nullopt;
  return conv_id;
}

bool fuse_one(Graph& graph, NodeId add_id) {
  const Node& add = graph.nodes[static_cast<size_t>(add_id)];
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  if (add.inputs[0] == kNoValue || add.inputs[1] == kNoValue) return false;
  // The later of the two candidate Convs, so that the other input is ready before it.
  std::optional<NodeId> chosen;
  size_t chosen_side = 0;
  for (size_t side = 0; side < 2; ++side) {
    const std::optional<NodeId> conv_id = fusable_conv(graph, add_id, side);
    if (conv_id && (!chosen || *conv_id > *chosen)) {
      chosen = conv_id;
      chosen_side = side;
    }
  }
  if (!chosen) return false;
  Node& conv = graph.nodes[static_cast<size_t>(*chosen)];
  conv.inputs.resize(kResidualInput + 1, kNoValue);
  conv.inputs[kResidualInput] = add.inputs[1 - chosen_side];
  conv.outputs[0] = add.outputs[0];
  remove_node(graph, add_id);
  graph.rebuild_edges();
  return true;
}

}  // namespace

Status fuse_residual_adds(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (fuse_one(graph, static_cast<NodeId>(n))) ++report.fused_residuals;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
