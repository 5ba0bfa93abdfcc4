#include "runtime/cpu/kernels/conv_geometry.h"

#include <algorithm>
#include <string>

namespace onepool::cpu::nn {
namespace {

std::string join(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(values[i]);
  }
  text += ']';
  return text;
}

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Reads an ints attribute of `count` values (or `fallback` filled with `value` when absent) and
// checks each lies in [min_value, kMaxWindowValue].
Expected<std::vector<int64_t>> read_ints(const NodeContext& node, const char* name, size_t count,
                                         int64_t value, int64_t min_value) {
  const AttributeMap& attributes = node.node().attributes;
  std::vector<int64_t> values = attributes.get_ints(name, std::vector<int64_t>(count, value));
  if (values.size() != count) {
    return node.error(StatusCode::kInvalidModel, "attribute '", name, "': expected ", count,
                      " values, got ", values.size(), " ", join(values));
  }
  for (int64_t v : values) {
    if (v < min_value || v > kMaxWindowValue) {
      return node.error(StatusCode::kOutOfRange, "attribute '", name, "' = ", join(values),
                        ": each value must lie in [", min_value, ", ", kMaxWindowValue, "]");
    }
  }
  return values;
}

// Common part of both geometries: rank, kernel, strides, dilations, explicit pads.
Expected<WindowGeometry> read_window(const NodeContext& node, const Shape& input,
                                     const std::vector<int64_t>& kernel, bool allow_dilations) {
  const int rank = input.rank() - 2;
  if (rank < 1 || rank > kMaxSpatialRank) {
    return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "' has shape ",
                      input.to_string(), ": expected rank 3 to 5 ([N,C,spatial...]), got rank ",
                      input.rank());
  }
  const size_t count = static_cast<size_t>(rank);
  if (kernel.size() != count) {
    return node.error(StatusCode::kInvalidModel, "kernel shape ", join(kernel), " has ",
                      kernel.size(), " spatial dims, expected ", rank, " (input ",
                      input.to_string(), ")");
  }
  ONEPOOL_ASSIGN_OR_RETURN(auto strides, read_ints(node, "strides", count, 1, 1));
  ONEPOOL_ASSIGN_OR_RETURN(auto dilations, read_ints(node, "dilations", count, 1, 1));
  ONEPOOL_ASSIGN_OR_RETURN(auto pads, read_ints(node, "pads", 2 * count, 0, 0));
  if (!allow_dilations &&
      std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; })) {
    return node.error(StatusCode::kUnsupported, "attribute 'dilations' = ", join(dilations),
                      ": only dilations of 1 are supported for this op");
  }
  WindowGeometry geometry;
  geometry.spatial_rank = rank;
  for (int i = 0; i < rank; ++i) {
    const int axis = normalized_axis(rank, i);
    if (kernel[static_cast<size_t>(i)] < 1 || kernel[static_cast<size_t>(i)] > kMaxWindowValue ||
        input[2 + i] > kMaxWindowValue) {
      return node.error(StatusCode::kOutOfRange, "kernel shape ", join(kernel), " or input shape ",
                        input.to_string(), " out of range on axis ", 2 + i);
    }
    geometry.input[axis] = input[2 + i];
    geometry.kernel[axis] = kernel[static_cast<size_t>(i)];
    geometry.stride[axis] = strides[static_cast<size_t>(i)];
    geometry.dilation[axis] = dilations[static_cast<size_t>(i)];
    geometry.pad_begin[axis] = pads[static_cast<size_t>(i)];
    geometry.pad_end[axis] = pads[count + static_cast<size_t>(i)];
  }
  return geometry;
}

int64_t effective_kernel(const WindowGeometry& g, int axis) {
  return (g.kernel[axis] - 1) * g.dilation[axis] + 1;
}

// Output size on one axis for auto_pad NOTSET / VALID (pads already set).
Status set_explicit_output(const NodeContext& node, WindowGeometry& g, int axis, bool ceil_mode) {
  const int64_t span =
      g.input[axis] + g.pad_begin[axis] + g.pad_end[axis] - effective_kernel(g, axis);
  if (span < 0) {
    return node.error(StatusCode::kInvalidModel, "spatial axis ",
                      axis - (kMaxSpatialRank - g.spatial_rank), ": kernel extent ",
                      effective_kernel(g, axis), " exceeds padded input size ",
                      g.input[axis] + g.pad_begin[axis] + g.pad_end[axis]);
  }
  g.output[axis] = (ceil_mode ? ceil_div(span, g.stride[axis]) : span / g.stride[axis]) + 1;
  return Status::ok();
}

}  // namespace

bool WindowGeometry::is_pointwise() const {
  for (int axis = 0; axis < kMaxSpatialRank; ++axis) {
    if (kernel[axis] != 1 || stride[axis] != 1 || pad_begin[axis] != 0 || pad_end[axis] != 0) {
      return false;
    }
  }
  return true;
}

