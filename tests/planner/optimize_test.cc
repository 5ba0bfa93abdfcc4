// Tests for the graph optimizer (planner/optimize): each scenario builds a small Graph by hand,
// runs optimize_graph, and checks the nodes, attributes and folded weights that result, plus the
// invariants compact_graph promises (dense ids, no dead values or weights, current edges).
#include "planner/optimize/optimize.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "planner/graph.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool {
namespace {

Attribute float_attr(float value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloat;
  attribute.f = value;
  return attribute;
}

Attribute ints_attr(std::vector<int64_t> values) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInts;
  attribute.ints = std::move(values);
  return attribute;
}

// Builds a Graph value by value and node by node; finish() rebuilds the edges.
class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 13) { graph_.opset = opset; }

  ValueId input(const std::string& name, Shape shape) {
    const ValueId id = value(name, shape);
    graph_.values[static_cast<size_t>(id)].kind = ValueKind::kGraphInput;
    graph_.inputs.push_back(id);
    return id;
  }
  ValueId value(const std::string& name, Shape shape) {
    Value value;
    value.name = name;
    value.dtype = DType::kFloat32;
    value.shape = shape;
    return graph_.add_value(value);
  }
  ValueId weight(const std::string& name, Shape shape, const std::vector<float>& data) {
    const ValueId id = value(name, shape);
    Value& value = graph_.values[static_cast<size_t>(id)];
    value.kind = ValueKind::kWeight;
    value.weight_index = static_cast<int32_t>(graph_.weights.size());
    HostTensor tensor;
    tensor.dtype = DType::kFloat32;
    tensor.shape = shape;
    tensor.data.resize(data.size() * sizeof(float));
    std::memcpy(tensor.data.data(), data.data(), tensor.data.size());
    graph_.weights.push_back(tensor);
    return id;
  }
  void output(ValueId id) {
    graph_.values[static_cast<size_t>(id)].is_graph_output = true;
    graph_.outputs.push_back(id);
  }
  Node& node(const std::string& op, std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
    Node node;
    node.name = op + "_" + std::to_string(graph_.nodes.size());
    node.op_type = op;
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    graph_.nodes.push_back(node);
    return graph_.nodes.back();
  }
  Graph finish() {
    graph_.rebuild_edges();
    return graph_;
  }

 private:
  Graph graph_;
};

std::vector<float> weight_values(const Graph& graph, ValueId id) {
  const HostTensor& tensor = graph.weight(id);
  std::vector<float> values(tensor.data.size() / sizeof(float));
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

const Value& value_named(const Graph& graph, const std::string& name) {
  const ValueId id = graph.find_value(name);
  REQUIRE(id != kNoValue);
  return graph.values[static_cast<size_t>(id)];
}

std::string name_of(const Graph& graph, ValueId id) {
  return graph.values[static_cast<size_t>(id)].name;
}

// compact_graph's promises: every id in range, every value and weight referenced, edges current.
void check_compact(const Graph& graph) {
  std::vector<int> references(graph.values.size(), 0);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId id : graph.nodes[n].inputs) {
      if (id == kNoValue) continue;
      REQUIRE(id >= 0);
      REQUIRE(static_cast<size_t>(id) < graph.values.size());
      ++references[static_cast<size_t>(id)];
    }
    for (ValueId id : graph.nodes[n].outputs) {
      if (id == kNoValue) continue;
      REQUIRE(static_cast<size_t>(id) < graph.values.size());
      CHECK(graph.values[static_cast<size_t>(id)].producer == static_cast<NodeId>(n));
      ++references[static_cast<size_t>(id)];
    }
  }
  for (ValueId id : graph.inputs) ++references[static_cast<size_t>(id)];
  for (ValueId id : graph.outputs) ++references[static_cast<size_t>(id)];
  std::vector<int> weight_uses(graph.weights.size(), 0);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    CHECK_MESSAGE(references[v] > 0, "dead value '", graph.values[v].name, "'");
    if (graph.values[v].kind != ValueKind::kWeight) continue;
    const int32_t index = graph.values[v].weight_index;
    REQUIRE(index >= 0);
    REQUIRE(static_cast<size_t>(index) < graph.weights.size());
    ++weight_uses[static_cast<size_t>(index)];
  }
  for (int uses : weight_uses) CHECK(uses > 0);
}

OptimizeReport optimize_ok(Graph& graph, OptimizeLevel level) {
  Expected<OptimizeReport> report = optimize_graph(graph, level);
  REQUIRE_MESSAGE(report.has_value(), report.status().to_string());
  check_compact(graph);
  return *report;
}

TEST_CASE("parse_optimize_level accepts none, basic, all and names the bad text") {
  CHECK(*parse_optimize_level("none") == OptimizeLevel::kNone);
  CHECK(*parse_optimize_level("basic") == OptimizeLevel::kBasic);
  CHECK(*parse_optimize_level("all") == OptimizeLevel::kAll);
  const auto bad = parse_optimize_level("fast");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.status().message().find("'fast'") != std::string::npos);
}

