// Slices at run-time positions with lengths known at load (see import_slice_lengths.h).
#include "planner/import/import_slice_lengths.h"

#include <algorithm>
#include <set>
#include <vector>

#include "planner/import/constant_folding.h"
#include "planner/import/import_static_type.h"
#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

// Ops whose every output element equals the input element at the same position in row-major
// order: they keep an elementwise offset.
bool keeps_elements(const std::string& op) {
  return op == "Identity" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
         op == "Flatten";
}

// The walk gives up after this many ops (a long chain is no slice position).
constexpr int kMaxTraceSteps = 64;

bool is_default_domain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

std::string describe(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (Slice)");
}

std::optional<std::vector<int64_t>> ints_of(const onnx::TensorProto& proto) {
  Expected<HostTensor> tensor = host_tensor_from_proto(proto);
  if (!tensor) return std::nullopt;
  const size_t count = static_cast<size_t>(tensor->shape.element_count());
  std::vector<int64_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (tensor->dtype == DType::kInt64) {
      values[i] = reinterpret_cast<const int64_t*>(tensor->data.data())[i];
    } else if (tensor->dtype == DType::kInt32) {
      values[i] = reinterpret_cast<const int32_t*>(tensor->data.data())[i];
    } else {
      return std::nullopt;
    }
  }
  return values;
}

bool has_input(const onnx::NodeProto& node, int index) {
  return index < node.input_size() && !node.input(index).empty();
}

}  // namespace

SliceDistanceProver::SliceDistanceProver(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    for (const std::string& output : node.output()) producers_[output] = &node;
  }
  for (const auto& initializer : graph.initializer())
    initializers_[initializer.name()] = &initializer;
}

std::optional<std::vector<int64_t>> SliceDistanceProver::constant_ints(
    const std::string& name) const {
  if (const auto initializer = initializers_.find(name); initializer != initializers_.end()) {
    return ints_of(*initializer->second);
  }
  const auto producer = producers_.find(name);
  if (producer == producers_.end()) return std::nullopt;
  const onnx::NodeProto& node = *producer->second;
  if (node.op_type() != "Constant" || !is_default_domain(node)) return std::nullopt;
  onnx::TensorProto tensor;
  if (!constant_tensor(node, &tensor).is_ok()) return std::nullopt;
  return ints_of(tensor);
}

std::optional<int64_t> SliceDistanceProver::one_constant_int(const std::string& name) const {
  const auto values = constant_ints(name);
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

std::optional<SliceDistanceProver::Offset> SliceDistanceProver::trace(
    const std::string& name) const {
  Offset traced{name, 0};
  for (int step = 0; step < kMaxTraceSteps; ++step) {
    if (const auto constant = one_constant_int(traced.source)) {
      if (__builtin_add_overflow(traced.offset, *constant, &traced.offset)) return std::nullopt;
      traced.source.clear();
      return traced;
    }
    const auto producer = producers_.find(traced.source);
    if (producer == producers_.end()) return traced;
    const onnx::NodeProto& node = *producer->second;
    if (!is_default_domain(node) || node.input_size() < 1) return traced;
    const std::string& op = node.op_type();
    if (keeps_elements(op)) {
      traced.source = node.input(0);
      continue;
    }
    if ((op != "Add" && op != "Sub") || node.input_size() != 2) return traced;
    // source + c, c + source, source - c: the other input must be one integer constant.
    const bool constant_first = op == "Add" && one_constant_int(node.input(0)).has_value();
    const auto constant = one_constant_int(node.input(constant_first ? 0 : 1));
    if (!constant) return traced;
    int64_t delta = *constant;
    if (op == "Sub" && __builtin_sub_overflow(int64_t{0}, delta, &delta)) return std::nullopt;
    if (__builtin_add_overflow(traced.offset, delta, &traced.offset)) return std::nullopt;
    traced.source = node.input(constant_first ? 1 : 0);
  }
  return std::nullopt;
}

std::optional<int64_t> SliceDistanceProver::runtime_distance(const onnx::NodeProto& node) const {
  if (node.op_type() != "Slice" || !is_default_domain(node) || !has_input(node, 1) ||
      !has_input(node, 2)) {
    return std::nullopt;
  }
  if (constant_ints(node.input(1)) && constant_ints(node.input(2))) return std::nullopt;
  if (has_input(node, 3) && !constant_ints(node.input(3))) return std::nullopt;
  if (has_input(node, 4)) {
    const auto steps = constant_ints(node.input(4));
    if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; })) {
      return std::nullopt;
    }
  }
  const auto starts = trace(node.input(1));
  const auto ends = trace(node.input(2));
  if (!starts || !ends || starts->source.empty() || starts->source != ends->source) {
    return std::nullopt;
  }
  int64_t distance = 0;
  if (__builtin_sub_overflow(ends->offset, starts->offset, &distance)) return std::nullopt;
  return distance;
}

namespace {

// The sliced axes, normalized: the constant axes input, or 0 .. count-1 where count is the
// element count of starts.
Expected<std::optional<std::vector<size_t>>> sliced_axes(const SliceDistanceProver& prover,
                                                         const onnx::GraphProto& graph,
                                                         const onnx::NodeProto& node, size_t rank) {
  std::vector<int64_t> axes;
  if (has_input(node, 3)) {
    axes = *prover.constant_ints(node.input(3));
  } else {
    const std::optional<TensorType> starts = static_type(graph, node.input(1));
    if (!starts || starts->dims.size() != 1) return std::optional<std::vector<size_t>>();
    for (int64_t k = 0; k < starts->dims[0]; ++k) axes.push_back(k);
  }
  std::vector<size_t> normalized;
  const auto r = static_cast<int64_t>(rank);
  for (int64_t axis : axes) {
    if (axis < -r || axis >= r) {
      return make_status(StatusCode::kInvalidModel, describe(node), ": axis ", axis,
                         " is out of range for rank ", r, " of '", node.input(0), "'");
    }
    normalized.push_back(static_cast<size_t>(axis < 0 ? axis + r : axis));
  }
  if (std::set<size_t>(normalized.begin(), normalized.end()).size() != normalized.size()) {
    return make_status(StatusCode::kInvalidModel, describe(node), ": axes repeat an axis");
  }
  return std::optional<std::vector<size_t>>(std::move(normalized));
}

}  // namespace

Expected<int> type_runtime_slices(onnx::GraphProto* graph) {
  const SliceDistanceProver prover(*graph);
  std::vector<std::pair<std::string, TensorType>> typed;
  for (const auto& node : graph->node()) {
    if (node.output_size() < 1 || node.output(0).empty()) continue;
    const std::optional<int64_t> distance = prover.runtime_distance(node);
    if (!distance || static_type(*graph, node.output(0))) continue;
    std::optional<TensorType> data = static_type(*graph, node.input(0));
    if (!data) continue;
    ONEPOOL_ASSIGN_OR_RETURN(std::optional<std::vector<size_t>> axes,
                             sliced_axes(prover, *graph, node, data->dims.size()));
    if (!axes) continue;
    for (size_t axis : *axes) {
      data->dims[axis] = std::min(std::max<int64_t>(*distance, 0), data->dims[axis]);
    }
    typed.emplace_back(node.output(0), std::move(*data));
  }
  // Written after the walk: the prover holds pointers into the graph.
  for (const auto& [name, type] : typed) set_static_type(graph, name, type);
  return static_cast<int>(typed.size());
}

}  // namespace onepool
