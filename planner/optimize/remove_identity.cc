// Pass: remove Identity and inference-mode Dropout.
//
// Consumers of the node's output read its input instead. When the output is a graph output its
// NAME must survive (callers ask for outputs by name), so the producer of the input is made to
// produce the output value instead; when the input has no producer (graph input, weight) or is a
// graph output itself, the node stays.
#include <algorithm>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

// Dropout is an identity unless its mask is used or training_mode is not a constant false.
bool dropout_is_identity(const Graph& graph, const Node& node) {
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) {
    const Value& mask = value_at(graph, node.outputs[1]);
    if (!mask.consumers.empty() || mask.is_graph_output) return false;
  }
  const ValueId training_mode = node.input(2);
  if (training_mode == kNoValue) return true;
  const HostTensor* flag = weight_of(graph, training_mode);
  return flag != nullptr && flag->element_count() == 1 && flag->int_at(0) == 0;
}

bool is_removable(const Graph& graph, const Node& node) {
  if (is_op(node, "Identity")) return true;
  return is_op(node, "Dropout") && dropout_is_identity(graph, node);
}

Status check_same_tensor(const Graph& graph, const Node& node, ValueId in, ValueId out) {
  const Value& input = value_at(graph, in);
  const Value& output = value_at(graph, out);
  if (input.dtype == output.dtype && input.shape == output.shape) return Status::ok();
  return make_status(StatusCode::kInvalidModel, describe_node(node), ": output '", output.name,
                     "' expected the dtype and shape of input '", input.name, "' (",
                     dtype_name(input.dtype), " ", input.shape.to_string(), "), got ",
                     dtype_name(output.dtype), " ", output.shape.to_string());
}

// Removes node `id` when it is a removable pass-through; returns whether it did.
Expected<bool> remove_if_pass_through(Graph& graph, NodeId id) {
  const Node& node = graph.nodes[static_cast<size_t>(id)];
  if (!is_removable(graph, node) || node.outputs.empty()) return false;
  const ValueId in = node.input(0);
  const ValueId out = node.outputs[0];
  if (in == kNoValue || out == kNoValue || in == out) return false;
  ONEPOOL_RETURN_IF_ERROR(check_same_tensor(graph, node, in, out));

  if (!value_at(graph, out).is_graph_output) {
    remove_node(graph, id);
    replace_uses(graph, out, in);
    graph.rebuild_edges();
    return true;
  }
  Node* producer = producer_of(graph, in);
  if (producer == nullptr || value_at(graph, in).is_graph_output) return false;
  std::replace(producer->outputs.begin(), producer->outputs.end(), in, out);
  remove_node(graph, id);
  replace_uses(graph, in, out);
  graph.rebuild_edges();
  return true;
}

}  // namespace

Status remove_identity_nodes(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    ONEPOOL_ASSIGN_OR_RETURN(const bool removed,
                             remove_if_pass_through(graph, static_cast<NodeId>(n)));
    if (removed) ++report.removed_nodes;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