// x -> Relu -> a -> Identity -> b -> Sigmoid -> y: the Identity goes, Sigmoid reads a directly.
// 3 nodes before, 2 after; values left: x, a, y.
TEST_CASE("Identity in the middle of a chain is removed") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 4});
  const ValueId a = b.value("a", {1, 4});
  const ValueId mid = b.value("b", {1, 4});
  const ValueId y = b.value("y", {1, 4});
  b.node("Relu", {x}, {a});
  b.node("Identity", {a}, {mid});
  b.node("Sigmoid", {mid}, {y});
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kBasic);
  CHECK(report.removed_nodes == 1);
  CHECK(report.nodes_before == 3);
  CHECK(report.nodes_after == 2);
  REQUIRE(graph.nodes.size() == 2);
  CHECK(graph.nodes[0].op_type == "Relu");
  CHECK(graph.nodes[1].op_type == "Sigmoid");
  CHECK(name_of(graph, graph.nodes[1].inputs[0]) == "a");
  CHECK(graph.values.size() == 3);
  CHECK(graph.find_value("b") == kNoValue);
}

// x -> Relu -> a -> Identity -> y (graph output): Relu now produces "y" so the output keeps its
// name; "a" disappears. 1 node left.
TEST_CASE("Identity feeding a graph output keeps the output name") {
  GraphBuilder b;
  const ValueId x = b.input("x", {2, 2});
  const ValueId a = b.value("a", {2, 2});
  const ValueId y = b.value("y", {2, 2});
  b.node("Relu", {x}, {a});
  b.node("Identity", {a}, {y});
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kBasic);
  CHECK(report.removed_nodes == 1);
  REQUIRE(graph.nodes.size() == 1);
  CHECK(graph.nodes[0].op_type == "Relu");
  CHECK(name_of(graph, graph.nodes[0].outputs[0]) == "y");
  REQUIRE(graph.outputs.size() == 1);
  CHECK(name_of(graph, graph.outputs[0]) == "y");
  CHECK(graph.find_value("a") == kNoValue);
}

// Identity from a graph input straight to a graph output has no producer to rewire: it stays.
TEST_CASE("Identity from a graph input to a graph output is kept") {
  GraphBuilder b;
  const ValueId x = b.input("x", {3});
  const ValueId y = b.value("y", {3});
  b.node("Identity", {x}, {y});
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.removed_nodes == 0);
  REQUIRE(graph.nodes.size() == 1);
  CHECK(graph.nodes[0].op_type == "Identity");
  CHECK(name_of(graph, graph.outputs[0]) == "y");
}

// Dropout with an unused mask output disappears (mask value dropped too); a Dropout whose mask is
// a graph output stays. 4 nodes before: Relu, Dropout, Dropout(mask used), Sigmoid → 3 after.
TEST_CASE("Dropout is removed unless its mask is used") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 4});
  const ValueId a = b.value("a", {1, 4});
  const ValueId d = b.value("d", {1, 4});
  const ValueId mask = b.value("mask", {1, 4});
  const ValueId e = b.value("e", {1, 4});
  const ValueId mask2 = b.value("mask2", {1, 4});
  const ValueId y = b.value("y", {1, 4});
  b.node("Relu", {x}, {a});
  b.node("Dropout", {a}, {d, mask});
  b.node("Dropout", {d}, {e, mask2});
  b.node("Sigmoid", {e}, {y});
  b.output(y);
  b.output(mask2);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kBasic);
  CHECK(report.removed_nodes == 1);
  REQUIRE(graph.nodes.size() == 3);
  CHECK(graph.nodes[1].op_type == "Dropout");
  CHECK(name_of(graph, graph.nodes[1].inputs[0]) == "a");
  CHECK(graph.find_value("mask") == kNoValue);
  CHECK(graph.find_value("d") == kNoValue);
}

