// Upper bounds of data-dependent outputs (see import_bounds.h).
#include "planner/import/import_bounds.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "planner/import/import_static_type.h"
#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

Expected<int64_t> element_count(const Dims& dims, const std::string& what) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (__builtin_mul_overflow(count, dim, &count)) {
      return make_status(StatusCode::kInvalidModel, what, ": element count overflows int64");
    }
  }
  return count;
}

// The bounds of one node: output index → type, and the reason shared by its bounded outputs.
struct NodeBounds {
  std::vector<std::optional<TensorType>> outputs;  // nullopt: not bounded (or exact, see exact)
  std::vector<bool> exact;                         // an output whose type is exact, not a bound
  std::string reason;
};

std::string describe(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (", node.op_type(), ")");
}

std::optional<int64_t> int_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return attribute.i();
  }
  return std::nullopt;
}

Expected<int64_t> normalized_axis(const onnx::NodeProto& node, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return make_status(StatusCode::kInvalidModel, describe(node), ": axis ", axis,
                       " is out of range for rank ", r);
  }
  return axis < 0 ? axis + r : axis;
}

Expected<NodeBounds> nonzero_bounds(const onnx::NodeProto& node, const TensorType& x) {
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t count, element_count(x.dims, describe(node)));
  NodeBounds bounds;
  // A scalar x gives one coordinate row, as ONNX Runtime has it.
  const auto rows = static_cast<int64_t>(std::max<size_t>(x.dims.size(), 1));
  bounds.outputs.push_back(TensorType{onnx::TensorProto::INT64, {rows, count}});
  bounds.reason = str_cat("NonZero of '", node.input(0), "' ", dims_text(x.dims), ": at most ",
                          count, " nonzero elements");
  return bounds;
}

Expected<NodeBounds> compress_bounds(const onnx::NodeProto& node, const TensorType& x,
                                     const TensorType& condition) {
  if (condition.dims.size() != 1) {
    return make_status(StatusCode::kInvalidModel, describe(node), ": condition '", node.input(1),
                       "' must be 1-D, got ", dims_text(condition.dims));
  }
  const int64_t length = condition.dims[0];
  NodeBounds bounds;
  TensorType y{x.elem_type, x.dims};
  const std::optional<int64_t> axis = int_attribute(node, "axis");
  if (!axis) {
    ONEPOOL_ASSIGN_OR_RETURN(const int64_t count, element_count(x.dims, describe(node)));
    y.dims = {std::min(length, count)};
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(const int64_t a, normalized_axis(node, *axis, x.dims.size()));
    y.dims[static_cast<size_t>(a)] = std::min(length, x.dims[static_cast<size_t>(a)]);
  }
  bounds.reason = str_cat("Compress of '", node.input(0), "' ", dims_text(x.dims), " by '",
                          node.input(1), "' [", length, "]: at most ", dims_text(y.dims));
  bounds.outputs.push_back(y);
  return bounds;
}

Expected<NodeBounds> unique_bounds(const onnx::NodeProto& node, const TensorType& x) {
  const std::optional<int64_t> axis = int_attribute(node, "axis");
  TensorType y{x.elem_type, x.dims};
  int64_t count = 0;
  if (!axis) {
    ONEPOOL_ASSIGN_OR_RETURN(count, element_count(x.dims, describe(node)));
    y.dims = {count};
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(const int64_t a, normalized_axis(node, *axis, x.dims.size()));
    count = x.dims[static_cast<size_t>(a)];
  }
  const TensorType list{onnx::TensorProto::INT64, {count}};
  NodeBounds bounds;
  bounds.outputs = {y, list, list, list};
  bounds.exact = {false, false, true, false};  // inverse_indices: one per element or slice
  bounds.reason = str_cat("Unique of '", node.input(0), "' ", dims_text(x.dims), ": at most ",
                          count, axis ? " slices" : " elements");
  return bounds;
}

