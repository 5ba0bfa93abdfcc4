// Pass: turn an activation that follows Conv / ConvTranspose / Gemm / MatMul into an epilogue of
// that producer (attributes onepool_activation / onepool_alpha / onepool_beta, as documented in
// runtime/cpu/kernels/activation.h).
//
// The producer's output must feed only the activation and not be a graph output; float16 and
// bfloat16 producers take only the activations that commute with rounding (epilogue_fits_dtype).
// The producer then writes the activation's output value (its name survives). A producer takes at
// most one epilogue. Besides the single-node activations, the exporter pattern y = Mul(x,
// HardSigmoid(x)) (x feeding exactly those two nodes) becomes "HardSigmoidMul" with the
// HardSigmoid's alpha/beta.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "planner/core/half_float.h"
#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

struct Epilogue {
  std::string name;
  float alpha = 0.0f;
  float beta = 0.0f;
};

constexpr float kInfinity = std::numeric_limits<float>::infinity();

// A Clip bound given as input `index` (opset >= 11): missing = `fallback`, non-constant = none.
std::optional<float> clip_bound(const Graph& graph, const Node& clip, size_t index,
                                float fallback) {
  if (clip.input(index) == kNoValue) return fallback;
  const HostTensor* bound = weight_of(graph, clip.input(index));
  if (bound == nullptr || bound->element_count() != 1) return std::nullopt;
  return static_cast<float>(bound->float_at(0));
}

std::optional<Epilogue> clip_epilogue(const Graph& graph, const Node& clip) {
  if (graph.opset < 11) {
    return Epilogue{"Clip", clip.attributes.get_float("min", -kInfinity),
                    clip.attributes.get_float("max", kInfinity)};
  }
  const std::optional<float> low = clip_bound(graph, clip, 1, -kInfinity);
  const std::optional<float> high = clip_bound(graph, clip, 2, kInfinity);
  if (!low || !high) return std::nullopt;
  return Epilogue{"Clip", *low, *high};
}

// The epilogue that activation node `node` computes, or none when it is not one.
std::optional<Epilogue> epilogue_of(const Graph& graph, const Node& node) {
  const AttributeMap& attributes = node.attributes;
  if (is_op(node, "Relu")) return Epilogue{"Relu"};
  if (is_op(node, "Sigmoid")) return Epilogue{"Sigmoid"};
  if (is_op(node, "HardSwish")) return Epilogue{"HardSwish"};
  if (is_op(node, "LeakyRelu")) return Epilogue{"LeakyRelu", attributes.get_float("alpha", 0.01f)};
  if (is_op(node, "HardSigmoid")) {
    return Epilogue{"HardSigmoid", attributes.get_float("alpha", 0.2f),
                    attributes.get_float("beta", 0.5f)};
  }
  if (is_op(node, "Clip")) return clip_epilogue(graph, node);
  return std::nullopt;
}

bool takes_epilogue(const Node& node) {
  return is_op(node, "Conv") || is_op(node, "ConvTranspose") || is_op(node, "Gemm") ||
         is_op(node, "MatMul");
}

// True when `value` (a Clip bound) is exactly representable in `dtype` (float16 / bfloat16).
bool representable(float value, DType dtype) {
  if (std::isinf(value)) return true;
  const float narrow = dtype == DType::kFloat16 ? half_bits_to_float(float_to_half_bits(value))
                                                : bfloat_bits_to_float(float_to_bfloat_bits(value));
  return narrow == value;
}

// True when `epilogue` may run on values of `dtype`. Every float32 one. On float16 / bfloat16
// producers (which compute in float32 and round their output once) only the ones that commute
// with that rounding, so the fused node gives the unfused pair's values: Relu and Clip with
// bounds the type holds (rounding to nearest is monotone and keeps such a bound and zero). Only a
// zero's sign may differ: a sum that rounds to -0 stays -0 through the unfused Relu, the fused one
// gives +0. Sigmoid, HardSwish, LeakyRelu... of a rounded value differ from the rounded one.
bool epilogue_fits_dtype(const Epilogue& epilogue, DType dtype) {
  if (dtype == DType::kFloat32) return true;
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16) return false;
  if (epilogue.name == "Relu") return true;
  return epilogue.name == "Clip" && representable(epilogue.alpha, dtype) &&
         representable(epilogue.beta, dtype);
}