// Conv W [2,1,1,2] = [2,-4 | 3,1], B = [1,-1]; BN scale [0.5,2], bias [0.1,0.2], mean [1,-2],
// var [3.99,0.24], eps 0.01 → factor = scale/sqrt(var+eps) = [0.25, 4].
// W' = [0.5,-1 | 12,4]; B' = (B-mean)·factor + bias = [0·0.25+0.1, 1·4+0.2] = [0.1, 4.2].
// A second Conv shares W: its W must stay [2,-4,3,1].
TEST_CASE("BatchNormalization folds into the preceding Conv (2 channels)") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 3, 3});
  const ValueId w = b.weight("W", {2, 1, 1, 2}, {2, -4, 3, 1});
  const ValueId bias = b.weight("B", {2}, {1, -1});
  const ValueId c = b.value("c", {1, 2, 3, 2});
  const ValueId y = b.value("y", {1, 2, 3, 2});
  const ValueId other = b.value("other", {1, 2, 3, 2});
  b.node("Conv", {x, w, bias}, {c});
  Node& bn = b.node("BatchNormalization",
                    {c, b.weight("scale", {2}, {0.5f, 2}), b.weight("bn_bias", {2}, {0.1f, 0.2f}),
                     b.weight("mean", {2}, {1, -2}), b.weight("var", {2}, {3.99f, 0.24f})},
                    {y});
  bn.attributes.set("epsilon", float_attr(0.01f));
  b.node("Conv", {x, w}, {other});
  b.output(y);
  b.output(other);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kBasic);
  CHECK(report.folded_batchnorms == 1);
  REQUIRE(graph.nodes.size() == 2);
  const Node& conv = graph.nodes[0];
  CHECK(conv.op_type == "Conv");
  CHECK(name_of(graph, conv.outputs[0]) == "y");
  const std::vector<float> folded_w = weight_values(graph, conv.inputs[1]);
  const std::vector<float> folded_b = weight_values(graph, conv.inputs[2]);
  // The formula in double, with eps as the float attribute holds it.
  const double eps = 0.01f;
  const double f0 = 0.5 / std::sqrt(3.99f + eps);
  const double f1 = 2.0 / std::sqrt(0.24f + eps);
  REQUIRE(folded_w.size() == 4);
  CHECK(folded_w[0] == doctest::Approx(2 * f0).epsilon(1e-6));
  CHECK(folded_w[1] == doctest::Approx(-4 * f0).epsilon(1e-6));
  CHECK(folded_w[2] == doctest::Approx(3 * f1).epsilon(1e-6));
  CHECK(folded_w[3] == doctest::Approx(1 * f1).epsilon(1e-6));
  CHECK(folded_w[2] == doctest::Approx(12.0).epsilon(1e-5));
  REQUIRE(folded_b.size() == 2);
  CHECK(folded_b[0] == doctest::Approx((1 - 1) * f0 + 0.1f).epsilon(1e-6));
  CHECK(folded_b[1] == doctest::Approx((-1 + 2) * f1 + 0.2f).epsilon(1e-6));
  CHECK(folded_b[1] == doctest::Approx(4.2).epsilon(1e-5));
  // The shared W is untouched and still used by the second Conv; BN parameters are gone.
  CHECK(weight_values(graph, graph.nodes[1].inputs[1]) == std::vector<float>{2, -4, 3, 1});
  CHECK(graph.find_value("scale") == kNoValue);
  CHECK(graph.find_value("c") == kNoValue);
  CHECK(graph.find_value("B") == kNoValue);
}

// ConvTranspose W [C_in=2, C_out=2, 1, 1] = [[1,2],[3,4]] (output channel = second index), no bias;
// BN scale [2,0.5], var 0.5 + eps 0.5 = 1 → factor [2, 0.5]; mean [1,1], bias [0,0]:
// W' = [[2,1],[6,2]], B' = (0 - 1)·factor = [-2, -0.5].
TEST_CASE("BatchNormalization folds into ConvTranspose along W's axis 1") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2, 2, 2});
  const ValueId c = b.value("c", {1, 2, 2, 2});
  const ValueId y = b.value("y", {1, 2, 2, 2});
  b.node("ConvTranspose", {x, b.weight("W", {2, 2, 1, 1}, {1, 2, 3, 4})}, {c});
  Node& bn = b.node("BatchNormalization",
                    {c, b.weight("scale", {2}, {2, 0.5f}), b.weight("bn_bias", {2}, {0, 0}),
                     b.weight("mean", {2}, {1, 1}), b.weight("var", {2}, {0.5f, 0.5f})},
                    {y});
  bn.attributes.set("epsilon", float_attr(0.5f));
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kBasic);
  CHECK(report.folded_batchnorms == 1);
  REQUIRE(graph.nodes.size() == 1);
  REQUIRE(graph.nodes[0].inputs.size() == 3);
  const std::vector<float> w = weight_values(graph, graph.nodes[0].inputs[1]);
  CHECK(w == std::vector<float>{2, 1, 6, 2});
  CHECK(weight_values(graph, graph.nodes[0].inputs[2]) == std::vector<float>{-2, -0.5f});
}

// The Conv output also feeds a Relu: folding would change what the Relu sees, so nothing folds.
TEST_CASE("BatchNormalization is not folded when the Conv output has a second consumer") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 2, 2, 2});
  const ValueId y = b.value("y", {1, 2, 2, 2});
  const ValueId r = b.value("r", {1, 2, 2, 2});
  b.node("Conv", {x, b.weight("W", {2, 1, 1, 1}, {1, 2})}, {c});
  b.node("BatchNormalization",
         {c, b.weight("scale", {2}, {1, 1}), b.weight("bn_bias", {2}, {0, 0}),
          b.weight("mean", {2}, {0, 0}), b.weight("var", {2}, {1, 1})},
         {y});
  b.node("Relu", {c}, {r});
  b.output(y);
  b.output(r);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.folded_batchnorms == 0);
  CHECK(report.fused_activations == 0);
  REQUIRE(graph.nodes.size() == 3);
  CHECK(graph.nodes[1].op_type == "BatchNormalization");
}

