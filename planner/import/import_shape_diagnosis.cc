// Diagnoses of invalid output shapes, one function per op family.
#include "planner/import/import_shape_diagnosis.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace onepool {

namespace {

// The value of input `index` when it is a known-shape tensor; nullptr otherwise.
const Value* known_input(const Graph& graph, const Node& node, size_t index) {
  const ValueId id = node.input(index);
  if (id == kNoValue) return nullptr;
  const Value& value = graph.values[static_cast<size_t>(id)];
  if (value.dtype == DType::kUndefined) return nullptr;
  return &value;
}

// Input `index` as int64 values when it is a constant; empty otherwise.
std::vector<int64_t> constant_ints(const Graph& graph, const Node& node, size_t index) {
  const Value* value = known_input(graph, node, index);
  if (value == nullptr || value->kind != ValueKind::kWeight) return {};
  const HostTensor& tensor = graph.weight(node.input(index));
  std::vector<int64_t> ints;
  for (int64_t i = 0; i < tensor.element_count(); ++i) ints.push_back(tensor.int_at(i));
  return ints;
}

std::string first_negative(const std::vector<int64_t>& values, std::string_view what) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0) {
      return str_cat(what, "[", i, "] = ", values[i], " is negative (", what, " must be >= 0)");
    }
  }
  return "";
}

bool is_window_op(std::string_view op) {
  static constexpr std::string_view kOps[] = {"Conv", "ConvInteger", "MaxPool", "AveragePool",
                                              "LpPool"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// The kernel's spatial extents: the attribute, else the weight's dims after [M, C/group].
std::vector<int64_t> kernel_extents(const Graph& graph, const Node& node) {
  auto kernel = node.attributes.get_ints("kernel_shape");
  if (!kernel.empty()) return kernel;
  const Value* weight = known_input(graph, node, 1);
  if (node.op_type.find("Conv") == std::string::npos || weight == nullptr) return {};
  const auto& dims = weight->shape.dims();
  if (dims.size() < 3) return {};
  return {dims.begin() + 2, dims.end()};
}

// A window (dilated kernel) larger than the padded input gives a negative output dim.
std::string diagnose_window(const Graph& graph, const Node& node) {
  const Value* input = known_input(graph, node, 0);
  if (input == nullptr || input->shape.rank() < 3) return "";
  const auto kernel = kernel_extents(graph, node);
  const size_t spatial = static_cast<size_t>(input->shape.rank() - 2);
  if (kernel.size() != spatial) return "";
  const std::string auto_pad = node.attributes.get_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return "";
  const bool explicit_pads = auto_pad == "NOTSET";
  const auto pads = node.attributes.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const auto dilations = node.attributes.get_ints("dilations", std::vector<int64_t>(spatial, 1));
  if (pads.size() != 2 * spatial || dilations.size() != spatial) return "";
  for (size_t axis = 0; axis < spatial; ++axis) {
    const int64_t span = (kernel[axis] - 1) * dilations[axis] + 1;
    const int64_t begin = explicit_pads ? pads[axis] : 0;
    const int64_t end = explicit_pads ? pads[axis + spatial] : 0;
    const int64_t size = input->shape.dims()[axis + 2];
    if (span <= size + begin + end) continue;
    return str_cat("kernel_shape[", axis, "] = ", kernel[axis], " (dilation ", dilations[axis],
                   ") spans ", span, " elements but axis ", axis + 2, " of input '", input->name,
                   "' holds ", size, " (with pads ", begin, " + ", end,
                   "): the window must fit in the padded input");
  }
  return "";
}

// Pads (opset >= 11: input 1; before: the 'pads' attribute) may not remove more than an axis has.
std::string diagnose_pad(const Graph& graph, const Node& node) {
  const Value* input = known_input(graph, node, 0);
  if (input == nullptr || node.input(3) != kNoValue) return "";  // an 'axes' input: not checked
  auto pads = node.attributes.get_ints("pads");
  if (pads.empty()) pads = constant_ints(graph, node, 1);
  const auto& dims = input->shape.dims();
  if (pads.size() != 2 * dims.size()) return "";
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    const int64_t begin = pads[axis];
    const int64_t end = pads[axis + dims.size()];
    if (dims[axis] + begin + end >= 0) continue;
    return str_cat("pads ", begin, " and ", end, " remove ", -(begin + end), " elements from axis ",
                   axis, " of input '", input->name, "', which holds ", dims[axis]);
  }
  return "";
}

}  // namespace

std::string diagnose_invalid_output_shape(const Graph& graph, const Node& node) {
  if (!node.domain.empty()) return "";
  if (is_window_op(node.op_type)) return diagnose_window(graph, node);
  if (node.op_type == "Pad") return diagnose_pad(graph, node);
  if (node.op_type == "Tile") return first_negative(constant_ints(graph, node, 1), "repeats");
  if (node.op_type == "ConstantOfShape") {
    return first_negative(constant_ints(graph, node, 0), "shape");
  }
  if (node.op_type == "Expand") return first_negative(constant_ints(graph, node, 1), "shape");
  return "";
}

}  // namespace onepool
