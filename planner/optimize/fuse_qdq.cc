// Pass: QDQ int8 fusion, the rewrite ONNX Runtime does at level all.
//
//   DequantizeLinear(x_q), DequantizeLinear(w_q) [, DequantizeLinear(b_q int32)]
//       → Conv [→ Relu] → QuantizeLinear           becomes QLinearConv(x_q, ..., w_q, ..., b_q)
//   DequantizeLinear(a_q), DequantizeLinear(b_q) → MatMul [→ Relu] → QuantizeLinear
//                                                  becomes QLinearMatMul(a_q, ..., b_q, ...)
//
// Why the result is exact: the integer kernel sums (x_q - x_zero) * (w_q - w_zero) in int32
// with no rounding, adds b_q exactly (its scale is x_scale * w_scale, checked bit for bit), and
// rounds once: round(acc * (x_scale * w_scale / y_scale)). The float graph rounds every product
// and partial sum instead, so a value near a half-way point can land on the other integer. The
// pass fires only where that single-rounding form is the same function of the inputs:
//   - x / a and y quantized per tensor (one scale, one zero point); w / b_q constant, per tensor
//     or per output channel (Conv: axis 0 of w; MatMul: axis 1 of a 2-D b);
//   - Conv bias: int32 constant, zero point 0, scale[c] == x_scale * w_scale[c] as float32;
//   - a Relu in between only when y's zero point is its type's lowest value (saturation then
//     clamps at real 0, which is what Relu did);
//   - every intermediate float tensor feeds only the next node and is no graph output;
//   - the int32 sum cannot wrap: reduction length * 2^16 + max |b_q| < 2^31.
// DequantizeLinear nodes left without a reader are removed.
#include "planner/optimize/fuse_qdq.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/optimize.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

// The inputs of a DequantizeLinear node: quantized tensor, scale, zero point (or kNoValue).
struct Dequantized {
  NodeId node = kNoNode;
  ValueId quantized = kNoValue;
  ValueId scale = kNoValue;
  ValueId zero = kNoValue;
  int64_t scale_count = 1;
  int64_t axis = 1;  // normalized against the quantized tensor's rank
};

bool is_8bit(DType dtype) { return dtype == DType::kUInt8 || dtype == DType::kInt8; }

float float_at(const HostTensor& tensor, int64_t i) {
  float value = 0.0f;
  std::memcpy(&value, tensor.data.data() + i * sizeof(float), sizeof(float));
  return value;
}

// Scales are float32 constants, finite and positive (a zero scale divides by zero in the graph).
bool usable_scales(const HostTensor* scale) {
  if (scale == nullptr || scale->dtype != DType::kFloat32 || scale->shape.rank() > 1) return false;
  for (int64_t i = 0; i < scale->element_count(); ++i) {
    const float s = float_at(*scale, i);
    if (!std::isfinite(s) || !(s > 0.0f)) return false;
  }
  return scale->element_count() >= 1;
}

// The DequantizeLinear producing `id`, when its scale and zero point are constants of matching
// sizes; nullopt otherwise.
std::optional<Dequantized> dequantized(Graph& graph, ValueId id) {
  const Node* node = producer_of(graph, id);
  if (node == nullptr || !is_op(*node, "DequantizeLinear") || node->outputs.size() != 1) {
    return std::nullopt;
  }
  if (node->inputs.size() < 2 || node->input(0) == kNoValue) return std::nullopt;
  Dequantized dq;
  dq.node = value_at(graph, id).producer;
  dq.quantized = node->inputs[0];
  dq.scale = node->inputs[1];
  dq.zero = node->input(2);
  const HostTensor* scale = weight_of(graph, dq.scale);
  if (!usable_scales(scale)) return std::nullopt;
  dq.scale_count = scale->element_count();
  const HostTensor* zero = weight_of(graph, dq.zero);
  if (dq.zero != kNoValue && (zero == nullptr || zero->element_count() != dq.scale_count)) {
    return std::nullopt;
  }
  const Value& quantized = value_at(graph, dq.quantized);
  if (zero != nullptr && zero->dtype != quantized.dtype) return std::nullopt;
  const auto rank = static_cast<int64_t>(quantized.shape.rank());
  dq.axis = node->attributes.get_int("axis", 1);
  if (dq.axis < 0) dq.axis += rank;
  return dq;
}

bool per_tensor(const Dequantized& dq) { return dq.scale_count == 1; }

// Per tensor, or one scale per element of `axis` (of `length` elements).
bool per_axis_or_tensor(const Dequantized& dq, int64_t axis, int64_t length) {
  return dq.scale_count == 1 || (dq.axis == axis && dq.scale_count == length);
}

// Every element of the zero point `id` equals `expected` (an omitted one is 0).
bool zero_point_is(const Graph& graph, ValueId id, int64_t expected) {
  if (id == kNoValue) return expected == 0;
  const HostTensor* zero = weight_of(graph, id);
  if (zero == nullptr) return false;
  for (int64_t i = 0; i < zero->element_count(); ++i) {
    if (zero->int_at(i) != expected) return false;
  }
  return true;
}

