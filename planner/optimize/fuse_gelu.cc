// Pass: the decomposed GELU that exporters emit becomes one Gelu node (ONNX opset 20, attribute
// approximate = "none" | "tanh"; CPU kernel in runtime/cpu/kernels/elementwise_unary.cc).
//
//   erf form (BERT)   : a = 1 + Erf(x / √2)   (or Erf(x · 1/√2))
//   tanh form (GPT-2) : a = 1 + Tanh(√(2/π) · (x + 0.044715 · x³))   (x³ = Pow(x, 3) or x · (x ·
//   x)) then y = (x · a) · 0.5, (x · 0.5) · a or x · (a · 0.5).
//
// Why: x stays live across the 5–8 nodes, so the planner cannot overwrite it and the chain peaks
// at x plus an intermediate of the same size; one Gelu reads x once and runs in place.
//
// The match starts at the Erf / Tanh node and walks back to x and forward to y. Add and Mul
// operands match in either order. Every intermediate must feed only the next node of the pattern
// and not be a graph output (only_feeds); x may have other consumers. Constants are float32
// weights of one element, within 1e-4 relative of the expected value. x and y must be float32 of
// one shape (a constant of higher rank would broadcast y beyond x).
#include <cmath>
#include <optional>
#include <vector>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

constexpr double kRelativeTolerance = 1e-4;
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInverseSqrt2 = 0.7071067811865476;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubicCoefficient = 0.044715;

// Where the pattern starts: x and the nodes between x and the Erf / Tanh anchor.
struct GeluFront {
  ValueId x = kNoValue;
  std::vector<NodeId> nodes;
};

// The whole pattern: node `last` becomes the Gelu, the others are removed.
struct GeluMatch {
  ValueId x = kNoValue;
  NodeId last = kNoNode;
  std::vector<NodeId> removed;
  const char* approximate = "none";
};

// True when `id` is a float32 weight of one element within kRelativeTolerance of `expected`.
bool is_scalar(const Graph& graph, ValueId id, double expected) {
  const HostTensor* weight = weight_of(graph, id);
  if (weight == nullptr || weight->dtype != DType::kFloat32 || weight->element_count() != 1) {
    return false;
  }
  return std::abs(weight->float_at(0) - expected) <= kRelativeTolerance * std::abs(expected);
}

// True when node `id` is a default-domain `op_type` with `input_count` present inputs and one
// present output.
bool is_simple_op(const Graph& graph, NodeId id, const char* op_type, size_t input_count) {
  if (id == kNoNode) return false;
  const Node& node = graph.nodes[static_cast<size_t>(id)];
  if (!is_op(node, op_type) || node.inputs.size() != input_count || node.outputs.size() != 1) {
    return false;
  }
  if (node.outputs[0] == kNoValue) return false;
  for (ValueId input : node.inputs) {
    if (input == kNoValue) return false;
  }
  return true;
}

const Node& node_at(const Graph& graph, NodeId id) { return graph.nodes[static_cast<size_t>(id)]; }

// The producer of `id` when it is a binary `op_type` and `id` feeds only `consumer`, else kNoNode.
NodeId binary_producer(const Graph& graph, ValueId id, NodeId consumer, const char* op_type) {
  if (!only_feeds(graph, id, consumer)) return kNoNode;
  const NodeId producer = value_at(graph, id).producer;
  return is_simple_op(graph, producer, op_type, 2) ? producer : kNoNode;
}

// The only consumer of `id` when it is a binary `op_type` and `id` is no graph output, else
// kNoNode.
NodeId binary_consumer(const Graph& graph, ValueId id, const char* op_type) {
  const Value& value = value_at(graph, id);
  if (value.consumers.size() != 1 || !only_feeds(graph, id, value.consumers[0])) return kNoNode;
  return is_simple_op(graph, value.consumers[0], op_type, 2) ? value.consumers[0] : kNoNode;
}

// The input of binary `node` other than `known` (either order), or kNoValue when `known` is not
// an input.
ValueId other_operand(const Node& node, ValueId known) {
  if (node.inputs[0] == known) return node.inputs[1];
  if (node.inputs[1] == known) return node.inputs[0];
  return kNoValue;
}

