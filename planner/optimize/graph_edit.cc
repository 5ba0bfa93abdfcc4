// Graph-editing helpers for the optimizer passes.
#include "planner/optimize/graph_edit.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace onepool::graph_opt {

bool is_op(const Node& node, const char* op_type) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op_type;
}

const Value& value_at(const Graph& graph, ValueId id) {
  return graph.values[static_cast<size_t>(id)];
}

const HostTensor* weight_of(const Graph& graph, ValueId id) {
  if (id == kNoValue) return nullptr;
  const Value& value = value_at(graph, id);
  if (value.kind != ValueKind::kWeight) return nullptr;
  return &graph.weights[static_cast<size_t>(value.weight_index)];
}

Node* producer_of(Graph& graph, ValueId id) {
  if (id == kNoValue) return nullptr;
  const NodeId producer = value_at(graph, id).producer;
  if (producer == kNoNode) return nullptr;
  return &graph.nodes[static_cast<size_t>(producer)];
}

bool only_feeds(const Graph& graph, ValueId id, NodeId consumer) {
  if (id == kNoValue) return false;
  const Value& value = value_at(graph, id);
  return value.kind == ValueKind::kActivation && !value.is_graph_output &&
         value.consumers.size() == 1 && value.consumers[0] == consumer;
}

bool has_fused_activation(const Node& node) { return node.attributes.has("onepool_activation"); }

HostTensor make_float_weight(const Shape& shape, const std::vector<double>& values) {
  HostTensor tensor;
  tensor.dtype = DType::kFloat32;
  tensor.shape = shape;
  tensor.data.resize(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    const auto value = static_cast<float>(values[i]);
    std::memcpy(tensor.data.data() + i * sizeof(float), &value, sizeof(float));
  }
  return tensor;
}

ValueId add_weight(Graph& graph, const std::string& base_name, HostTensor tensor) {
  std::string name = base_name;
  for (int suffix = 1; graph.find_value(name) != kNoValue; ++suffix) {
    name = str_cat(base_name, "_", suffix);
  }
  Value value;
  value.name = std::move(name);
  value.dtype = tensor.dtype;
  value.shape = tensor.shape;
  value.kind = ValueKind::kWeight;
  value.weight_index = static_cast<int32_t>(graph.weights.size());
  graph.weights.push_back(std::move(tensor));
  return graph.add_value(std::move(value));
}

void replace_uses(Graph& graph, ValueId from, ValueId to) {
  for (Node& node : graph.nodes) {
    std::replace(node.inputs.begin(), node.inputs.end(), from, to);
  }
}

void remove_node(Graph& graph, NodeId id) {
  Node& node = graph.nodes[static_cast<size_t>(id)];
  node.op_type = kRemovedOp;
  node.domain.clear();
  node.inputs.clear();
  node.outputs.clear();
}

void erase_removed_nodes(Graph& graph) {
  std::erase_if(graph.nodes,
                [](const Node& node) { return node.domain.empty() && node.op_type == kRemovedOp; });
  graph.rebuild_edges();
}

namespace {
Status check_value_id(const Graph& graph, ValueId id, const std::string& where) {
  if (id == kNoValue || (id >= 0 && static_cast<size_t>(id) < graph.values.size())) {
    return Status::ok();
  }
  return make_status(StatusCode::kInternal, where, ": value id ", id, " out of range [0, ",
                     graph.values.size(), ")");
}
}  // namespace

Status check_graph_ids(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.inputs)
      ONEPOOL_RETURN_IF_ERROR(check_value_id(graph, id, describe_node(node)));
    for (ValueId id : node.outputs)
      ONEPOOL_RETURN_IF_ERROR(check_value_id(graph, id, describe_node(node)));
  }
  for (ValueId id : graph.inputs) ONEPOOL_RETURN_IF_ERROR(check_value_id(graph, id, "graph input"));
  for (ValueId id : graph.outputs)
    ONEPOOL_RETURN_IF_ERROR(check_value_id(graph, id, "graph output"));
  for (const Value& value : graph.values) {
    if (value.kind != ValueKind::kWeight) continue;
    if (value.weight_index >= 0 && static_cast<size_t>(value.weight_index) < graph.weights.size()) {
      continue;
    }
    return make_status(StatusCode::kInternal, "weight '", value.name, "': weight index ",
                       value.weight_index, " out of range [0, ", graph.weights.size(), ")");
  }
  return Status::ok();
}

Attribute float_attribute(float value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloat;
  attribute.f = value;
  return attribute;
}

Attribute int_attribute(int64_t value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInt;
  attribute.i = value;
  return attribute;
}

Attribute string_attribute(std::string value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kString;
  attribute.s = std::move(value);
  return attribute;
}

}  // namespace onepool::graph_opt
