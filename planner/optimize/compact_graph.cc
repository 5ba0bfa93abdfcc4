// compact_graph: drop values and weights nothing references and renumber the ids densely.
//
// The planner plans every non-weight value, so an activation left behind by a rewrite would take
// pool space. O(values + nodes + weights).
#include <utility>
#include <vector>

#include "planner/optimize/optimize.h"

namespace onepool {

namespace {

std::vector<bool> referenced_values(const Graph& graph) {
  std::vector<bool> used(graph.values.size(), false);
  auto mark = [&used](ValueId id) {
    if (id != kNoValue) used[static_cast<size_t>(id)] = true;
  };
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.inputs) mark(id);
    for (ValueId id : node.outputs) mark(id);
  }
  for (ValueId id : graph.inputs) mark(id);
  for (ValueId id : graph.outputs) mark(id);
  return used;
}

void renumber(std::vector<ValueId>& ids, const std::vector<ValueId>& new_id) {
  for (ValueId& id : ids) {
    if (id != kNoValue) id = new_id[static_cast<size_t>(id)];
  }
}

}  // namespace

void compact_graph(Graph& graph) {
  // Step 1. Which values stay, and their new ids in the old order.
  const std::vector<bool> used = referenced_values(graph);
  std::vector<ValueId> new_id(graph.values.size(), kNoValue);
  std::vector<int32_t> new_weight_index(graph.weights.size(), -1);
  std::vector<Value> values;
  std::vector<HostTensor> weights;
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (!used[i]) continue;
    new_id[i] = static_cast<ValueId>(values.size());
    Value value = std::move(graph.values[i]);
    // Step 2. Weights follow their first kept value (several values may share one weight).
    if (value.kind == ValueKind::kWeight) {
      const auto old_index = static_cast<size_t>(value.weight_index);
      if (new_weight_index[old_index] < 0) {
        new_weight_index[old_index] = static_cast<int32_t>(weights.size());
        weights.push_back(std::move(graph.weights[old_index]));
      }
      value.weight_index = new_weight_index[old_index];
    }
    values.push_back(std::move(value));
  }
  // Step 3. Rewrite every reference and rebuild the edges.
  graph.values = std::move(values);
  graph.weights = std::move(weights);
  for (Node& node : graph.nodes) {
    renumber(node.inputs, new_id);
    renumber(node.outputs, new_id);
  }
  renumber(graph.inputs, new_id);
  renumber(graph.outputs, new_id);
  graph.rebuild_edges();
}

}  // namespace onepool