// BN parameters with 3 elements against a 2-channel Conv: an error naming the node and both
// counts, and the caller's graph (nodes, weights) exactly as before.
TEST_CASE("an inconsistent BatchNormalization fails and leaves the graph unchanged") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 2, 2, 2});
  const ValueId mid = b.value("mid", {1, 2, 2, 2});
  const ValueId y = b.value("y", {1, 2, 2, 2});
  b.node("Conv", {x, b.weight("W", {2, 1, 1, 1}, {1, 2})}, {c});
  b.node("Identity", {c}, {mid});
  b.node("BatchNormalization",
         {mid, b.weight("scale", {3}, {1, 1, 1}), b.weight("bn_bias", {2}, {0, 0}),
          b.weight("mean", {2}, {0, 0}), b.weight("var", {2}, {1, 1})},
         {y});
  b.output(y);
  Graph graph = b.finish();
  const size_t values_before = graph.values.size();

  const Expected<OptimizeReport> report = optimize_graph(graph, OptimizeLevel::kAll);
  REQUIRE_FALSE(report.has_value());
  const std::string message = report.status().message();
  CHECK(message.find("BatchNormalization") != std::string::npos);
  CHECK(message.find("'scale'") != std::string::npos);
  CHECK(message.find("expected 2") != std::string::npos);
  CHECK(graph.nodes.size() == 3);
  CHECK(graph.nodes[1].op_type == "Identity");
  CHECK(graph.values.size() == values_before);
  REQUIRE(graph.weights.size() == 5);
  CHECK(weight_values(graph, graph.find_value("W")) == std::vector<float>{1, 2});
  CHECK(weight_values(graph, graph.find_value("scale")) == std::vector<float>{1, 1, 1});
}

// Conv with B = [1,2] then Add of a [1,2,1,1] constant [10,20] → B' = [11,22], Add removed and
// the Conv produces the Add's output "y". A [2]-shaped constant against a [1,2,3,2] output lines
// up with the last axis (W = 2), is not per-channel, and stays an Add.
TEST_CASE("Conv + Add of a per-channel constant becomes the Conv bias") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 3, 2});
  const ValueId c = b.value("c", {1, 2, 3, 2});
  const ValueId y = b.value("y", {1, 2, 3, 2});
  const ValueId c2 = b.value("c2", {1, 2, 3, 2});
  const ValueId y2 = b.value("y2", {1, 2, 3, 2});
  const ValueId w = b.weight("W", {2, 1, 1, 1}, {1, 2});
  b.node("Conv", {x, w, b.weight("B", {2}, {1, 2})}, {c});
  b.node("Add", {b.weight("k", {1, 2, 1, 1}, {10, 20}), c}, {y});
  b.node("Conv", {x, w}, {c2});
  b.node("Add", {c2, b.weight("last_axis", {2}, {5, 6})}, {y2});
  b.output(y);
  b.output(y2);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_biases == 1);
  REQUIRE(graph.nodes.size() == 3);
  CHECK(graph.nodes[0].op_type == "Conv");
  CHECK(name_of(graph, graph.nodes[0].outputs[0]) == "y");
  CHECK(weight_values(graph, graph.nodes[0].inputs[2]) == std::vector<float>{11, 22});
  CHECK(graph.nodes[2].op_type == "Add");
  CHECK(graph.find_value("c") == kNoValue);
}

// MatMul([4,3] input, W [3,5]) + Add(bias [5]) → Gemm(A, W, bias) writing "y". The batched
// MatMul ([2,4,3] input) + Add stays two nodes.
TEST_CASE("MatMul + Add becomes Gemm only for a 2-D input") {
  GraphBuilder b;
  const ValueId a = b.input("a", {4, 3});
  const ValueId a3 = b.input("a3", {2, 4, 3});
  const ValueId w = b.weight("W", {3, 5}, std::vector<float>(15, 1.0f));
  const ValueId bias = b.weight("bias", {5}, {1, 2, 3, 4, 5});
  const ValueId m = b.value("m", {4, 5});
  const ValueId y = b.value("y", {4, 5});
  const ValueId m3 = b.value("m3", {2, 4, 5});
  const ValueId y3 = b.value("y3", {2, 4, 5});
  b.node("MatMul", {a, w}, {m});
  b.node("Add", {m, bias}, {y});
  b.node("MatMul", {a3, w}, {m3});
  b.node("Add", {bias, m3}, {y3});
  b.output(y);
  b.output(y3);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_biases == 1);
  REQUIRE(graph.nodes.size() == 3);
  const Node& gemm = graph.nodes[0];
  CHECK(gemm.op_type == "Gemm");
  REQUIRE(gemm.inputs.size() == 3);
  CHECK(name_of(graph, gemm.inputs[0]) == "a");
  CHECK(name_of(graph, gemm.inputs[1]) == "W");
  CHECK(name_of(graph, gemm.inputs[2]) == "bias");
  CHECK(name_of(graph, gemm.outputs[0]) == "y");
  CHECK(gemm.attributes.get_int("transB", -1) == 0);
  CHECK(gemm.attributes.get_float("beta", 0.0f) == 1.0f);
  CHECK(graph.nodes[1].op_type == "MatMul");
  CHECK(graph.nodes[2].op_type == "Add");
}

// Conv -> Relu: the Conv carries onepool_activation "Relu" and writes "y"; 1 node left. At level
// basic nothing is fused.
TEST_CASE("Relu fuses into the producing Conv at level all only") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 1, 2, 2});
  const ValueId y = b.value("y", {1, 1, 2, 2});
  b.node("Conv", {x, b.weight("W", {1, 1, 1, 1}, {3})}, {c});
  b.node("Relu", {c}, {y});
  b.output(y);
  Graph basic = b.finish();
  Graph all = basic;

  CHECK(optimize_ok(basic, OptimizeLevel::kBasic).fused_activations == 0);
  CHECK(basic.nodes.size() == 2);

  const OptimizeReport report = optimize_ok(all, OptimizeLevel::kAll);
  CHECK(report.fused_activations == 1);
  REQUIRE(all.nodes.size() == 1);
  CHECK(all.nodes[0].attributes.get_string("onepool_activation", "") == "Relu");
  CHECK(name_of(all, all.nodes[0].outputs[0]) == "y");
}

