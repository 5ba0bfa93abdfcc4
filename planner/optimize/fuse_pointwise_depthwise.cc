// Pass: a 1x1 Conv whose output only a depthwise Conv reads (MobileNetV2's expansion, then its
// 3x3) becomes one PointwiseDepthwiseConv node (domain ai.onepool), which computes the expanded
// rows a band of depthwise output needs, in a per-thread buffer, and never writes the expanded
// tensor (6x the block's input on MobileNetV2: 4.8 MB at 112x112). When the depthwise output in
// turn feeds only a 1x1 Conv (the block's projection, with its residual Add fused), the node
// takes that in too and writes the block's output: neither intermediate is in the plan. A
// depthwise Conv with a projection and no expansion before it (MobileNetV2's first block, the
// separable convolutions of M-LSD) fuses the same way, its window reading X in place.
//
// The fused node: inputs X, W1 [M, C, 1, 1] (or none: X has M channels), B1 (or none),
// W2 [M, 1, kH, kW], B2 (or none), and with a projection W3 [P, M, 1, 1], B3 (or none), the
// residual (or none); output Y, the last Conv's. Attributes: the depthwise Conv's window
// (kernel_shape, strides, pads, dilations, group) and fused activation (onepool_activation /
// _alpha / _beta); the first 1x1 Conv's as onepool_pointwise_activation / _alpha / _beta, the
// projection's as onepool_project_*. Kernels: runtime/cpu/kernels/conv_pointwise_depthwise.h,
// and the CUDA Conv's (the steps one after the other, the intermediates in its workspace).
//
// Numerics: each expanded element is the same multiply-add chain, bias and activation as the
// 1x1 Conv computed, each depthwise output the same sum, each projected one the same chain,
// bias, residual and activation: the bits of the unfused graph.
//
// Fused only when: the Convs are float32, 2-D; the 1x1 ones ungrouped with stride 1 and no
// padding, their weights (and biases) constant; the first without a residual, the projection's
// residual (if any) ready before the fused node runs; the depthwise one has one output channel
// per channel, constant weights (and bias), explicit pads (auto_pad NOTSET), no residual, and
// output rows wider than kMinFusedWidth (narrower maps run the channels-in-vector depthwise
// kernel, and their expanded tensor fits the caches anyway). Runs after fuse_residual_adds and
// fuse_activations, so each Conv brings its residual and activation along.
#include <cmath>
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

// True when the depthwise paths agree on `tensor`'s values (weights or bias): the unfused
// kernel sums a small plane's padding (w * 0) where the fused one skips it, which differs only for
// an infinite or NaN weight (Inf * 0 is NaN) or a bias of -0 (-0 + +0 is +0).
bool same_on_every_path(const HostTensor& tensor) {
  const float* values = tensor.as<float>();
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    if (!std::isfinite(values[i]) || (values[i] == 0.0f && std::signbit(values[i]))) return false;
  }
  return true;
}

bool explicit_pads(const Node& conv) {
  const std::string auto_pad = conv.attributes.get_string("auto_pad", "NOTSET");
  return auto_pad == "NOTSET" || auto_pad.empty();
}

// Stride 1 and no padding (a 1x1 Conv that reads each position of its input once).
bool unpadded_stride_one(const Node& conv) {
  const AttributeMap& a = conv.attributes;
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  return (explicit_pads(conv) || auto_pad == "VALID") &&
         a.get_ints("pads", {0, 0, 0, 0}) == std::vector<int64_t>{0, 0, 0, 0} &&
         a.get_ints("strides", {1, 1}) == std::vector<int64_t>{1, 1};
}