Expected<WindowGeometry> make_forward_geometry(const NodeContext& node, const Shape& input,
                                               const std::vector<int64_t>& kernel,
                                               const WindowOptions& options) {
  ONEPOOL_ASSIGN_OR_RETURN(WindowGeometry g,
                           read_window(node, input, kernel, options.allow_dilations));
  const std::string auto_pad = node.node().attributes.get_string("auto_pad", "NOTSET");
  const bool same_upper = auto_pad == "SAME_UPPER";
  const bool same_lower = auto_pad == "SAME_LOWER";
  if (!same_upper && !same_lower && auto_pad != "VALID" && auto_pad != "NOTSET") {
    return node.error(StatusCode::kInvalidModel, "attribute 'auto_pad' = '", auto_pad,
                      "': expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  for (int i = 0; i < g.spatial_rank; ++i) {
    const int axis = normalized_axis(g.spatial_rank, i);
    if (same_upper || same_lower) {
      g.output[axis] = ceil_div(g.input[axis], g.stride[axis]);
      const int64_t total = std::max<int64_t>(
          0, (g.output[axis] - 1) * g.stride[axis] + effective_kernel(g, axis) - g.input[axis]);
      g.pad_begin[axis] = same_upper ? total / 2 : total - total / 2;
      g.pad_end[axis] = total - g.pad_begin[axis];
      continue;
    }
    if (auto_pad == "VALID") g.pad_begin[axis] = g.pad_end[axis] = 0;
    ONEPOOL_RETURN_IF_ERROR(set_explicit_output(node, g, axis, options.ceil_mode));
  }
  return g;
}

Expected<WindowGeometry> make_transpose_geometry(const NodeContext& node, const Shape& x,
                                                 const std::vector<int64_t>& kernel) {
  ONEPOOL_ASSIGN_OR_RETURN(WindowGeometry g, read_window(node, x, kernel, true));
  const size_t count = static_cast<size_t>(g.spatial_rank);
  const AttributeMap& attributes = node.node().attributes;
  ONEPOOL_ASSIGN_OR_RETURN(auto output_padding, read_ints(node, "output_padding", count, 0, 0));
  std::vector<int64_t> output_shape = attributes.get_ints("output_shape");
  if (output_shape.size() == count + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != count) {
    return node.error(StatusCode::kInvalidModel, "attribute 'output_shape' = ", join(output_shape),
                      ": expected ", count, " spatial dims");
  }
  const std::string auto_pad = attributes.get_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < count; ++i) {
    const int axis = normalized_axis(g.spatial_rank, static_cast<int>(i));
    // The x grid becomes `output`; `input` is the result Y (see WindowGeometry).
    const int64_t x_size = g.input[axis];
    g.output[axis] = x_size;
    const int64_t full =
        g.stride[axis] * (x_size - 1) + output_padding[i] + effective_kernel(g, axis);
    if (auto_pad == "VALID") g.pad_begin[axis] = g.pad_end[axis] = 0;
    int64_t y_size = full - g.pad_begin[axis] - g.pad_end[axis];
    if (!output_shape.empty() || same) {
      y_size = output_shape.empty() ? x_size * g.stride[axis] : output_shape[i];
      // A larger requested size leaves zeros (bias) at the end, as ONNX Runtime does.
      const int64_t total = std::max<int64_t>(0, full - y_size);
      const int64_t half = total / 2;
      g.pad_begin[axis] = auto_pad == "SAME_UPPER" ? half : total - half;
      g.pad_end[axis] = total - g.pad_begin[axis];
    }
    if (y_size < 1 || y_size > kMaxWindowValue) {
      return node.error(StatusCode::kInvalidModel, "spatial axis ", i, ": output size ", y_size,
                        " out of range (input ", x.to_string(), ", kernel ", join(kernel), ")");
    }
    g.input[axis] = y_size;
  }
  return g;
}

Status check_output_shape(const NodeContext& node, size_t index, const Shape& expected) {
  const Shape& actual = node.output(index).shape;
  if (actual == expected) return Status::ok();
  int axis = 0;
  while (axis < std::min(actual.rank(), expected.rank()) && actual[axis] == expected[axis]) ++axis;
  return node.error(StatusCode::kInvalidModel, "output '", node.output(index).name,
                    "': expected shape ", expected.to_string(), " from the attributes, got ",
                    actual.to_string(), "; axis ", axis, " differs");
}

ValidRange valid_output_range(int64_t offset, int64_t stride, int64_t in_size, int64_t out_size) {
  int64_t first = offset >= 0 ? 0 : ceil_div(-offset, stride);
  int64_t last = in_size - offset <= 0 ? 0 : ceil_div(in_size - offset, stride);
  first = std::min(first, out_size);
  last = std::clamp(last, first, out_size);
  return {first, last};
}

Expected<int64_t> checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t product = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &product)) {
    return make_status(StatusCode::kOutOfRange, what, ": ", a, " x ", b, " overflows int64");
  }
  return product;
}

Status require_float32(const NodeContext& node, size_t index) {
  const Value& value = node.input(index);
  if (value.dtype == DType::kFloat32) return Status::ok();
  return node.error(StatusCode::kUnsupported, "input ", index, " '", value.name, "' has dtype ",
                    dtype_name(value.dtype), "; only float32 is supported");
}

}  // namespace onepool::cpu::nn