int64_t lowest_of(DType dtype) { return dtype == DType::kInt8 ? -128 : 0; }

// The output stage: QuantizeLinear(y) [fed by Relu] and the node computing y (Conv or MatMul).
struct OutputStage {
  NodeId quantize = kNoNode;
  NodeId relu = kNoNode;  // kNoNode when there is none
  NodeId op = kNoNode;
  ValueId y_scale = kNoValue;
  ValueId y_zero = kNoValue;
  ValueId y_quantized = kNoValue;
};

// Walks back from QuantizeLinear node `q_id` to a node of type `op_type`, through a Relu that
// the output saturation reproduces.
std::optional<OutputStage> output_stage(Graph& graph, NodeId q_id, const char* op_type) {
  const Node& q = graph.nodes[static_cast<size_t>(q_id)];
  if (!is_op(q, "QuantizeLinear") || q.inputs.size() < 2 || q.outputs.size() != 1) {
    return std::nullopt;
  }
  OutputStage stage;
  stage.quantize = q_id;
  stage.y_scale = q.inputs[1];
  stage.y_zero = q.input(2);
  stage.y_quantized = q.outputs[0];
  const HostTensor* scale = weight_of(graph, stage.y_scale);
  const HostTensor* zero = weight_of(graph, stage.y_zero);
  if (!usable_scales(scale) || scale->element_count() != 1) return std::nullopt;
  if (stage.y_zero != kNoValue && (zero == nullptr || zero->element_count() != 1)) {
    return std::nullopt;
  }
  const DType y_type = value_at(graph, stage.y_quantized).dtype;
  if (!is_8bit(y_type) || value_at(graph, q.inputs[0]).dtype != DType::kFloat32) {
    return std::nullopt;
  }
  if (!only_feeds(graph, q.inputs[0], q_id)) return std::nullopt;
  Node* producer = producer_of(graph, q.inputs[0]);
  if (producer == nullptr) return std::nullopt;
  ValueId op_output = q.inputs[0];
  if (is_op(*producer, "Relu")) {
    if (!zero_point_is(graph, stage.y_zero, lowest_of(y_type))) return std::nullopt;
    stage.relu = value_at(graph, op_output).producer;
    op_output = producer->input(0);
    if (!only_feeds(graph, op_output, stage.relu)) return std::nullopt;
    producer = producer_of(graph, op_output);
    if (producer == nullptr) return std::nullopt;
  }
  if (!is_op(*producer, op_type) || producer->outputs.size() != 1) return std::nullopt;
  if (has_fused_activation(*producer)) return std::nullopt;
  stage.op = value_at(graph, op_output).producer;
  return stage;
}

// x_scale * w_scale[c] == bias_scale[c] for every output channel, as float32 products.
bool bias_scale_matches(const Graph& graph, const Dequantized& x, const Dequantized& w,
                        const Dequantized& bias, int64_t channels) {
  const float x_scale = float_at(*weight_of(graph, x.scale), 0);
  const HostTensor& w_scale = *weight_of(graph, w.scale);
  const HostTensor& b_scale = *weight_of(graph, bias.scale);
  for (int64_t c = 0; c < channels; ++c) {
    const float expected = x_scale * float_at(w_scale, w.scale_count == 1 ? 0 : c);
    const float actual = float_at(b_scale, bias.scale_count == 1 ? 0 : c);
    if (expected != actual) return false;
  }
  return true;
}

int64_t max_abs(const HostTensor& tensor) {
  int64_t result = 0;
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    result = std::max(result, std::abs(tensor.int_at(i)));
  }
  return result;
}

// reduction * 255 * 255 (the largest |(x - x_zero) * (w - w_zero)| of 8-bit values is
// 255 * 255 < 2^16) plus the bias stays inside int32.
bool sum_fits_int32(int64_t reduction, int64_t max_bias) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  return reduction <= (kLimit - max_bias) / 65536;
}

// A quantized activation input: 8-bit, per tensor.
bool quantized_activation(const Graph& graph, const std::optional<Dequantized>& dq) {
  return dq && per_tensor(*dq) && is_8bit(value_at(graph, dq->quantized).dtype);
}

// A quantized constant: an 8-bit weight.
const HostTensor* quantized_weight(const Graph& graph, const std::optional<Dequantized>& dq) {
  if (!dq) return nullptr;
  const HostTensor* w = weight_of(graph, dq->quantized);
  return w != nullptr && is_8bit(w->dtype) ? w : nullptr;
}