// True for a depthwise Conv that can be fused: one output channel per channel, constant weights
// (and bias), explicit pads, no residual, float32 4-D, output rows wider than kMinFusedWidth.
bool fusable_depthwise(const Graph& graph, const Node& depthwise) {
  if (!is_op(depthwise, "Conv") || depthwise.inputs.size() < 2 || depthwise.inputs.size() > 3 ||
      depthwise.outputs.size() != 1 || depthwise.inputs[0] == kNoValue ||
      !explicit_pads(depthwise)) {
    return false;
  }
  const Value& in = value_at(graph, depthwise.inputs[0]);
  const Value& out = value_at(graph, depthwise.outputs[0]);
  if (!is_float32_4d(in) || !is_float32_4d(out) || out.shape[3] <= kMinFusedWidth ||
      in.shape.element_count() == 0 || out.shape.element_count() == 0) {
    return false;
  }
  const int64_t channels = in.shape[1];
  const HostTensor* w2 = weight_of(graph, depthwise.inputs[1]);
  const Shape& w2_shape = value_at(graph, depthwise.inputs[1]).shape;
  return w2 != nullptr && w2->dtype == DType::kFloat32 && w2_shape.rank() == 4 &&
         w2_shape[0] == channels && w2_shape[1] == 1 && out.shape[1] == channels &&
         depthwise.attributes.get_int("group", 1) == channels && channels >= 2 &&
         constant_bias(graph, depthwise.input(2), channels) && same_on_every_path(*w2) &&
         (depthwise.input(2) == kNoValue ||
          same_on_every_path(*weight_of(graph, depthwise.input(2))));
}

// The 1x1 Conv producing fusable depthwise Conv `node_id`'s input, when it can be fused (its
// output read by the depthwise Conv alone); nullptr otherwise.
Node* fusable_pointwise(Graph& graph, NodeId node_id) {
  const Node& depthwise = graph.nodes[static_cast<size_t>(node_id)];
  const Value& expanded = value_at(graph, depthwise.inputs[0]);
  const int64_t channels = expanded.shape[1];
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
  if (!is_float32_4d(x) || w1 == nullptr || w1->dtype != DType::kFloat32 ||
      w1_shape != Shape{channels, x.shape[1], 1, 1} || !unpadded_stride_one(*pointwise) ||
      !(expanded.shape == Shape{x.shape[0], channels, x.shape[2], x.shape[3]}) ||
      !constant_bias(graph, pointwise->input(2), channels)) {
    return nullptr;
  }
  return pointwise;
}

// Copies `from`'s fused activation (onepool_activation / _alpha / _beta, where set) into `to`
// as `prefix` + activation / alpha / beta.
void copy_activation(const Node& from, const std::string& prefix, AttributeMap& to) {
  for (const char* name : {"activation", "alpha", "beta"}) {
    const Attribute* value = from.attributes.find(std::string("onepool_") + name);
    if (value != nullptr) to.set(prefix + name, *value);
  }
}

// The fused node's attributes: the depthwise Conv's, with the 1x1 Conv's activation (if any)
// renamed.
AttributeMap fused_attributes(const Node* pointwise, const Node& depthwise) {
  AttributeMap attributes;
  for (const auto& [name, value] : depthwise.attributes.entries()) {
    if (name != "auto_pad") attributes.set(name, value);
  }
  if (pointwise != nullptr) copy_activation(*pointwise, "onepool_pointwise_", attributes);
  return attributes;
}

// Depthwise Conv `node_id` becomes a PointwiseDepthwiseConv taking in the 1x1 Conv before it
// (`pointwise`, or nullptr: none) and the 1x1 projection after it (absorb_projection).
void make_fused(Graph& graph, NodeId node_id, Node* pointwise) {
  Node& depthwise = graph.nodes[static_cast<size_t>(node_id)];
  Node fused;
  fused.name = pointwise != nullptr ? pointwise->name + "+" + depthwise.name : depthwise.name;
  fused.op_type = kPointwiseDepthwiseOp;
  fused.domain = kOnePoolDomain;
  if (pointwise != nullptr) {
    fused.inputs = {pointwise->inputs[0], pointwise->inputs[1], pointwise->input(2)};
  } else {
    fused.inputs = {depthwise.inputs[0], kNoValue, kNoValue};
  }
  fused.inputs.push_back(depthwise.inputs[1]);
  fused.inputs.push_back(depthwise.input(2));
  fused.outputs = depthwise.outputs;
  fused.attributes = fused_attributes(pointwise, depthwise);
  const NodeId pointwise_id =
      pointwise != nullptr ? value_at(graph, depthwise.inputs[0]).producer : kNoNode;
  depthwise = std::move(fused);
  if (pointwise_id != kNoNode) remove_node(graph, pointwise_id);
  graph.rebuild_edges();
}