// Opset 13 Clip(c, min=0, max=6) with constant bounds → alpha 0, beta 6. Clip(c2, "", max=1) →
// alpha -inf, beta 1. Clip(c3, min from a graph input) stays a node.
TEST_CASE("Clip with constant inputs (opset 13) fuses with min/max as alpha/beta") {
  GraphBuilder b(13);
  const ValueId x = b.input("x", {1, 4});
  const ValueId lo = b.input("lo", {});
  const ValueId w = b.weight("W", {4, 4}, std::vector<float>(16, 0.5f));
  std::vector<ValueId> outs;
  for (const char* name : {"m1", "y1", "m2", "y2", "m3", "y3"}) {
    outs.push_back(b.value(name, {1, 4}));
  }
  b.node("MatMul", {x, w}, {outs[0]});
  b.node("Clip", {outs[0], b.weight("zero", {}, {0}), b.weight("six", {}, {6})}, {outs[1]});
  b.node("Gemm", {x, w}, {outs[2]});
  b.node("Clip", {outs[2], kNoValue, b.weight("one", {}, {1})}, {outs[3]});
  b.node("MatMul", {x, w}, {outs[4]});
  b.node("Clip", {outs[4], lo}, {outs[5]});
  for (int i : {1, 3, 5}) b.output(outs[static_cast<size_t>(i)]);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_activations == 2);
  REQUIRE(graph.nodes.size() == 4);
  const AttributeMap& first = graph.nodes[0].attributes;
  CHECK(first.get_string("onepool_activation", "") == "Clip");
  CHECK(first.get_float("onepool_alpha", -1) == 0.0f);
  CHECK(first.get_float("onepool_beta", -1) == 6.0f);
  const AttributeMap& second = graph.nodes[1].attributes;
  CHECK(second.get_string("onepool_activation", "") == "Clip");
  CHECK(second.get_float("onepool_alpha", 0) == -std::numeric_limits<float>::infinity());
  CHECK(second.get_float("onepool_beta", 0) == 1.0f);
  CHECK_FALSE(graph.nodes[2].attributes.has("onepool_activation"));
  CHECK(graph.nodes[3].op_type == "Clip");
}

// Opset 6 Clip takes min/max from attributes: min -1, max 1 → alpha -1, beta 1.
TEST_CASE("Clip with attributes (opset 6) fuses") {
  GraphBuilder b(6);
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 1, 2, 2});
  const ValueId y = b.value("y", {1, 1, 2, 2});
  b.node("Conv", {x, b.weight("W", {1, 1, 1, 1}, {3})}, {c});
  Node& clip = b.node("Clip", {c}, {y});
  clip.attributes.set("min", float_attr(-1));
  clip.attributes.set("max", float_attr(1));
  b.output(y);
  Graph graph = b.finish();

  optimize_ok(graph, OptimizeLevel::kAll);
  REQUIRE(graph.nodes.size() == 1);
  CHECK(graph.nodes[0].attributes.get_float("onepool_alpha", 0) == -1.0f);
  CHECK(graph.nodes[0].attributes.get_float("onepool_beta", 0) == 1.0f);
}

// The exporter's hard-swish: c = Conv(x); h = HardSigmoid(c, alpha 1/6, beta 0.5); y = Mul(c, h)
// → one Conv with HardSigmoidMul, alpha 1/6, beta 0.5, writing "y"; 3 nodes → 1.
TEST_CASE("x * HardSigmoid(x) fuses as HardSigmoidMul") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 1, 2, 2});
  const ValueId h = b.value("h", {1, 1, 2, 2});
  const ValueId y = b.value("y", {1, 1, 2, 2});
  b.node("Conv", {x, b.weight("W", {1, 1, 1, 1}, {3})}, {c});
  Node& hs = b.node("HardSigmoid", {c}, {h});
  hs.attributes.set("alpha", float_attr(1.0f / 6.0f));
  b.node("Mul", {h, c}, {y});
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_activations == 1);
  CHECK(report.nodes_after == 1);
  REQUIRE(graph.nodes.size() == 1);
  const AttributeMap& attributes = graph.nodes[0].attributes;
  CHECK(attributes.get_string("onepool_activation", "") == "HardSigmoidMul");
  CHECK(attributes.get_float("onepool_alpha", 0) == doctest::Approx(1.0 / 6.0));
  CHECK(attributes.get_float("onepool_beta", 0) == 0.5f);
  CHECK(name_of(graph, graph.nodes[0].outputs[0]) == "y");
  CHECK(graph.find_value("h") == kNoValue);
}