// The input of binary `node` other than a scalar weight equal to `constant`, or kNoValue.
ValueId operand_beside(const Graph& graph, const Node& node, double constant) {
  if (is_scalar(graph, node.inputs[1], constant)) return node.inputs[0];
  if (is_scalar(graph, node.inputs[0], constant)) return node.inputs[1];
  return kNoValue;
}

// erf form, back from the Erf: d = Div(x, √2) or Mul(x, 1/√2).
std::optional<GeluFront> erf_front(const Graph& graph, NodeId erf_id) {
  const ValueId d = node_at(graph, erf_id).inputs[0];
  const NodeId div_id = binary_producer(graph, d, erf_id, "Div");
  if (div_id != kNoNode) {
    const Node& div = node_at(graph, div_id);
    if (!is_scalar(graph, div.inputs[1], kSqrt2)) return std::nullopt;
    return GeluFront{div.inputs[0], {div_id}};
  }
  const NodeId mul_id = binary_producer(graph, d, erf_id, "Mul");
  if (mul_id == kNoNode) return std::nullopt;
  const ValueId x = operand_beside(graph, node_at(graph, mul_id), kInverseSqrt2);
  if (x == kNoValue) return std::nullopt;
  return GeluFront{x, {mul_id}};
}

// The nodes computing p = x³ for the Mul `consumer`: Pow(x, 3) or x · (x · x) in any order;
// empty when p is neither.
std::vector<NodeId> cube_nodes(const Graph& graph, ValueId p, NodeId consumer, ValueId x) {
  const NodeId pow_id = binary_producer(graph, p, consumer, "Pow");
  if (pow_id != kNoNode) {
    const Node& pow = node_at(graph, pow_id);
    if (pow.inputs[0] == x && is_scalar(graph, pow.inputs[1], 3.0)) return {pow_id};
    return {};
  }
  const NodeId outer_id = binary_producer(graph, p, consumer, "Mul");
  if (outer_id == kNoNode) return {};
  const ValueId square = other_operand(node_at(graph, outer_id), x);
  const NodeId square_id = binary_producer(graph, square, outer_id, "Mul");
  if (square_id == kNoNode) return {};
  const Node& square_node = node_at(graph, square_id);
  if (square_node.inputs[0] != x || square_node.inputs[1] != x) return {};
  return {outer_id, square_id};
}

// tanh form, back from `inner` = Add(x, Mul(x³, 0.044715)) read by the Mul `scale_id`.
std::optional<GeluFront> cubic_front(const Graph& graph, ValueId inner, NodeId scale_id) {
  const NodeId inner_id = binary_producer(graph, inner, scale_id, "Add");
  if (inner_id == kNoNode) return std::nullopt;
  const Node& add = node_at(graph, inner_id);
  for (size_t side = 0; side < 2; ++side) {
    const ValueId x = add.inputs[1 - side];
    const NodeId cubic_id = binary_producer(graph, add.inputs[side], inner_id, "Mul");
    if (cubic_id == kNoNode) continue;
    const ValueId p = operand_beside(graph, node_at(graph, cubic_id), kCubicCoefficient);
    if (p == kNoValue) continue;
    std::vector<NodeId> cube = cube_nodes(graph, p, cubic_id, x);
    if (cube.empty()) continue;
    cube.push_back(cubic_id);
    cube.push_back(inner_id);
    return GeluFront{x, std::move(cube)};
  }
  return std::nullopt;
}

// tanh form, back from the Tanh: s = Mul(inner, √(2/π)).
std::optional<GeluFront> tanh_front(const Graph& graph, NodeId tanh_id) {
  const ValueId s = node_at(graph, tanh_id).inputs[0];
  const NodeId scale_id = binary_producer(graph, s, tanh_id, "Mul");
  if (scale_id == kNoNode) return std::nullopt;
  const ValueId inner = operand_beside(graph, node_at(graph, scale_id), kSqrt2OverPi);
  if (inner == kNoValue) return std::nullopt;
  std::optional<GeluFront> front = cubic_front(graph, inner, scale_id);
  if (front) front->nodes.push_back(scale_id);
  return front;
}