// The Conv's int32 bias (DequantizeLinear of an int32 constant [M], zero point 0, scale
// x_scale * w_scale), or nullopt when the Conv has a bias that does not qualify. `max_bias`
// receives max |b_q| (0 without a bias).
std::optional<ValueId> conv_bias(Graph& graph, const Node& conv, const Dequantized& x,
                                 const Dequantized& w, int64_t channels, int64_t& max_bias) {
  max_bias = 0;
  if (conv.input(2) == kNoValue) return kNoValue;
  const std::optional<Dequantized> bias = dequantized(graph, conv.input(2));
  if (!bias) return std::nullopt;
  const HostTensor* b = weight_of(graph, bias->quantized);
  if (b == nullptr || b->dtype != DType::kInt32 || !(b->shape == Shape{channels})) {
    return std::nullopt;
  }
  if (!per_axis_or_tensor(*bias, 0, channels) || !zero_point_is(graph, bias->zero, 0)) {
    return std::nullopt;
  }
  if (!bias_scale_matches(graph, x, w, *bias, channels)) return std::nullopt;
  max_bias = max_abs(*b);
  return bias->quantized;
}

// Removes the DequantizeLinear nodes among `nodes` whose output nothing reads any more.
void remove_unread_dequantize(Graph& graph, std::initializer_list<NodeId> nodes) {
  graph.rebuild_edges();
  for (NodeId id : nodes) {
    if (id == kNoNode) continue;
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    if (!is_op(node, "DequantizeLinear")) continue;  // already removed
    const Value& out = value_at(graph, node.outputs[0]);
    if (out.consumers.empty() && !out.is_graph_output) remove_node(graph, id);
  }
  graph.rebuild_edges();
}

void retire_output_stage(Graph& graph, const OutputStage& stage) {
  remove_node(graph, stage.quantize);
  if (stage.relu != kNoNode) remove_node(graph, stage.relu);
}

bool fuse_conv(Graph& graph, NodeId q_id) {
  const std::optional<OutputStage> stage = output_stage(graph, q_id, "Conv");
  if (!stage) return false;
  Node& conv = graph.nodes[static_cast<size_t>(stage->op)];
  const std::optional<Dequantized> x = dequantized(graph, conv.input(0));
  const std::optional<Dequantized> w = dequantized(graph, conv.input(1));
  const HostTensor* w_q = quantized_weight(graph, w);
  if (!quantized_activation(graph, x) || w_q == nullptr || w_q->shape.rank() < 3) return false;
  const int64_t channels = w_q->shape[0];
  if (!per_axis_or_tensor(*w, 0, channels)) return false;
  int64_t max_bias = 0;
  const std::optional<ValueId> bias = conv_bias(graph, conv, *x, *w, channels, max_bias);
  if (!bias) return false;
  if (!sum_fits_int32(w_q->element_count() / channels, max_bias)) return false;
  const NodeId bias_dq =
      conv.input(2) == kNoValue ? kNoNode : value_at(graph, conv.inputs[2]).producer;
  conv.op_type = "QLinearConv";
  conv.inputs = {x->quantized, x->scale, x->zero,        w->quantized,
                 w->scale,     w->zero,  stage->y_scale, stage->y_zero};
  if (*bias != kNoValue) conv.inputs.push_back(*bias);
  conv.outputs = {stage->y_quantized};
  retire_output_stage(graph, *stage);
  remove_unread_dequantize(graph, {x->node, w->node, bias_dq});
  return true;
}

bool fuse_matmul(Graph& graph, NodeId q_id) {
  const std::optional<OutputStage> stage = output_stage(graph, q_id, "MatMul");
  if (!stage) return false;
  Node& matmul = graph.nodes[static_cast<size_t>(stage->op)];
  if (matmul.inputs.size() != 2) return false;
  const std::optional<Dequantized> a = dequantized(graph, matmul.input(0));
  const std::optional<Dequantized> b = dequantized(graph, matmul.input(1));
  const HostTensor* b_q = quantized_weight(graph, b);
  if (!quantized_activation(graph, a) || b_q == nullptr || b_q->shape.rank() != 2) return false;
  if (!per_axis_or_tensor(*b, 1, b_q->shape[1])) return false;
  if (!sum_fits_int32(b_q->shape[0], 0)) return false;
  matmul.op_type = "QLinearMatMul";
  matmul.inputs = {a->quantized, a->scale, a->zero,        b->quantized,
                   b->scale,     b->zero,  stage->y_scale, stage->y_zero};
  matmul.outputs = {stage->y_quantized};
  retire_output_stage(graph, *stage);
  remove_unread_dequantize(graph, {a->node, b->node});
  return true;
}

}  // namespace

Status fuse_qdq(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const auto id = static_cast<NodeId>(n);
    if (fuse_conv(graph, id) || fuse_matmul(graph, id)) ++report.fused_qdq;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt

namespace onepool {

Expected<int> fuse_qdq_operators(Graph& graph) {
  ONEPOOL_RETURN_IF_ERROR(graph_opt::check_graph_ids(graph));
  graph.rebuild_edges();
  OptimizeReport report;
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_qdq(graph, report));
  if (report.fused_qdq > 0) compact_graph(graph);
  return report.fused_qdq;
}

}  // namespace onepool