// The Conv output "c" is itself a graph output: fusing would lose it, so Conv and Relu both stay.
TEST_CASE("no fusion when the producer's output is a graph output") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 1, 2, 2});
  const ValueId y = b.value("y", {1, 1, 2, 2});
  b.node("Conv", {x, b.weight("W", {1, 1, 1, 1}, {3})}, {c});
  b.node("Relu", {c}, {y});
  b.output(c);
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_activations == 0);
  REQUIRE(graph.nodes.size() == 2);
  CHECK_FALSE(graph.nodes[0].attributes.has("onepool_activation"));
}

// Conv -> LeakyRelu(alpha 0.1) -> Sigmoid: LeakyRelu fuses, Sigmoid must not fuse a second time.
TEST_CASE("a producer takes at most one activation") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 1, 2, 2});
  const ValueId l = b.value("l", {1, 1, 2, 2});
  const ValueId y = b.value("y", {1, 1, 2, 2});
  b.node("Conv", {x, b.weight("W", {1, 1, 1, 1}, {3})}, {c});
  b.node("LeakyRelu", {c}, {l}).attributes.set("alpha", float_attr(0.1f));
  b.node("Sigmoid", {l}, {y});
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_activations == 1);
  REQUIRE(graph.nodes.size() == 2);
  CHECK(graph.nodes[0].attributes.get_string("onepool_activation", "") == "LeakyRelu");
  CHECK(graph.nodes[0].attributes.get_float("onepool_alpha", 0) == 0.1f);
  CHECK(graph.nodes[1].op_type == "Sigmoid");
}

// Conv(W [1,1,1,1] = 2, no bias) -> BN(scale 3, bias 1, mean 0, var 0.75 + eps 0.25 = 1) ->
// Relu, all levels at once: one Conv with W' = 6, B' = 1, activation Relu; counts 1/1/0 fused.
TEST_CASE("Conv + BatchNormalization + Relu collapse into one Conv at level all") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId c = b.value("c", {1, 1, 2, 2});
  const ValueId n = b.value("n", {1, 1, 2, 2});
  const ValueId y = b.value("y", {1, 1, 2, 2});
  b.node("Conv", {x, b.weight("W", {1, 1, 1, 1}, {2})}, {c});
  b.node("BatchNormalization",
         {c, b.weight("scale", {1}, {3}), b.weight("bn_bias", {1}, {1}), b.weight("mean", {1}, {0}),
          b.weight("var", {1}, {0.75f})},
         {n})
      .attributes.set("epsilon", float_attr(0.25f));
  b.node("Relu", {n}, {y});
  b.output(y);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.folded_batchnorms == 1);
  CHECK(report.fused_activations == 1);
  CHECK(report.fused_biases == 0);
  CHECK(report.nodes_before == 3);
  CHECK(report.nodes_after == 1);
  REQUIRE(graph.nodes.size() == 1);
  CHECK(weight_values(graph, graph.nodes[0].inputs[1]) == std::vector<float>{6});
  CHECK(weight_values(graph, graph.nodes[0].inputs[2]) == std::vector<float>{1});
  CHECK(graph.nodes[0].attributes.get_string("onepool_activation", "") == "Relu");
  // Values left: x, y, W', B' (the original W and the BN parameters are dropped).
  CHECK(graph.values.size() == 4);
  CHECK(graph.weights.size() == 2);
}

// A chain of 3000 Conv -> Relu blocks (plus an Identity every 10 blocks): every Relu fuses and
// every Identity goes, 6300 nodes → 3000 Convs, each with onepool_activation "Relu". Guards the
// O(rewrites × (nodes + values)) cost: this runs in well under a second.
TEST_CASE("a long Conv + Relu chain fuses completely") {
  constexpr int kBlocks = 3000;
  GraphBuilder b;
  ValueId x = b.input("x", {1, 1, 2, 2});
  const ValueId w = b.weight("W", {1, 1, 1, 1}, {0.5f});
  for (int i = 0; i < kBlocks; ++i) {
    const ValueId c = b.value(str_cat("c", i), {1, 1, 2, 2});
    const ValueId r = b.value(str_cat("r", i), {1, 1, 2, 2});
    b.node("Conv", {x, w}, {c});
    b.node("Relu", {c}, {r});
    x = r;
    if (i % 10 != 0) continue;
    const ValueId id = b.value(str_cat("i", i), {1, 1, 2, 2});
    b.node("Identity", {r}, {id});
    x = id;
  }
  b.output(x);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.nodes_before == 2 * kBlocks + kBlocks / 10);
  CHECK(report.removed_nodes == kBlocks / 10);
  CHECK(report.fused_activations == kBlocks);
  REQUIRE(graph.nodes.size() == static_cast<size_t>(kBlocks));
  int relu_epilogues = 0;
  for (const Node& node : graph.nodes) {
    relu_epilogues += node.attributes.get_string("onepool_activation", "") == "Relu" ? 1 : 0;
  }
  CHECK(relu_epilogues == kBlocks);
  // The last Conv writes the graph output "r2999" (the last block has no Identity).
  CHECK(name_of(graph, graph.nodes.back().outputs[0]) == "r2999");
  CHECK(name_of(graph, graph.outputs[0]) == "r2999");
}

