#include "tools/onepool/layerwise.h"

#include <unordered_map>
#include <utility>

namespace onepool::cli {

namespace {

std::unordered_map<std::string, size_t> output_positions(const Model& model) {
  std::unordered_map<std::string, size_t> positions;
  for (size_t i = 0; i < model.outputs().size(); ++i) positions[model.outputs()[i].name] = i;
  return positions;
}

// "node 'Relu_3' (Relu)" for the reference's producer of `name`, or "" when it has none.
std::string reference_producer(const Model& reference, const std::string& name) {
  const Graph& graph = reference.graph();
  const ValueId id = graph.find_value(name);
  if (id == kNoValue) return "";
  const NodeId producer = graph.values[static_cast<size_t>(id)].producer;
  if (producer == kNoNode) return "";
  return describe_node(graph.nodes[static_cast<size_t>(producer)]);
}

// Records the first tensor that fails the element-by-element check.
void note_elementwise(const Node& node, const std::string& tensor, const HostTensor& actual,
                      const HostTensor& expected, double scale, double atol, double rtol,
                      Divergence& result) {
  if (result.elementwise_found) return;
  const Comparison plain = compare_tensors(actual, expected, atol, rtol);
  if (plain.match) return;
  result.elementwise_found = true;
  result.elementwise = TensorDifference{node.name, node.op_type, tensor, plain.max_abs_diff, scale};
}

}  // namespace

Expected<std::shared_ptr<const Model>> with_intermediate_outputs(const Model& model,
                                                                 const LoadOptions& options) {
  Graph graph = model.graph();
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.outputs) {
      if (id == kNoValue) continue;
      Value& value = graph.values[static_cast<size_t>(id)];
      if (value.is_graph_output) continue;
      value.is_graph_output = true;
      graph.outputs.push_back(id);
    }
  }
  LoadOptions as_loaded = options;
  as_loaded.optimize = "none";   // the nodes are already the optimized ones
  as_loaded.schedule = "model";  // and already in the order the model ran them
  return Model::from_graph(std::move(graph), as_loaded);
}

Divergence first_divergence(const Model& candidate,
                            const std::vector<HostTensor>& candidate_outputs,
                            const Model& reference,
                            const std::vector<HostTensor>& reference_outputs, double atol,
                            double rtol) {
  const std::unordered_map<std::string, size_t> in_candidate = output_positions(candidate);
  const std::unordered_map<std::string, size_t> in_reference = output_positions(reference);
  const Graph& graph = candidate.graph();
  Divergence result;
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.outputs) {
      if (id == kNoValue) continue;
      const std::string& name = graph.values[static_cast<size_t>(id)].name;
      const auto expected = in_reference.find(name);
      const auto actual = in_candidate.find(name);
      if (expected == in_reference.end() || actual == in_candidate.end()) {
        ++result.candidate_only;
        continue;
      }
      ++result.compared;
      const HostTensor& got = candidate_outputs[actual->second];
      const HostTensor& want = reference_outputs[expected->second];
      result.scale = max_abs_value(want);
      result.comparison = compare_tensors(got, want, atol + rtol * result.scale, rtol);
      note_elementwise(node, name, got, want, result.scale, atol, rtol, result);
      result.tensors.push_back(TensorDifference{node.name, node.op_type, name,
                                                result.comparison.max_abs_diff, result.scale});
      if (result.comparison.max_abs_diff > result.largest_diff || result.largest_at.empty()) {
        result.largest_diff = result.comparison.max_abs_diff;
        result.largest_at = name;
      }
      if (result.comparison.match) continue;
      result.found = true;
      result.node = node.name;
      result.op = node.op_type;
      result.tensor = name;
      result.reference_node = reference_producer(reference, name);
      return result;
    }
  }
  return result;
}

}  // namespace onepool::cli
