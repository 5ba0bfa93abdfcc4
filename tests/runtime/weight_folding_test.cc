// Weight folding: weight-only nodes become weights at load; growing ones and graph outputs stay.
#include "runtime/cpu/weight_folding.h"

#include <doctest/doctest.h>

#include <vector>

#include "common/graph_builder.h"

namespace onepool::testing {
namespace {

// W [3,2] = [1,2 | 3,4 | 5,6] -> Transpose -> T [2,3]; MatMul(x [1,2], T) -> y.
Graph transpose_then_matmul() {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2});
  const ValueId w = b.weight("W", {3, 2}, {1, 2, 3, 4, 5, 6});
  const ValueId t = b.value("T", {2, 3});
  const ValueId y = b.value("y", {1, 3});
  b.node("Transpose", {w}, {t}).attributes.set("perm", ints_attr({1, 0}));
  b.node("MatMul", {x, t}, {y});
  b.output(y);
  return b.finish();
}

TEST_CASE("a Transpose of a weight becomes a weight holding the transposed data") {
  Graph graph = transpose_then_matmul();
  const cpu::WeightFoldReport report = cpu::fold_weight_only_nodes(graph);
  CHECK(report.folded_nodes == 1);
  CHECK(report.folded_output_bytes == 6 * sizeof(float));
  REQUIRE(graph.nodes.size() == 1);
  CHECK(graph.nodes[0].op_type == "MatMul");
  const Value& t = value_named(graph, "T");
  CHECK(t.kind == ValueKind::kWeight);
  CHECK(weight_values(graph, graph.find_value("T")) == std::vector<float>{1, 3, 5, 2, 4, 6});
  CHECK(graph.find_value("W") == kNoValue);  // nothing reads W any more: dropped
  CHECK(graph.weights.size() == 1);
}

TEST_CASE("a chain of weight-only nodes folds entirely") {
  GraphBuilder b;
  const ValueId x = b.input("x", {2});
  const ValueId w = b.weight("W", {2}, {1, -2});
  const ValueId n = b.value("n", {2});
  const ValueId a = b.value("a", {2});
  const ValueId y = b.value("y", {2});
  b.node("Neg", {w}, {n});
  b.node("Abs", {n}, {a});
  b.node("Add", {x, a}, {y});
  b.output(y);
  Graph graph = b.finish();
  CHECK(cpu::fold_weight_only_nodes(graph).folded_nodes == 2);
  REQUIRE(graph.nodes.size() == 1);
  CHECK(weight_values(graph, graph.find_value("a")) == std::vector<float>{1, 2});
}

TEST_CASE("nodes that read an activation, grow the weights or produce a graph output stay") {
  GraphBuilder b;
  const ValueId x = b.input("x", {2});
  const ValueId w = b.weight("W", {1}, {3});
  const ValueId shape = b.weight("shape", {1}, {0});
  const ValueId big = b.value("big", {65536});
  const ValueId out = b.value("out", {1});
  const ValueId y = b.value("y", {2});
  b.node("Add", {x, w}, {y});
  b.node("Neg", {w}, {out});
  b.output(y);
  b.output(out);
  // Expand of a 1-element weight to 65536 elements: 256 KiB out of 4 bytes in, so it stays.
  Graph graph = b.finish();
  graph.values[static_cast<size_t>(shape)].dtype = DType::kInt64;
  HostTensor& shape_data =
      graph.weights[static_cast<size_t>(graph.values[static_cast<size_t>(shape)].weight_index)];
  shape_data.dtype = DType::kInt64;
  shape_data.data.assign(sizeof(int64_t), std::byte{0});
  *shape_data.as_mutable<int64_t>() = 65536;
  Node expand;
  expand.name = "expand";
  expand.op_type = "Expand";
  expand.inputs = {w, shape};
  expand.outputs = {big};
  graph.nodes.push_back(expand);
  graph.values[static_cast<size_t>(big)].is_graph_output = true;
  graph.outputs.push_back(big);
  graph.rebuild_edges();
  CHECK(cpu::fold_weight_only_nodes(graph).folded_nodes == 0);
  CHECK(graph.nodes.size() == 3);
}

}  // namespace
}  // namespace onepool::testing