// compact_graph on a graph with dead entries: values [x, dead, w_dead, y, w] and weights
// [w_dead data, w data] → values [x, y, w] (ids 0,1,2), weights [w data], graph io kept.
TEST_CASE("compact_graph drops unreferenced values and weights and renumbers densely") {
  GraphBuilder b;
  const ValueId x = b.input("x", {2});
  b.value("dead", {2});
  b.weight("w_dead", {2}, {7, 8});
  const ValueId y = b.value("y", {2});
  const ValueId w = b.weight("w", {2}, {1, 2});
  b.node("Add", {x, w}, {y});
  b.output(y);
  Graph graph = b.finish();

  compact_graph(graph);
  check_compact(graph);
  REQUIRE(graph.values.size() == 3);
  CHECK(graph.values[0].name == "x");
  CHECK(graph.values[1].name == "y");
  CHECK(graph.values[2].name == "w");
  CHECK(graph.inputs == std::vector<ValueId>{0});
  CHECK(graph.outputs == std::vector<ValueId>{1});
  CHECK(graph.nodes[0].inputs == std::vector<ValueId>{0, 2});
  REQUIRE(graph.weights.size() == 1);
  CHECK(weight_values(graph, 2) == std::vector<float>{1, 2});
  CHECK(graph.values[1].producer == 0);
  CHECK(value_named(graph, "x").consumers == std::vector<NodeId>{0});
}

// Level none returns the graph untouched (the Identity stays, dead values stay).
TEST_CASE("level none changes nothing") {
  GraphBuilder b;
  const ValueId x = b.input("x", {2});
  const ValueId a = b.value("a", {2});
  const ValueId y = b.value("y", {2});
  b.node("Relu", {x}, {a});
  b.node("Identity", {a}, {y});
  b.output(y);
  b.value("unused", {2});
  Graph graph = b.finish();

  Expected<OptimizeReport> report = optimize_graph(graph, OptimizeLevel::kNone);
  REQUIRE(report.has_value());
  CHECK(report->nodes_before == 2);
  CHECK(report->nodes_after == 2);
  CHECK(graph.nodes.size() == 2);
  CHECK(graph.values.size() == 4);
}

// --- end to end: the CPU kernels on the graph before and after optimizing ----------------------

// Runs every node of `graph` in order with the CPU kernels (one host buffer per value) and returns
// the graph outputs. `inputs` follow graph.inputs.
Expected<std::vector<HostTensor>> run_graph(const Graph& graph,
                                            const std::vector<HostTensor>& inputs) {
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  cpu::ThreadPool pool(2);
  std::vector<HostTensor> tensors(graph.values.size());
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    tensors[static_cast<size_t>(graph.inputs[i])] = inputs[i];
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (graph.values[v].kind == ValueKind::kWeight) {
      tensors[v] = graph.weight(static_cast<ValueId>(v));
    }
  }
  auto view = [&tensors](ValueId id) {
    if (id == kNoValue) return TensorView{};
    HostTensor& t = tensors[static_cast<size_t>(id)];
    return TensorView{t.data.data(), t.dtype, t.shape, Device{}};
  };
  for (const Node& node : graph.nodes) {
    const cpu::KernelFactory factory = registry.find(node.op_type);
    if (factory == nullptr) return make_status(StatusCode::kUnsupported, node.op_type);
    ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared, factory(cpu::NodeContext(graph, node)));
    std::vector<TensorView> in_views;
    std::vector<TensorView> out_views;
    for (ValueId id : node.inputs) in_views.push_back(view(id));
    for (ValueId id : node.outputs) {
      const Value& value = graph.values[static_cast<size_t>(id)];
      HostTensor& t = tensors[static_cast<size_t>(id)];
      t.dtype = value.dtype;
      t.shape = value.shape;
      t.data.assign(value.bytes(), std::byte{0xCD});
      out_views.push_back(view(id));
    }
    std::vector<std::byte> workspace(prepared.workspace_bytes + 1);
    cpu::RunContext context;
    context.inputs = in_views;
    context.outputs = out_views;
    context.workspace = workspace.data();
    context.workspace_bytes = prepared.workspace_bytes;
    context.threads = &pool;
    ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context).with_context(describe_node(node)));
  }
  std::vector<HostTensor> outputs;
  for (ValueId id : graph.outputs) outputs.push_back(tensors[static_cast<size_t>(id)]);
  return outputs;
}

// Deterministic values in [-1, 1) (a small LCG), so every run sees the same numbers.
std::vector<float> pseudo_random(size_t count, uint32_t seed) {
  std::vector<float> values(count);
  for (float& value : values) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return values;
}

HostTensor random_tensor(Shape shape, uint32_t seed) {
  HostTensor tensor;
  tensor.dtype = DType::kFloat32;
  tensor.shape = shape;
  const std::vector<float> values = pseudo_random(static_cast<size_t>(shape.element_count()), seed);
  tensor.data.resize(values.size() * sizeof(float));
  std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
  return tensor;
}

