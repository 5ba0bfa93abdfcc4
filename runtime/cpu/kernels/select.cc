// CPU NonZero and Compress: outputs whose size depends on the input data. The importer plans each
// output at an upper bound (NonZero: [rank, numel]; Compress: min(len(condition), dim) along the
// axis); run() counts first, checks the actual shape against the bound it was given (an error
// naming the node, the output, the bound and the actual shape, never a write past the view), then
// writes the actual output densely from the view's start and reports its shape.
//
// NonZero: a nonzero element is one that compares unequal to 0, so NaN counts and -0.0 does not
// (numpy, ONNX Runtime); float16 / bfloat16 are tested on their bits (magnitude bits nonzero).
// Coordinates come out in row-major order of X, row r of the [rank, n] output holding axis r.
// A rank-0 X: ONNX Runtime returns [1, n] (n = 0 or 1) with coordinate 0, and so does this kernel
// when the output is planned with one row; planned with zero rows it returns [0, n].
// Compress: the first min(len(condition), dim) condition entries select along the axis (or over
// the flattened input without one); elements move by their size, so any dtype works.
// Both are one pass to count and one to write, O(numel), on the calling thread.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/bounded_output.h"
#include "runtime/cpu/kernels/reduce_layout.h"

namespace onepool::cpu {
namespace {

template <class T>
struct NotZero {
  bool operator()(T value) const { return value != T{}; }
};

// float16 and bfloat16 bits: zero when only the sign bit may be set.
struct HalfNotZero {
  bool operator()(uint16_t bits) const { return (bits & 0x7fffu) != 0; }
};

template <class T, class IsNonZero>
class NonZeroKernel final : public Kernel {
 public:
  NonZeroKernel(Shape dims, int64_t count, std::string node, std::string output)
      : dims_(dims), count_(count), node_(std::move(node)), output_(std::move(output)) {}

  Status run(const RunContext& context) override {
    ONEPOOL_RETURN_IF_ERROR(require_output_shapes(context, node_));
    const T* x = context.inputs[0].as<const T>();
    const IsNonZero is_nonzero;
    int64_t found = 0;
    for (int64_t i = 0; i < count_; ++i) found += is_nonzero(x[i]) ? 1 : 0;
    const Shape actual{dims_.rank(), found};
    ONEPOOL_RETURN_IF_ERROR(check_within_bound(node_, output_, context.outputs[0].shape, actual));
    int64_t* y = context.outputs[0].as<int64_t>();
    int64_t column = 0;
    for (int64_t i = 0; i < count_; ++i) {
      if (!is_nonzero(x[i])) continue;
      int64_t rest = i;
      for (int axis = dims_.rank() - 1; axis >= 0; --axis) {
        y[axis * found + column] = rest % dims_[axis];
        rest /= dims_[axis];
      }
      ++column;
    }
    context.output_shapes[0] = actual;
    return Status::ok();
  }

 private:
  Shape dims_;  // one per output row: X's dims ([1] for a rank-0 X planned with one row)
  int64_t count_;
  std::string node_;
  std::string output_;
};

template <class T, class IsNonZero = NotZero<T>>
PreparedKernel nonzero_prepared(const NodeContext& node, Shape dims, int64_t count) {
  PreparedKernel result;
  result.kernel = std::make_unique<NonZeroKernel<T, IsNonZero>>(
      dims, count, describe_node(node.node()), node.output(0).name);
  result.data_dependent_outputs = true;
  return result;
}

// The coordinate rows the importer planned: rank(X), or 0 or 1 for a rank-0 X (see the top).
Expected<Shape> nonzero_rows(const NodeContext& node) {
  const Value& x = node.input(0);
  const Value& y = node.output(0);
  const bool scalar_rows = x.shape.rank() == 0 && y.shape.rank() == 2 && y.shape[0] <= 1;
  if (y.dtype != DType::kInt64 || y.shape.rank() != 2 ||
      (y.shape[0] != x.shape.rank() && !scalar_rows)) {
    return node.error(StatusCode::kInvalidModel, "output '", y.name, "': expected int64 [",
                      x.shape.rank(), ",n] for input '", x.name, "' ", x.shape.to_string(),
                      ", got ", dtype_name(y.dtype), " ", y.shape.to_string());
  }
  if (x.shape.rank() == 0) return y.shape[0] == 1 ? Shape{1} : Shape{};
  return x.shape;
}

Expected<PreparedKernel> make_nonzero_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "input 0 and output 0 are required");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const Shape dims, nonzero_rows(node));
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t count, node.input(0).shape.element_count_checked());
  switch (node.input(0).dtype) {
    case DType::kFloat32:
      return nonzero_prepared<float>(node, dims, count);
    case DType::kFloat64:
      return nonzero_prepared<double>(node, dims, count);
    case DType::kFloat16:
    case DType::kBFloat16:
      return nonzero_prepared<uint16_t, HalfNotZero>(node, dims, count);
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return nonzero_prepared<uint8_t>(node, dims, count);
    case DType::kInt16:
    case DType::kUInt16:
      return nonzero_prepared<uint16_t>(node, dims, count);
    case DType::kInt32:
    case DType::kUInt32:
      return nonzero_prepared<uint32_t>(node, dims, count);
    case DType::kInt64:
    case DType::kUInt64:
      return nonzero_prepared<uint64_t>(node, dims, count);
    default:
      return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "': dtype ",
                        dtype_name(node.input(0).dtype), " is not supported by the CPU kernel");
  }
}