// max_output_boxes_per_class when it is a constant (an initializer); nullopt otherwise.
std::optional<int64_t> constant_max_boxes(const onnx::GraphProto& graph,
                                          const onnx::NodeProto& node) {
  if (node.input_size() < 3 || node.input(2).empty()) return 0;  // absent: no box is selected
  for (const auto& initializer : graph.initializer()) {
    if (initializer.name() != node.input(2)) continue;
    Expected<HostTensor> tensor = host_tensor_from_proto(initializer);
    if (!tensor || tensor->dtype != DType::kInt64 || tensor->shape.element_count() != 1) break;
    return std::max<int64_t>(0, *reinterpret_cast<const int64_t*>(tensor->data.data()));
  }
  return std::nullopt;
}

Expected<NodeBounds> nms_bounds(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                                const TensorType& boxes, const TensorType& scores) {
  if (boxes.dims.size() != 3 || scores.dims.size() != 3) {
    return make_status(StatusCode::kInvalidModel, describe(node),
                       ": expected boxes [batch, boxes, 4]"
                       " and scores [batch, classes, boxes], got ",
                       dims_text(boxes.dims), " and ", dims_text(scores.dims));
  }
  const std::optional<int64_t> max_boxes = constant_max_boxes(graph, node);
  const int64_t per_class = max_boxes ? std::min(*max_boxes, boxes.dims[1]) : boxes.dims[1];
  ONEPOOL_ASSIGN_OR_RETURN(
      const int64_t count,
      element_count({scores.dims[0], scores.dims[1], per_class}, describe(node)));
  NodeBounds bounds;
  bounds.outputs.push_back(TensorType{onnx::TensorProto::INT64, {count, 3}});
  bounds.reason =
      str_cat("NonMaxSuppression: at most batch ", scores.dims[0], " x classes ", scores.dims[1],
              " x ", per_class,
              max_boxes ? " (max_output_boxes_per_class, at most the boxes)"
                        : " boxes (max_output_boxes_per_class is known only at run time)",
              " = ", count, " selected boxes");
  return bounds;
}

// The smallest --bound given for one of the node's outputs, and its name.
std::optional<std::pair<std::string, int64_t>> user_bound(
    const onnx::NodeProto& node, const std::map<std::string, int64_t>& user) {
  std::optional<std::pair<std::string, int64_t>> smallest;
  for (const std::string& output : node.output()) {
    const auto given = user.find(output);
    if (given == user.end() || (smallest && smallest->second <= given->second)) continue;
    smallest = *given;
  }
  return smallest;
}

Expected<NodeBounds> topk_bounds(const onnx::NodeProto& node, const TensorType& x,
                                 const std::pair<std::string, int64_t>& given) {
  ONEPOOL_ASSIGN_OR_RETURN(
      const int64_t axis,
      normalized_axis(node, int_attribute(node, "axis").value_or(-1), x.dims.size()));
  Dims dims = x.dims;
  const int64_t count = std::min(given.second, dims[static_cast<size_t>(axis)]);
  dims[static_cast<size_t>(axis)] = count;
  NodeBounds bounds;
  bounds.outputs.push_back(TensorType{x.elem_type, dims});
  bounds.outputs.push_back(TensorType{onnx::TensorProto::INT64, dims});
  bounds.reason = str_cat("TopK of '", node.input(0), "' ", dims_text(x.dims), " along axis ", axis,
                          ": K known at run time, at most ", count, " (--bound ", given.first, "=",
                          given.second, ")");
  return bounds;
}

NodeBounds range_bounds(const TensorType& start, const std::pair<std::string, int64_t>& given) {
  NodeBounds bounds;
  bounds.outputs.push_back(TensorType{start.elem_type, {given.second}});
  bounds.reason = str_cat("Range known at run time: at most ", given.second, " elements (--bound ",
                          given.first, "=", given.second, ")");
  return bounds;
}

bool is_data_dependent(const onnx::NodeProto& node, const std::map<std::string, int64_t>& user) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const std::string& op = node.op_type();
  if (op == "TopK" || op == "Range") return user_bound(node, user).has_value();
  return op == "NonZero" || op == "Compress" || op == "Unique" || op == "NonMaxSuppression";
}

