// Shared by the graph-optimizer tests: compact_graph's invariants and optimize_graph that must
// succeed.
#pragma once

#include <doctest/doctest.h>

#include <vector>

#include "common/graph_builder.h"
#include "planner/optimize/optimize.h"

namespace onepool::testing {

// compact_graph's promises: every id in range, every value and weight referenced, edges current.
inline void check_compact(const Graph& graph) {
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

inline OptimizeReport optimize_ok(Graph& graph, OptimizeLevel level) {
  Expected<OptimizeReport> report = optimize_graph(graph, level);
  REQUIRE_MESSAGE(report.has_value(), report.status().to_string());
  check_compact(graph);
  return *report;
}

}  // namespace onepool::testing