// True when `id` is ready before node `node_id` runs: a graph input, a weight, or the output of
// an earlier node.
bool ready_before(const Graph& graph, ValueId id, NodeId node_id) {
  const NodeId producer = value_at(graph, id).producer;
  return producer == kNoNode || producer < node_id;
}

// The 1x1 Conv that alone reads fused node `fused_id`'s output and can become its projection:
// ungrouped, stride 1, unpadded, constant weights (and bias), and a residual input (if any) of
// the output's shape that is ready before the fused node.
Node* fusable_projection(Graph& graph, NodeId fused_id) {
  const Node& fused = graph.nodes[static_cast<size_t>(fused_id)];
  const ValueId out = fused.outputs[0];
  const Value& depthwise_out = value_at(graph, out);
  if (depthwise_out.consumers.size() != 1 || !only_feeds(graph, out, depthwise_out.consumers[0])) {
    return nullptr;
  }
  const NodeId conv_id = depthwise_out.consumers[0];
  Node& conv = graph.nodes[static_cast<size_t>(conv_id)];
  if (!is_op(conv, "Conv") || conv.inputs.size() < 2 || conv.inputs.size() > 4 ||
      conv.inputs[0] != out || conv.outputs.size() != 1 ||
      conv.attributes.get_int("group", 1) != 1 || !unpadded_stride_one(conv)) {
    return nullptr;
  }
  const int64_t channels = depthwise_out.shape[1];
  const Shape& w3_shape = value_at(graph, conv.inputs[1]).shape;
  const HostTensor* w3 = weight_of(graph, conv.inputs[1]);
  const Value& y = value_at(graph, conv.outputs[0]);
  if (w3 == nullptr || w3->dtype != DType::kFloat32 || w3_shape.rank() != 4 ||
      w3_shape[1] != channels || w3_shape[2] != 1 || w3_shape[3] != 1 || !is_float32_4d(y) ||
      !(y.shape == Shape{depthwise_out.shape[0], w3_shape[0], depthwise_out.shape[2],
                         depthwise_out.shape[3]}) ||
      !constant_bias(graph, conv.input(2), w3_shape[0])) {
    return nullptr;
  }
  const ValueId residual = conv.input(3);
  if (residual != kNoValue &&
      (!is_float32_4d(value_at(graph, residual)) || !(value_at(graph, residual).shape == y.shape) ||
       !ready_before(graph, residual, fused_id))) {
    return nullptr;
  }
  return &conv;
}

// The fused node takes the 1x1 projection after it in (inputs W3, B3, residual; its activation as
// onepool_project_*).
bool absorb_projection(Graph& graph, NodeId fused_id) {
  Node* projection = fusable_projection(graph, fused_id);
  if (projection == nullptr) return false;
  Node& fused = graph.nodes[static_cast<size_t>(fused_id)];
  fused.name += "+" + projection->name;
  fused.inputs.resize(5, kNoValue);
  fused.inputs.push_back(projection->inputs[1]);
  fused.inputs.push_back(projection->input(2));
  fused.inputs.push_back(projection->input(3));
  while (fused.inputs.back() == kNoValue) fused.inputs.pop_back();
  fused.outputs = projection->outputs;
  copy_activation(*projection, "onepool_project_", fused.attributes);
  const NodeId projection_id = value_at(graph, projection->inputs[0]).consumers[0];
  remove_node(graph, projection_id);
  graph.rebuild_edges();
  return true;
}

// A fusable depthwise Conv with a 1x1 Conv before it, after it, or both, becomes one node.
void fuse_block(Graph& graph, NodeId node_id, OptimizeReport& report) {
  if (!fusable_depthwise(graph, graph.nodes[static_cast<size_t>(node_id)])) return;
  Node* pointwise = fusable_pointwise(graph, node_id);
  if (pointwise == nullptr && fusable_projection(graph, node_id) == nullptr) return;
  make_fused(graph, node_id, pointwise);
  ++report.fused_depthwise_blocks;
  if (pointwise != nullptr) ++report.fused_expansions;
  if (absorb_projection(graph, node_id)) ++report.fused_projections;
}

}  // namespace

Status fuse_pointwise_depthwise(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) fuse_block(graph, static_cast<NodeId>(n), report);
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