// Compress's layout: [outer][dim][inner] elements of `element_bytes`, `limit` condition entries
// used, and the output's actual shape with `axis` still to be set to the selected count.
struct CompressLayout {
  AxisSplit split;
  int64_t limit = 0;
  size_t element_bytes = 0;
  Shape actual;
  int axis = 0;
};

class CompressKernel final : public Kernel {
 public:
  CompressKernel(CompressLayout layout, std::string node, std::string output)
      : layout_(layout), node_(std::move(node)), output_(std::move(output)) {}

  Status run(const RunContext& context) override {
    ONEPOOL_RETURN_IF_ERROR(require_output_shapes(context, node_));
    const auto* condition = context.inputs[1].as<const uint8_t>();
    int64_t selected = 0;
    for (int64_t i = 0; i < layout_.limit; ++i) selected += condition[i] != 0 ? 1 : 0;
    Shape actual = layout_.actual;
    actual[layout_.axis] = selected;
    ONEPOOL_RETURN_IF_ERROR(check_within_bound(node_, output_, context.outputs[0].shape, actual));
    const size_t block = static_cast<size_t>(layout_.split.inner) * layout_.element_bytes;
    const auto* in = context.inputs[0].as<const std::byte>();
    auto* out = context.outputs[0].as<std::byte>();
    for (int64_t o = 0; o < layout_.split.outer; ++o) {
      const std::byte* slab = in + static_cast<size_t>(o * layout_.split.dim) * block;
      for (int64_t i = 0; i < layout_.limit; ++i) {
        if (condition[i] == 0) continue;
        std::memcpy(out, slab + static_cast<size_t>(i) * block, block);
        out += block;
      }
    }
    context.output_shapes[0] = actual;
    return Status::ok();
  }

 private:
  CompressLayout layout_;
  std::string node_;
  std::string output_;
};

// The layout from the axis attribute (none: the flattened input) and the condition's length.
Expected<CompressLayout> compress_layout(const NodeContext& node) {
  const Value& input = node.input(0);
  CompressLayout layout;
  layout.element_bytes = dtype_size(input.dtype);
  const auto& attributes = node.node().attributes;
  if (attributes.has("axis")) {
    ONEPOOL_ASSIGN_OR_RETURN(
        layout.axis, normalize_axis(node, attributes.get_int("axis", 0), input.shape.rank()));
    ONEPOOL_ASSIGN_OR_RETURN(layout.split, split_at_axis(node, layout.axis, false));
    layout.actual = input.shape;
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(layout.split.dim, input.shape.element_count_checked());
    layout.actual = Shape{0};
  }
  layout.limit = std::min(node.input(1).shape.element_count(), layout.split.dim);
  return layout;
}

Status check_compress_values(const NodeContext& node) {
  const Value& condition = node.input(1);
  if (condition.dtype != DType::kBool || condition.shape.rank() != 1) {
    return node.error(StatusCode::kInvalidModel, "input 1 (condition) '", condition.name,
                      "': expected a 1-D bool tensor, got ", dtype_name(condition.dtype), " ",
                      condition.shape.to_string());
  }
  if (node.output(0).dtype != node.input(0).dtype || dtype_size(node.input(0).dtype) == 0) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected dtype ", dtype_name(node.input(0).dtype), ", got ",
                      dtype_name(node.output(0).dtype));
  }
  return Status::ok();
}

// The planned output: the actual shape's rank and every dim but the axis.
Status check_compress_bound(const NodeContext& node, const CompressLayout& layout) {
  const Shape& bound = node.output(0).shape;
  bool matches = bound.rank() == layout.actual.rank();
  for (int axis = 0; matches && axis < bound.rank(); ++axis) {
    matches = axis == layout.axis || bound[axis] == layout.actual[axis];
  }
  if (matches) return Status::ok();
  Shape expected = layout.actual;
  expected[layout.axis] = layout.limit;
  return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                    "': expected a bound of ", expected.to_string(), " (at most ", layout.limit,
                    " along axis ", layout.axis, "), got ", bound.to_string());
}

Expected<PreparedKernel> make_compress_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "inputs 0, 1 and output 0 are required");
  }
  ONEPOOL_RETURN_IF_ERROR(check_compress_values(node));
  ONEPOOL_ASSIGN_OR_RETURN(const CompressLayout layout, compress_layout(node));
  ONEPOOL_RETURN_IF_ERROR(check_compress_bound(node, layout));
  PreparedKernel result;
  result.kernel =
      std::make_unique<CompressKernel>(layout, describe_node(node.node()), node.output(0).name);
  result.data_dependent_outputs = true;
  return result;
}

}  // namespace

void register_select_kernels(KernelRegistry& registry) {
  registry.add("NonZero", &make_nonzero_kernel);
  registry.add("Compress", &make_compress_kernel);
}

}  // namespace onepool::cpu
