// Graph optimizer: bias folding, MatMul + Add -> Gemm, activation epilogues, GELU chains -> Gelu.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "planner/optimize_test_util.h"

namespace onepool::testing {
namespace {

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

// --- GELU: the decomposed erf and tanh chains become one Gelu node -----------------------------

// How a test GELU chain over x [2,3] is spelled (the exporters' variants).
struct GeluSpelling {
  bool tanh = false;          // GPT-2's tanh form instead of BERT's erf form
  bool scale_by_mul = false;  // erf: Mul(x, 0.70710678) instead of Div(x, 1.41421356)
  bool cube_by_muls = false;  // tanh: x · (x · x) instead of Pow(x, 3)
  bool swap = false;          // every Add and Mul with its operands in the other order
  int product = 0;            // 0: (x · a) · 0.5, 1: (x · 0.5) · a, 2: x · (a · 0.5)
  float half = 0.5f;
  bool second_reader = false;  // a = 1 + Erf/Tanh(...) also feeds a Relu writing output "z"
};

// Builds y = GELU(x) as spelled; the constants are rank-0 weights except 1 (shape [1]).
class GeluChainBuilder {
 public:
  explicit GeluChainBuilder(const GeluSpelling& spelling) : s_(spelling) {}

  Graph build() {
    x_ = b_.input("x", {2, 3});
    const ValueId e = s_.tanh ? tanh_of_inner() : erf_of_scaled();
    const ValueId a = binary("Add", e, b_.weight("one", {1}, {1.0f}));
    const ValueId half = b_.weight("half", {}, {s_.half});
    ValueId y = kNoValue;
    if (s_.product == 0) y = binary("Mul", binary("Mul", x_, a), half);
    if (s_.product == 1) y = binary("Mul", binary("Mul", x_, half), a);
    if (s_.product == 2) y = binary("Mul", x_, binary("Mul", a, half));
    b_.output(y);
    if (s_.second_reader) {
      const ValueId z = b_.value("z", {2, 3});
      b_.node("Relu", {a}, {z});
      b_.output(z);
    }
    Graph graph = b_.finish();
    for (const Node& node : graph.nodes) {
      if (node.outputs[0] == y) last_node_name_ = node.name;
    }
    return graph;
  }
  const std::string& last_node_name() const { return last_node_name_; }

 private:
  ValueId binary(const std::string& op, ValueId left, ValueId right) {
    const ValueId out = b_.value(str_cat("v", count_++), {2, 3});
    const bool commutative = op == "Add" || op == "Mul";
    if (s_.swap && commutative) std::swap(left, right);
    b_.node(op, {left, right}, {out});
    return out;
  }
  ValueId unary(const std::string& op, ValueId in) {
    const ValueId out = b_.value(str_cat("v", count_++), {2, 3});
    b_.node(op, {in}, {out});
    return out;
  }
  ValueId erf_of_scaled() {
    const ValueId d = s_.scale_by_mul ? binary("Mul", x_, b_.weight("inv_sqrt2", {}, {0.70710678f}))
                                      : binary("Div", x_, b_.weight("sqrt2", {}, {1.41421356f}));
    return unary("Erf", d);
  }
  ValueId tanh_of_inner() {
    const ValueId cube = s_.cube_by_muls ? binary("Mul", x_, binary("Mul", x_, x_))
                                         : binary("Pow", x_, b_.weight("three", {}, {3.0f}));
    const ValueId cubic = binary("Mul", cube, b_.weight("cubic", {}, {0.044715f}));
    const ValueId inner = binary("Add", x_, cubic);
    return unary("Tanh", binary("Mul", inner, b_.weight("root", {}, {0.7978845608f})));
  }

