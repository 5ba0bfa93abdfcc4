// Graph optimizer: level parsing, Identity and Dropout removal, compact_graph, level none.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "planner/optimize_test_util.h"

namespace onepool::testing {
namespace {

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

}  // namespace
}  // namespace onepool::testing