// The node's bounds, or nullopt while an input's shape is not static yet.
Expected<std::optional<NodeBounds>> bounds_of(const onnx::GraphProto& graph,
                                              const onnx::NodeProto& node,
                                              const std::map<std::string, int64_t>& user) {
  const size_t needed =
      node.op_type() == "Compress" || node.op_type() == "NonMaxSuppression" ? 2 : 1;
  std::vector<TensorType> inputs;
  for (size_t i = 0; i < needed; ++i) {
    if (static_cast<int>(i) >= node.input_size() || node.input(static_cast<int>(i)).empty()) {
      return make_status(StatusCode::kInvalidModel, describe(node), ": input ", i, " is required");
    }
    std::optional<TensorType> type = static_type(graph, node.input(static_cast<int>(i)));
    if (!type) return std::optional<NodeBounds>();
    inputs.push_back(*type);
  }
  const std::string& op = node.op_type();
  if (op == "TopK" || op == "Range") {
    const auto given = *user_bound(node, user);
    if (op == "Range") return std::optional<NodeBounds>(range_bounds(inputs[0], given));
    ONEPOOL_ASSIGN_OR_RETURN(NodeBounds topk, topk_bounds(node, inputs[0], given));
    return std::optional<NodeBounds>(std::move(topk));
  }
  Expected<NodeBounds> bounds = op == "NonZero"    ? nonzero_bounds(node, inputs[0])
                                : op == "Compress" ? compress_bounds(node, inputs[0], inputs[1])
                                : op == "Unique"   ? unique_bounds(node, inputs[0])
                                                   : nms_bounds(graph, node, inputs[0], inputs[1]);
  if (!bounds) return bounds.status();
  return std::optional<NodeBounds>(std::move(bounds).value());
}

}  // namespace

Expected<int> bound_data_dependent_outputs(onnx::GraphProto* graph, DataDependentBounds* bounds) {
  int bounded = 0;
  for (const auto& node : graph->node()) {
    if (!is_data_dependent(node, bounds->user) || bounds->nodes_done.count(node.name()) != 0) {
      continue;
    }
    ONEPOOL_ASSIGN_OR_RETURN(std::optional<NodeBounds> node_bounds,
                             bounds_of(*graph, node, bounds->user));
    if (!node_bounds) continue;
    for (const std::string& output : node.output()) {
      const bool takes_user_bound = node.op_type() == "TopK" || node.op_type() == "Range";
      if (takes_user_bound && bounds->user.count(output) != 0) bounds->user_used.insert(output);
    }
    for (int i = 0; i < node.output_size() && i < static_cast<int>(node_bounds->outputs.size());
         ++i) {
      const size_t k = static_cast<size_t>(i);
      if (node.output(i).empty() || !node_bounds->outputs[k]) continue;
      set_static_type(graph, node.output(i), *node_bounds->outputs[k]);
      const bool exact = k < node_bounds->exact.size() && node_bounds->exact[k];
      if (!exact) bounds->reasons[node.output(i)] = node_bounds->reason;
    }
    bounds->nodes_done.insert(node.name());
    ++bounded;
  }
  return bounded;
}

std::unordered_set<std::string> runtime_shaped_names(const onnx::GraphProto& graph,
                                                     const BoundReasons& bounds) {
  std::unordered_set<std::string> names;
  for (const auto& entry : bounds) names.insert(entry.first);
  for (const auto& node : graph.node()) {
    const bool reads_bounded = std::any_of(node.input().begin(), node.input().end(),
                                           [&](const std::string& in) { return names.count(in); });
    if (!reads_bounded) continue;
    for (const std::string& out : node.output()) {
      if (!out.empty()) names.insert(out);
    }
  }
  return names;
}

void mark_bounded_values(Graph* graph, const BoundReasons& bounds) {
  for (Value& value : graph->values) {
    const auto it = bounds.find(value.name);
    if (it != bounds.end()) value.bound = it->second;
  }
  for (const Node& node : graph->nodes) {
    const Value* source = nullptr;
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph->values[static_cast<size_t>(in)].bound.empty()) continue;
      source = &graph->values[static_cast<size_t>(in)];
      break;
    }
    if (source == nullptr) continue;
    const std::string reason = str_cat("computed from '", source->name, "' (", source->bound, ")");
    for (ValueId out : node.outputs) {
      if (out != kNoValue) graph->values[static_cast<size_t>(out)].bound = reason;
    }
  }
}

}  // namespace onepool