  GeluSpelling s_;
  GraphBuilder b_;
  ValueId x_ = kNoValue;
  int count_ = 0;
  std::string last_node_name_;
};

// Checks that `graph` is now the single node Gelu(x) -> y with `approximate`, named `name`; only
// x and y are left (the constants are dropped).
void check_single_gelu(const Graph& graph, const std::string& approximate,
                       const std::string& name) {
  REQUIRE(graph.nodes.size() == 1);
  const Node& gelu = graph.nodes[0];
  CHECK(gelu.op_type == "Gelu");
  CHECK(gelu.domain.empty());
  CHECK(gelu.name == name);
  CHECK(gelu.attributes.get_string("approximate", "") == approximate);
  REQUIRE(gelu.inputs.size() == 1);
  CHECK(name_of(graph, gelu.inputs[0]) == "x");
  REQUIRE(gelu.outputs.size() == 1);
  CHECK(gelu.outputs[0] == graph.outputs[0]);
  CHECK(graph.values.size() == 2);
  CHECK(graph.weights.empty());
}

// BERT's chain Div(x, √2) → Erf → Add 1 → Mul x → Mul 0.5 (5 nodes) becomes Gelu(x) with
// approximate "none", named after the last Mul; at level basic the 5 nodes stay.
TEST_CASE("the erf GELU chain fuses into one Gelu node at level all") {
  GeluChainBuilder builder({});
  Graph graph = builder.build();
  Graph basic = graph;
  CHECK(optimize_ok(basic, OptimizeLevel::kBasic).fused_gelus == 0);
  CHECK(basic.nodes.size() == 5);

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_gelus == 1);
  CHECK(report.nodes_before == 5);
  CHECK(report.nodes_after == 1);
  check_single_gelu(graph, "none", builder.last_node_name());
}

// GPT-2's chain Pow(x, 3) → Mul 0.044715 → Add x → Mul √(2/π) → Tanh → Add 1 → Mul x → Mul 0.5
// (8 nodes) becomes Gelu(x) with approximate "tanh"; so does the x · (x · x) cube (9 nodes).
TEST_CASE("the tanh GELU chain fuses into one Gelu node with approximate tanh") {
  for (const bool cube_by_muls : {false, true}) {
    CAPTURE(cube_by_muls);
    GeluChainBuilder builder({.tanh = true, .cube_by_muls = cube_by_muls});
    Graph graph = builder.build();
    const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
    CHECK(report.fused_gelus == 1);
    CHECK(report.nodes_before == (cube_by_muls ? 9 : 8));
    check_single_gelu(graph, "tanh", builder.last_node_name());
  }
}

// Every spelling fuses: both forms × Div or Mul by 1/√2 (erf) or Pow or Mul cube (tanh) × the
// three ways of multiplying by x and 0.5 × Add/Mul operands in either order (24 graphs).
TEST_CASE("every operand order and product spelling of GELU fuses") {
  for (const bool tanh : {false, true}) {
    for (const bool variant : {false, true}) {
      for (const bool swap : {false, true}) {
        for (const int product : {0, 1, 2}) {
          CAPTURE(tanh);
          CAPTURE(variant);
          CAPTURE(swap);
          CAPTURE(product);
          GeluChainBuilder builder({.tanh = tanh,
                                    .scale_by_mul = variant,
                                    .cube_by_muls = variant,
                                    .swap = swap,
                                    .product = product});
          Graph graph = builder.build();
          CHECK(optimize_ok(graph, OptimizeLevel::kAll).fused_gelus == 1);
          check_single_gelu(graph, tanh ? "tanh" : "none", builder.last_node_name());
        }
      }
    }
  }
}

// Left alone: 0.6 instead of 0.5 (not GELU), and 1 + Erf/Tanh(...) also read by a Relu (the
// intermediate must survive, so folding the chain would compute it twice). Both forms; every
// node stays (5 erf, 8 tanh; +1 for the Relu).
TEST_CASE("a GELU chain with a wrong constant or a second reader is left alone") {
  for (const bool tanh : {false, true}) {
    CAPTURE(tanh);
    const int chain_nodes = tanh ? 8 : 5;
    Graph wrong_half = GeluChainBuilder({.tanh = tanh, .half = 0.6f}).build();
    CHECK(optimize_ok(wrong_half, OptimizeLevel::kAll).fused_gelus == 0);
    CHECK(wrong_half.nodes.size() == static_cast<size_t>(chain_nodes));

    Graph shared = GeluChainBuilder({.tanh = tanh, .second_reader = true}).build();
    CHECK(optimize_ok(shared, OptimizeLevel::kAll).fused_gelus == 0);
    CHECK(shared.nodes.size() == static_cast<size_t>(chain_nodes + 1));
  }
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

}  // namespace
}  // namespace onepool::testing

