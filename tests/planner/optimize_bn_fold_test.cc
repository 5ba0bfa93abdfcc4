// Graph optimizer: BatchNormalization folded into the preceding Conv / ConvTranspose.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "planner/optimize_test_util.h"

namespace onepool::testing {
namespace {

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

}  // namespace
}  // namespace onepool::testing
