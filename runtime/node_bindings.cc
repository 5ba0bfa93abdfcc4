// Node bindings shared by every backend.
#include "runtime/node_bindings.h"

namespace onepool {
namespace {

TensorView view_of(std::span<const TensorView> value_views, ValueId id) {
  return id == kNoValue ? TensorView{} : value_views[static_cast<size_t>(id)];
}

Status bind_workspace(const PlannedTensor& tensor, std::byte* pool, size_t alignment,
                      std::vector<BoundNode>& nodes) {
  if (static_cast<size_t>(tensor.workspace_node) >= nodes.size()) {
    return make_status(StatusCode::kInvalidArgument, "plan workspace '", tensor.name,
                       "' names step ", tensor.workspace_node, " beyond the graph");
  }
  if (alignment > 1 && tensor.offset % alignment != 0) {
    return make_status(StatusCode::kInvalidArgument, "plan workspace '", tensor.name,
                       "' at offset ", tensor.offset, " is not ", alignment, "-byte aligned");
  }
  BoundNode& bound = nodes[static_cast<size_t>(tensor.workspace_node)];
  bound.workspace = pool + tensor.offset;
  bound.workspace_bytes = tensor.bytes;
  return Status::ok();
}

// NodeBindings::external_uses from the plan's external tensors and the laid-out views.
void index_external_uses(const Graph& graph, const Plan& plan, NodeBindings& bindings) {
  bindings.external_uses.assign(graph.values.size(), {});
  std::vector<uint8_t> external(graph.values.size(), 0);
  bool any = false;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (!tensor.external || tensor.id < 0 || static_cast<size_t>(tensor.id) >= external.size()) {
      continue;
    }
    external[static_cast<size_t>(tensor.id)] = 1;
    any = true;
  }
  if (!any) return;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const BoundNode& bound = bindings.nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId id = node.inputs[i];
      if (id != kNoValue && external[static_cast<size_t>(id)] != 0) {
        bindings.external_uses[static_cast<size_t>(id)].push_back(bound.first_input + i);
      }
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ValueId id = node.outputs[o];
      if (id != kNoValue && external[static_cast<size_t>(id)] != 0) {
        bindings.external_uses[static_cast<size_t>(id)].push_back(bound.first_output + o);
      }
    }
  }
}

}  // namespace

void point_external_value(int32_t id, void* data,
                          std::span<const std::vector<size_t>> external_uses,
                          std::span<TensorView> value_views, std::span<TensorView> views) {
  value_views[static_cast<size_t>(id)].data = data;
  for (size_t entry : external_uses[static_cast<size_t>(id)]) views[entry].data = data;
}

Expected<NodeBindings> bind_nodes(const Graph& graph, std::span<const TensorView> value_views,
                                  const Plan& plan, std::byte* pool,
                                  std::span<const size_t> needed_workspace_bytes,
                                  size_t workspace_alignment) {
  NodeBindings bindings;
  bindings.nodes.assign(graph.nodes.size(), BoundNode{});
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    BoundNode& bound = bindings.nodes[n];
    bound.first_input = bindings.views.size();
    for (ValueId id : node.inputs) bindings.views.push_back(view_of(value_views, id));
    bound.input_count = node.inputs.size();
    bound.first_output = bindings.views.size();
    for (ValueId id : node.outputs) bindings.views.push_back(view_of(value_views, id));
    bound.output_count = node.outputs.size();
  }
  index_external_uses(graph, plan, bindings);
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.workspace_node < 0) continue;
    ONEPOOL_RETURN_IF_ERROR(bind_workspace(tensor, pool, workspace_alignment, bindings.nodes));
  }
  for (size_t n = 0; n < needed_workspace_bytes.size() && n < bindings.nodes.size(); ++n) {
    if (needed_workspace_bytes[n] > bindings.nodes[n].workspace_bytes) {
      return make_status(StatusCode::kInvalidArgument, describe_node(graph.nodes[n]),
                         ": needs a workspace of ", needed_workspace_bytes[n],
                         " bytes but the plan gives ", bindings.nodes[n].workspace_bytes);
    }
  }
  return bindings;
}

}  // namespace onepool
