// External graph inputs and outputs: resolving PlanOptions to per-value flags.
#include "planner/analysis/external_io.h"

namespace onepool {
namespace {

bool is_graph_io(const Value& value) {
  return value.kind == ValueKind::kGraphInput || value.is_graph_output;
}

// "x, y, logits": the graph's inputs then outputs, for a message about a wrong name.
std::string list_graph_io(const Graph& graph) {
  std::string names;
  for (ValueId id : graph.inputs) {
    names += str_cat(names.empty() ? "" : ", ", graph.values[static_cast<size_t>(id)].name);
  }
  for (ValueId id : graph.outputs) {
    names += str_cat(names.empty() ? "" : ", ", graph.values[static_cast<size_t>(id)].name);
  }
  return names;
}

Expected<ValueId> find_named_io(const Graph& graph, const std::string& name) {
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& value = graph.values[id];
    if (value.name != name) continue;
    if (value.kind == ValueKind::kWeight && value.is_graph_output) {
      return make_status(StatusCode::kInvalidArgument, "external tensor '", name,
                         "': this graph output is a constant (it is stored with the weights, not "
                         "computed), so it has no buffer to bind");
    }
    if (is_graph_io(value)) return static_cast<ValueId>(id);
    break;
  }
  return make_status(
      StatusCode::kInvalidArgument, "external tensor '", name,
      "' is not a graph input or output of the model as loaded; those are: ", list_graph_io(graph));
}

}  // namespace

Expected<std::vector<uint8_t>> find_external_values(const Graph& graph,
                                                    const PlanOptions& options) {
  std::vector<uint8_t> external;
  if (!options.has_external_io()) return external;
  external.assign(graph.values.size(), 0);
  if (options.external_inputs) {
    for (ValueId id : graph.inputs) external[static_cast<size_t>(id)] = 1;
  }
  if (options.external_outputs) {
    for (ValueId id : graph.outputs) {
      if (graph.values[static_cast<size_t>(id)].kind != ValueKind::kWeight) {
        external[static_cast<size_t>(id)] = 1;
      }
    }
  }
  for (const std::string& name : options.external_tensors) {
    ONEPOOL_ASSIGN_OR_RETURN(const ValueId id, find_named_io(graph, name));
    external[static_cast<size_t>(id)] = 1;
  }
  return external;
}

std::string describe_external_values(const Graph& graph, const std::vector<uint8_t>& external) {
  std::string names;
  for (size_t id = 0; id < external.size() && id < graph.values.size(); ++id) {
    if (external[id] != 0) names += str_cat(names.empty() ? "" : ",", graph.values[id].name);
  }
  return names.empty() ? "none" : names;
}

}  // namespace onepool