// Runs `graph` before and after optimize(all) on `inputs`; returns the largest absolute output
// difference (the outputs are O(1), so float rounding stays far below 1e-4).
double max_difference_after_optimizing(const Graph& graph, const std::vector<HostTensor>& inputs,
                                       int expected_nodes_after) {
  Expected<std::vector<HostTensor>> before = run_graph(graph, inputs);
  REQUIRE_MESSAGE(before.has_value(), before.status().to_string());
  Graph optimized = graph;
  const OptimizeReport report = optimize_ok(optimized, OptimizeLevel::kAll);
  CHECK(report.nodes_after == expected_nodes_after);
  Expected<std::vector<HostTensor>> after = run_graph(optimized, inputs);
  REQUIRE_MESSAGE(after.has_value(), after.status().to_string());
  REQUIRE(before->size() == after->size());
  double worst = 0.0;
  for (size_t o = 0; o < before->size(); ++o) {
    const HostTensor& a = (*before)[o];
    const HostTensor& b = (*after)[o];
    REQUIRE(a.shape == b.shape);
    for (int64_t i = 0; i < a.element_count(); ++i) {
      worst = std::max(worst, std::abs(a.float_at(i) - b.float_at(i)));
    }
  }
  return worst;
}

std::vector<float> positive(std::vector<float> values) {
  for (float& value : values) value = 0.5f + std::abs(value);
  return values;
}

// Conv(3→4, 3x3, pad 1) + BN + Add([1,4,1,1]) + x·HardSigmoid(x): 5 nodes → 1 Conv; the outputs
// agree within 1e-4.
TEST_CASE("end to end: Conv + BN + bias + HardSigmoidMul gives the same outputs") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 3, 5, 5});
  const ValueId c = b.value("c", {1, 4, 5, 5});
  const ValueId n = b.value("n", {1, 4, 5, 5});
  const ValueId a = b.value("a", {1, 4, 5, 5});
  const ValueId h = b.value("h", {1, 4, 5, 5});
  const ValueId y = b.value("y", {1, 4, 5, 5});
  Node& conv = b.node("Conv",
                      {x, b.weight("W", {4, 3, 3, 3}, pseudo_random(108, 1)),
                       b.weight("B", {4}, pseudo_random(4, 2))},
                      {c});
  conv.attributes.set("pads", ints_attr({1, 1, 1, 1}));
  b.node("BatchNormalization",
         {c, b.weight("scale", {4}, pseudo_random(4, 3)),
          b.weight("bn_bias", {4}, pseudo_random(4, 4)), b.weight("mean", {4}, pseudo_random(4, 5)),
          b.weight("var", {4}, positive(pseudo_random(4, 6)))},
         {n});
  b.node("Add", {n, b.weight("k", {1, 4, 1, 1}, pseudo_random(4, 7))}, {a});
  b.node("HardSigmoid", {a}, {h}).attributes.set("alpha", float_attr(1.0f / 6.0f));
  b.node("Mul", {a, h}, {y});
  b.output(y);
  const Graph graph = b.finish();

  CHECK(max_difference_after_optimizing(graph, {random_tensor({1, 3, 5, 5}, 8)}, 1) < 1e-4);
}

// ConvTranspose(2→3, 2x2, stride 2) + BN + Clip(0, 0.5) (opset 13): 3 nodes → 1.
TEST_CASE("end to end: ConvTranspose + BN + Clip gives the same outputs") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2, 3, 3});
  const ValueId c = b.value("c", {1, 3, 6, 6});
  const ValueId n = b.value("n", {1, 3, 6, 6});
  const ValueId y = b.value("y", {1, 3, 6, 6});
  Node& deconv =
      b.node("ConvTranspose", {x, b.weight("W", {2, 3, 2, 2}, pseudo_random(24, 11))}, {c});
  deconv.attributes.set("strides", ints_attr({2, 2}));
  b.node(
      "BatchNormalization",
      {c, b.weight("scale", {3}, pseudo_random(3, 12)),
       b.weight("bn_bias", {3}, pseudo_random(3, 13)), b.weight("mean", {3}, pseudo_random(3, 14)),
       b.weight("var", {3}, positive(pseudo_random(3, 15)))},
      {n});
  b.node("Clip", {n, b.weight("lo", {}, {0}), b.weight("hi", {}, {0.5f})}, {y});
  b.output(y);
  const Graph graph = b.finish();

  CHECK(max_difference_after_optimizing(graph, {random_tensor({1, 2, 3, 3}, 16)}, 1) < 1e-4);
}

// MatMul([4,6] x [6,5]) + Add([5]) + LeakyRelu(0.2) + Identity → one Gemm writing "y".
TEST_CASE("end to end: MatMul + Add + LeakyRelu + Identity gives the same outputs") {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 6});
  const ValueId m = b.value("m", {4, 5});
  const ValueId a = b.value("a", {4, 5});
  const ValueId l = b.value("l", {4, 5});
  const ValueId y = b.value("y", {4, 5});
  b.node("MatMul", {x, b.weight("W", {6, 5}, pseudo_random(30, 21))}, {m});
  b.node("Add", {b.weight("bias", {5}, pseudo_random(5, 22)), m}, {a});
  b.node("LeakyRelu", {a}, {l}).attributes.set("alpha", float_attr(0.2f));
  b.node("Identity", {l}, {y});
  b.output(y);
  const Graph graph = b.finish();

  CHECK(max_difference_after_optimizing(graph, {random_tensor({4, 6}, 23)}, 1) < 1e-4);
}

}  // namespace
}  // namespace onepool