namespace onepool::testing {
namespace {

// ResNet's downsample block: s = Conv(x) and c = Conv(x, W, B), then Relu(Add(c, s)). The later
// Conv (c's, node 1) takes s as its residual input 3 and the Relu as its activation, and writes
// "r"; the skip Conv stays as it was. 2 nodes left.
TEST_CASE("Conv + Add of a same-shape activation becomes the Conv's residual input") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2, 4, 4});
  const ValueId s = b.value("s", {1, 3, 4, 4});
  const ValueId c = b.value("c", {1, 3, 4, 4});
  const ValueId z = b.value("z", {1, 3, 4, 4});
  const ValueId r = b.value("r", {1, 3, 4, 4});
  b.node("Conv", {x, b.weight("Ws", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6})}, {s});
  b.node("Conv",
         {x, b.weight("W", {3, 2, 1, 1}, {6, 5, 4, 3, 2, 1}), b.weight("B", {3}, {1, 2, 3})}, {c});
  b.node("Add", {c, s}, {z});
  b.node("Relu", {z}, {r});
  b.output(r);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_residuals == 1);
  CHECK(report.fused_activations == 1);
  REQUIRE(graph.nodes.size() == 2);
  const Node& conv = graph.nodes[1];
  REQUIRE(conv.inputs.size() == 4);
  CHECK(name_of(graph, conv.inputs[3]) == "s");
  CHECK(name_of(graph, conv.outputs[0]) == "r");
  CHECK(conv.attributes.get_string("onepool_activation", "") == "Relu");
  CHECK(graph.nodes[0].inputs.size() == 2);
}

// Adds that stay: a skip broadcast from [1,3,1,1]; a conv output also read by another node; a
// depthwise (grouped) Conv; a skip computed after the Conv (a Relu of the conv output's sibling).
TEST_CASE("residual Add fusion leaves broadcasts, shared outputs, grouped Convs and late skips") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 3, 4, 4});
  const ValueId narrow = b.input("narrow", {1, 3, 1, 1});
  const ValueId w = b.weight("W", {3, 3, 1, 1}, std::vector<float>(9, 0.5f));
  const ValueId dw = b.weight("DW", {3, 1, 1, 1}, {1, 2, 3});
  auto conv = [&](const char* name, ValueId weight, int64_t group) {
    const ValueId out = b.value(name, {1, 3, 4, 4});
    Node& node = b.node("Conv", {x, weight}, {out});
    if (group > 1) {
      Attribute attribute;
      attribute.i = group;
      node.attributes.set("group", attribute);
    }
    return out;
  };
  auto add = [&](const char* name, ValueId left, ValueId right, Shape shape = {1, 3, 4, 4}) {
    const ValueId out = b.value(name, std::move(shape));
    b.node("Add", {left, right}, {out});
    b.output(out);
  };
  add("broadcast", conv("c1", w, 1), narrow);
  const ValueId shared = conv("c2", w, 1);
  add("shared_sum", shared, x);
  b.output(shared);
  add("grouped", conv("c3", dw, 3), x);
  const ValueId c4 = conv("c4", w, 1);
  const ValueId late = b.value("late", {1, 3, 4, 4});
  b.node("Relu", {x}, {late});
  add("late_sum", c4, late);
  Graph graph = b.finish();

  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_residuals == 0);
  int adds = 0;
  for (const Node& node : graph.nodes) adds += node.op_type == "Add" ? 1 : 0;
  CHECK(adds == 4);
}

}  // namespace
}  // namespace onepool::testing