// Forward from the anchor's output e: a = Add(e, 1), then one of the three products with x and
// 0.5. Appends the pattern's nodes but the last to `match.removed` and sets `match.last`.
bool match_back(const Graph& graph, ValueId e, GeluMatch& match) {
  const NodeId add_id = binary_consumer(graph, e, "Add");
  if (add_id == kNoNode || !is_scalar(graph, other_operand(node_at(graph, add_id), e), 1.0)) {
    return false;
  }
  const ValueId a = node_at(graph, add_id).outputs[0];
  const NodeId first_id = binary_consumer(graph, a, "Mul");
  if (first_id == kNoNode) return false;
  const ValueId first_out = node_at(graph, first_id).outputs[0];
  const ValueId beside_a = other_operand(node_at(graph, first_id), a);
  if (beside_a == match.x || is_scalar(graph, beside_a, 0.5)) {
    // (x · a) · 0.5 or x · (a · 0.5): one more Mul by the missing factor.
    const NodeId second_id = binary_consumer(graph, first_out, "Mul");
    if (second_id == kNoNode) return false;
    const ValueId missing = other_operand(node_at(graph, second_id), first_out);
    const bool complete = beside_a == match.x ? is_scalar(graph, missing, 0.5) : missing == match.x;
    if (!complete) return false;
    match.removed.insert(match.removed.end(), {add_id, first_id});
    match.last = second_id;
    return true;
  }
  // (x · 0.5) · a: the half is made before the Mul by a.
  const NodeId half_id = binary_producer(graph, beside_a, first_id, "Mul");
  if (half_id == kNoNode ||
      !is_scalar(graph, other_operand(node_at(graph, half_id), match.x), 0.5)) {
    return false;
  }
  match.removed.insert(match.removed.end(), {add_id, half_id});
  match.last = first_id;
  return true;
}

// The GELU around anchor `anchor_id` (an Erf or Tanh), if the whole pattern is there.
std::optional<GeluMatch> match_gelu(const Graph& graph, NodeId anchor_id) {
  const bool erf = is_simple_op(graph, anchor_id, "Erf", 1);
  if (!erf && !is_simple_op(graph, anchor_id, "Tanh", 1)) return std::nullopt;
  const std::optional<GeluFront> front =
      erf ? erf_front(graph, anchor_id) : tanh_front(graph, anchor_id);
  if (!front) return std::nullopt;
  const Value& x = value_at(graph, front->x);
  if (x.kind == ValueKind::kWeight || x.dtype != DType::kFloat32) return std::nullopt;
  GeluMatch match;
  match.x = front->x;
  match.removed = front->nodes;
  match.removed.push_back(anchor_id);
  match.approximate = erf ? "none" : "tanh";
  const Node& anchor = node_at(graph, anchor_id);
  if (!match_back(graph, anchor.outputs[0], match)) return std::nullopt;
  const Value& y = value_at(graph, node_at(graph, match.last).outputs[0]);
  if (y.dtype != DType::kFloat32 || !(y.shape == x.shape)) return std::nullopt;
  return match;
}

// The last node of the pattern becomes the Gelu (its name and output survive; it runs after
// every other node of the pattern, so x is ready there); the others are removed.
void replace_with_gelu(Graph& graph, const GeluMatch& match) {
  for (NodeId id : match.removed) remove_node(graph, id);
  Node& gelu = graph.nodes[static_cast<size_t>(match.last)];
  gelu.op_type = "Gelu";
  gelu.domain.clear();
  gelu.inputs = {match.x};
  gelu.attributes = AttributeMap{};
  gelu.attributes.set("approximate", string_attribute(match.approximate));
  graph.rebuild_edges();
}

}  // namespace

Status fuse_gelus(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const std::optional<GeluMatch> match = match_gelu(graph, static_cast<NodeId>(n));
    if (!match) continue;
    replace_with_gelu(graph, *match);
    ++report.fused_gelus;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