// The producer of `x` when it can take `epilogue`, else nullptr. Does not check consumers.
Node* epilogue_host(Graph& graph, ValueId x, const Epilogue& epilogue) {
  if (x == kNoValue || !epilogue_fits_dtype(epilogue, value_at(graph, x).dtype)) return nullptr;
  Node* producer = producer_of(graph, x);
  if (producer == nullptr || !takes_epilogue(*producer) || has_fused_activation(*producer)) {
    return nullptr;
  }
  return producer->outputs.size() == 1 ? producer : nullptr;
}

void attach(Node& producer, const Epilogue& epilogue, ValueId output) {
  producer.attributes.set("onepool_activation", string_attribute(epilogue.name));
  producer.attributes.set("onepool_alpha", float_attribute(epilogue.alpha));
  producer.attributes.set("onepool_beta", float_attribute(epilogue.beta));
  producer.outputs[0] = output;
}

// The Mul of y = Mul(x, HardSigmoid(x)) when node `hs_id` is that HardSigmoid and x feeds only
// the two of them; else kNoNode.
NodeId hard_sigmoid_mul(const Graph& graph, NodeId hs_id) {
  const Node& hs = graph.nodes[static_cast<size_t>(hs_id)];
  const ValueId x = hs.input(0);
  const ValueId gate = hs.outputs[0];
  const Value& x_value = value_at(graph, x);
  if (x_value.is_graph_output || x_value.consumers.size() != 2) return kNoNode;
  const Value& gate_value = value_at(graph, gate);
  if (gate_value.is_graph_output || gate_value.consumers.size() != 1) return kNoNode;
  const NodeId mul_id = gate_value.consumers[0];
  const Node& mul = graph.nodes[static_cast<size_t>(mul_id)];
  if (!is_op(mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return kNoNode;
  const bool pattern = (mul.inputs[0] == x && mul.inputs[1] == gate) ||
                       (mul.inputs[0] == gate && mul.inputs[1] == x);
  const bool feeds_both = (x_value.consumers[0] == hs_id && x_value.consumers[1] == mul_id) ||
                          (x_value.consumers[0] == mul_id && x_value.consumers[1] == hs_id);
  if (!pattern || !feeds_both) return kNoNode;
  const Value& y = value_at(graph, mul.outputs[0]);
  return y.dtype == x_value.dtype && y.shape == x_value.shape ? mul_id : kNoNode;
}

bool fuse_one(Graph& graph, NodeId act_id) {
  const Node& act = graph.nodes[static_cast<size_t>(act_id)];
  if (act.inputs.empty() || act.outputs.size() != 1 || act.outputs[0] == kNoValue) return false;
  std::optional<Epilogue> epilogue = epilogue_of(graph, act);
  const ValueId x = act.inputs[0];
  Node* producer = epilogue ? epilogue_host(graph, x, *epilogue) : nullptr;
  if (producer == nullptr) return false;
  const Value& y = value_at(graph, act.outputs[0]);
  if (!(y.shape == value_at(graph, x).shape) || y.dtype != value_at(graph, x).dtype) return false;
  if (only_feeds(graph, x, act_id)) {
    attach(*producer, *epilogue, act.outputs[0]);
    remove_node(graph, act_id);
    graph.rebuild_edges();
    return true;
  }
  if (epilogue->name != "HardSigmoid") return false;
  const NodeId mul_id = hard_sigmoid_mul(graph, act_id);
  if (mul_id == kNoNode) return false;
  epilogue->name = "HardSigmoidMul";
  attach(*producer, *epilogue, graph.nodes[static_cast<size_t>(mul_id)].outputs[0]);
  remove_node(graph, act_id);
  remove_node(graph, mul_id);
  graph.rebuild_edges();
  return true;
}

}  // namespace

Status fuse_activations(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (fuse_one(graph, static_cast<NodeId>(n))) ++report.fused_activations;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
