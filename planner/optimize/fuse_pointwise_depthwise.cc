// Pass: a 1x1 Conv whose output only a depthwise Conv reads (MobileNetV2's expansion, then its
// 3x3) becomes one PointwiseDepthwiseConv node (domain ai.onepool), which computes the expanded
// rows a band of depthwise output needs, in a per-thread buffer, and never writes the expanded
// tensor (6x the block's input on MobileNetV2: 4.8 MB at 112x112). The tensor leaves the plan.
//
// The fused node: inputs X, W1 [M, C, 1, 1], B1 (or none), W2 [M, 1, kH, kW], B2 (or none);
// output Y, the depthwise Conv's. Attributes: the depthwise Conv's window (kernel_shape,
// strides, pads, dilations, group) and fused activation (onepool_activation / _alpha / _beta);
// the 1x1 Conv's fused activation as onepool_pointwise_activation / _alpha / _beta. Kernels:
// runtime/cpu/kernels/conv_pointwise_depthwise.h, and the CUDA Conv's (both steps, the expanded
// tensor in its workspace).
//
// Numerics: each expanded element is the same multiply-add chain, bias and activation as the
// 1x1 Conv computed, and each output the same depthwise sum: the bits of the unfused graph.
//
// Fused only when: both Convs are float32, 2-D, without a residual input; the 1x1 one is
// ungrouped with stride 1 and no padding, its weights (and bias) constant; the depthwise one has
// one output channel per channel, constant weights (and bias), explicit pads (auto_pad NOTSET),
// and output rows wider than kMinFusedWidth (narrower maps run the channels-in-vector depthwise
// kernel, and their expanded tensor fits the caches anyway). Runs after fuse_activations, so each
// Conv brings its activation along.
#include <string>

#include "planner/core/onepool_ops.h"
#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

// Depthwise output rows at most this wide keep the unfused nodes (the CPU's blocked depthwise
// kernel takes rows up to 32 wide at stride 1 and 48 at stride 2).
constexpr int64_t kMinFusedWidth = 48;

bool is_float32_4d(const Value& value) {
  return value.dtype == DType::kFloat32 && value.shape.rank() == 4 && value.bound.empty();
}

// Absent, or a constant float32 vector of `channels`.
bool constant_bias(const Graph& graph, ValueId id, int64_t channels) {
  if (id == kNoValue) return true;
  const Value& bias = value_at(graph, id);
  return weight_of(graph, id) != nullptr && bias.dtype == DType::kFloat32 &&
         bias.shape == Shape{channels};
}

bool explicit_pads(const Node& conv) {
  const std::string auto_pad = conv.attributes.get_string("auto_pad", "NOTSET");
  return auto_pad == "NOTSET" || auto_pad.empty();
}

// The depthwise Conv `node` that can take its input's producer in: returns that 1x1 Conv.
Node* fusable_pointwise(Graph& graph, NodeId node_id) {
  const Node& depthwise = graph.nodes[static_cast<size_t>(node_id)];
  if (!is_op(depthwise, "Conv") || depthwise.inputs.size() < 2 || depthwise.inputs.size() > 3 ||
      depthwise.outputs.size() != 1 || depthwise.inputs[0] == kNoValue ||
      !explicit_pads(depthwise)) {
    return nullptr;
  }
  const Value& expanded = value_at(graph, depthwise.inputs[0]);
  const Value& out = value_at(graph, depthwise.outputs[0]);
  if (!is_float32_4d(expanded) || !is_float32_4d(out) || out.shape[3] <= kMinFusedWidth) {
    return nullptr;
  }
  const int64_t channels = expanded.shape[1];
  const HostTensor* w2 = weight_of(graph, depthwise.inputs[1]);
  const Shape& w2_shape = value_at(graph, depthwise.inputs[1]).shape;
  if (w2 == nullptr || w2->dtype != DType::kFloat32 || w2_shape.rank() != 4 ||
      w2_shape[0] != channels || w2_shape[1] != 1 || out.shape[1] != channels ||
      depthwise.attributes.get_int("group", 1) != channels || channels < 2 ||
      !constant_bias(graph, depthwise.input(2), channels)) {
    return nullptr;
  }
  if (!only_feeds(graph, depthwise.inputs[0], node_id)) return nullptr;
  Node* pointwise = producer_of(graph, depthwise.inputs[0]);
  if (pointwise == nullptr || !is_op(*pointwise, "Conv") || pointwise->inputs.size() < 2 ||
      pointwise->inputs.size() > 3 || pointwise->outputs.size() != 1 ||
      pointwise->inputs[0] == kNoValue || pointwise->attributes.get_int("group", 1) != 1) {
    return nullptr;
  }
  const Value& x = value_at(graph, pointwise->inputs[0]);
  const HostTensor* w1 = weight_of(graph, pointwise->inputs[1]);
  const Shape& w1_shape = value_at(graph, pointwise->inputs[1]).shape;
  const std::vector<int64_t> ones{1, 1};
  const AttributeMap& a = pointwise->attributes;
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  const bool unpadded = (explicit_pads(*pointwise) || auto_pad == "VALID") &&
                        a.get_ints("pads", {0, 0, 0, 0}) == std::vector<int64_t>{0, 0, 0, 0};
  if (!is_float32_4d(x) || w1 == nullptr || w1->dtype != DType::kFloat32 ||
      w1_shape != Shape{channels, x.shape[1], 1, 1} || a.get_ints("strides", ones) != ones ||
      !unpadded || !(expanded.shape == Shape{x.shape[0], channels, x.shape[2], x.shape[3]}) ||
      !constant_bias(graph, pointwise->input(2), channels)) {
    return nullptr;
  }
  return pointwise;
}

// The fused node's attributes: the depthwise Conv's, with the 1x1 Conv's activation renamed.
AttributeMap fused_attributes(const Node& pointwise, const Node& depthwise) {
  AttributeMap attributes;
  for (const auto& [name, value] : depthwise.attributes.entries()) {
    if (name != "auto_pad") attributes.set(name, value);
  }
  for (const char* name : {"activation", "alpha", "beta"}) {
    const Attribute* value = pointwise.attributes.find(std::string("onepool_") + name);
    if (value != nullptr) attributes.set(std::string("onepool_pointwise_") + name, *value);
  }
  return attributes;
}

bool fuse_one(Graph& graph, NodeId node_id) {
  Node* pointwise = fusable_pointwise(graph, node_id);
  if (pointwise == nullptr) return false;
  Node& depthwise = graph.nodes[static_cast<size_t>(node_id)];
  Node fused;
  fused.name = pointwise->name + "+" + depthwise.name;
  fused.op_type = kPointwiseDepthwiseOp;
  fused.domain = kOnePoolDomain;
  fused.inputs = {pointwise->inputs[0], pointwise->inputs[1], pointwise->input(2),
                  depthwise.inputs[1], depthwise.input(2)};
  fused.outputs = depthwise.outputs;
  fused.attributes = fused_attributes(*pointwise, depthwise);
  const NodeId pointwise_id = value_at(graph, depthwise.inputs[0]).producer;
  depthwise = std::move(fused);
  remove_node(graph, pointwise_id);
  graph.rebuild_edges();
  return true;
}

}  // namespace

Status fuse_pointwise_depthwise(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (fuse_one(graph, static_cast<NodeId>(n))) ++report.fused_pointwise_depthwise;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
