#include "runtime/cpu/kernels/reduce_layout.h"

#include <string>

namespace onepool::cpu {
namespace {

using AxisMask = std::array<bool, Shape::kMaxRank>;

// One dim of the simplified input: its size, element stride and whether it is reduced.
struct Dim {
  int64_t size = 0;
  int64_t stride = 0;
  bool reduced = false;
};

Expected<std::vector<int64_t>> read_axes(const NodeContext& node) {
  if (!node.has_input(1)) return node.node().attributes.get_ints("axes");
  const HostTensor* axes = node.constant_input(1);
  if (axes == nullptr) {
    return node.error(StatusCode::kUnsupported, "axes input '", node.input(1).name,
                      "' must be a constant for the CPU kernel");
  }
  std::vector<int64_t> values;
  for (int64_t i = 0; i < axes->element_count(); ++i) values.push_back(axes->int_at(i));
  return values;
}

// Which input axes are reduced; every axis when none are given (unless `noop`).
Expected<AxisMask> reduced_axes(const NodeContext& node, const std::vector<int64_t>& axes,
                                int rank) {
  AxisMask mask{};
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) mask[static_cast<size_t>(i)] = true;
    return mask;
  }
  for (int64_t axis : axes) {
    ONEPOOL_ASSIGN_OR_RETURN(const int normalized, normalize_axis(node, axis, rank));
    if (mask[static_cast<size_t>(normalized)]) {
      return node.error(StatusCode::kInvalidModel, "axis ", axis, " is listed twice");
    }
    mask[static_cast<size_t>(normalized)] = true;
  }
  return mask;
}

Shape reduced_shape(const Shape& input, const AxisMask& mask, bool keepdims) {
  Shape out;
  for (int i = 0; i < input.rank(); ++i) {
    if (!mask[static_cast<size_t>(i)]) out.push_back(input[i]);
    if (mask[static_cast<size_t>(i)] && keepdims) out.push_back(1);
  }
  return out;
}

// Drops size-1 dims and merges adjacent dims of the same kind (input holds > 0 elements).
std::vector<Dim> simplify(const Shape& input, const AxisMask& mask) {
  std::vector<Dim> dims;
  int64_t stride = 1;
  for (int i = input.rank() - 1; i >= 0; --i) {
    const Dim dim{input[i], stride, mask[static_cast<size_t>(i)]};
    stride *= input[i];
    if (dim.size == 1) continue;
    if (!dims.empty() && dims.back().reduced == dim.reduced) {
      dims.back().size *= dim.size;  // the outer dim continues the inner one's stride
      continue;
    }
    dims.push_back(dim);
  }
  return {dims.rbegin(), dims.rend()};
}

void add_to_group(AxisGroup& group, const Dim& dim) {
  const auto i = static_cast<size_t>(group.rank++);
  group.dims[i] = dim.size;
  group.strides[i] = dim.stride;
}

// Picks the loop from the pattern of kept (K) and reduced (R) merged dims.
void choose_path(const std::vector<Dim>& dims, ReduceLayout& layout) {
  std::string pattern;
  for (const Dim& dim : dims) {
    pattern += dim.reduced ? 'R' : 'K';
    add_to_group(dim.reduced ? layout.reduced : layout.kept, dim);
  }
  if (pattern.empty() || pattern == "K" || pattern == "R" || pattern == "KR") {
    layout.path = ReducePath::kInner;
    layout.outer = layout.output_count;
    return;
  }
  if (pattern == "RK" || pattern == "KRK") {
    layout.path = ReducePath::kColumn;
    layout.inner = dims.back().size;
    layout.outer = layout.output_count / layout.inner;
    return;
  }
  layout.path = ReducePath::kGeneral;
}

}  // namespace

Expected<int> normalize_axis(const NodeContext& node, int64_t axis, int rank) {
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    return node.error(StatusCode::kInvalidModel, "axis ", axis, " is out of range for input '",
                      node.input(0).name, "' of rank ", rank);
  }
  return static_cast<int>(normalized);
}

Status check_output_shape(const NodeContext& node, const Shape& expected) {
  if (node.output(0).shape == expected) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                    "': expected shape ", expected.to_string(), " from input '", node.input(0).name,
                    "' ", node.input(0).shape.to_string(), ", got ",
                    node.output(0).shape.to_string());
}

Expected<ReduceLayout> plan_reduce(const NodeContext& node) {
  // Step 1. Which axes are reduced.
  const Shape& input = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, read_axes(node));
  const AttributeMap& attributes = node.node().attributes;
  const bool keepdims = attributes.get_int("keepdims", 1) != 0;
  const bool noop = attributes.get_int("noop_with_empty_axes", 0) != 0;
  ReduceLayout layout;
  if (axes.empty() && noop) {
    ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, input));
    layout.path = ReducePath::kCopy;
    ONEPOOL_ASSIGN_OR_RETURN(layout.output_count, input.element_count_checked());
    return layout;
  }
  ONEPOOL_ASSIGN_OR_RETURN(const AxisMask mask, reduced_axes(node, axes, input.rank()));

  // Step 2. The output shape must be what the model declares.
  layout.output_shape = reduced_shape(input, mask, keepdims);
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, layout.output_shape));
  ONEPOOL_ASSIGN_OR_RETURN(layout.output_count, layout.output_shape.element_count_checked());
  Shape reduced_dims;
  for (int i = 0; i < input.rank(); ++i) {
    if (mask[static_cast<size_t>(i)]) reduced_dims.push_back(input[i]);
  }
  ONEPOOL_ASSIGN_OR_RETURN(layout.reduce_count, reduced_dims.element_count_checked());

  // Step 3. Empty cases: nothing to write, or every output folds zero inputs.
  if (layout.output_count == 0 || layout.reduce_count == 0) {
    layout.path = ReducePath::kInner;
    layout.outer = layout.output_count;
    return layout;
  }
  choose_path(simplify(input, mask), layout);
  return layout;
}

Expected<AxisSplit> split_at_axis(const NodeContext& node, int axis, bool flatten) {
  const Shape& shape = node.input(0).shape;
  Shape outer;
  Shape dim;
  Shape inner;
  for (int i = 0; i < shape.rank(); ++i) {
    if (i < axis) outer.push_back(shape[i]);
    if (i == axis || (flatten && i > axis)) dim.push_back(shape[i]);
    if (i > axis && !flatten) inner.push_back(shape[i]);
  }
  AxisSplit split;
  ONEPOOL_ASSIGN_OR_RETURN(split.outer, outer.element_count_checked());
  ONEPOOL_ASSIGN_OR_RETURN(split.dim, dim.element_count_checked());
  ONEPOOL_ASSIGN_OR_RETURN(split.inner, inner.element_count_checked());
  return split;
}

}  // namespace onepool::cpu
