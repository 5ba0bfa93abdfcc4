// CumSum and Trilu: ops whose output has the input's shape and whose parameter (CumSum's axis,
// Trilu's k) is a scalar input that may be a runtime tensor. A constant parameter is validated at
// prepare time; a runtime one is read and validated at each run (an out-of-range axis is a
// kInvalidArgument naming the node, never an access outside the buffers).
#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

// A scalar (or one-element) int32/int64 parameter: fixed at prepare time when constant.
struct ScalarParameter {
  bool present = false;
  bool constant = false;
  int64_t value = 0;
};

int64_t read_int(const TensorView& view) {
  if (view.dtype == DType::kInt32) return *view.as<const int32_t>();
  return *view.as<const int64_t>();
}

Expected<ScalarParameter> scalar_parameter(const NodeContext& node, size_t index,
                                           const char* what) {
  ScalarParameter parameter;
  if (!node.has_input(index)) return parameter;
  const Value& value = node.input(index);
  if (value.dtype != DType::kInt32 && value.dtype != DType::kInt64) {
    return node.error(StatusCode::kInvalidModel, what, " '", value.name,
                      "': expected int32 or int64, got ", dtype_name(value.dtype));
  }
  if (value.shape.element_count() != 1 || value.shape.rank() > 1) {
    return node.error(StatusCode::kInvalidModel, what, " '", value.name,
                      "': expected a scalar, got shape ", value.shape.to_string());
  }
  parameter.present = true;
  if (const HostTensor* constant = node.constant_input(index)) {
    parameter.constant = true;
    parameter.value = constant->int_at(0);
  }
  return parameter;
}

Status require_same_io(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != node.output(0).dtype || node.input(0).shape != node.output(0).shape) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "' ",
                      dtype_name(node.output(0).dtype), node.output(0).shape.to_string(),
                      " must match input '", node.input(0).name, "' ",
                      dtype_name(node.input(0).dtype), node.input(0).shape.to_string());
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// CumSum: y[..., i, ...] = sum of x[..., j, ...] over j <= i along `axis` (j < i when exclusive;
// j >= i / j > i when reverse). The input is viewed as [outer, dim, inner] and each of the
// outer * inner lines is scanned; sums accumulate in T, as the spec's reference does.

template <class T>
class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(std::string node, Shape shape, ScalarParameter axis, bool exclusive, bool reverse)
      : node_(std::move(node)),
        shape_(shape),
        axis_(axis),
        exclusive_(exclusive),
        reverse_(reverse) {}

  Status run(const RunContext& context) override {
    int64_t axis = axis_.constant ? axis_.value : read_int(context.inputs[1]);
    const int rank = shape_.rank();
    if (axis < -rank || axis >= rank) {
      return make_status(StatusCode::kInvalidArgument, node_, ": axis ", axis,
                         " is out of range for rank ", rank, " (expected [", -rank, ", ", rank - 1,
                         "])");
    }
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= shape_[k];
    for (int k = static_cast<int>(axis) + 1; k < rank; ++k) inner *= shape_[k];
    const int64_t dim = shape_[static_cast<int>(axis)];
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    context.threads->parallel_for(outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o)
        scan_block(x + o * dim * inner, y + o * dim * inner, dim, inner);
    });
    return Status::ok();
  }

 private:
  // One [dim, inner] block, a row of `inner` running sums at a time (rows are contiguous, so the
  // inner loop vectorizes). In place is safe: row i is read before it is written.
  void scan_block(const T* x, T* y, int64_t dim, int64_t inner) const {
    for (int64_t step = 0; step < dim; ++step) {
      const int64_t row = reverse_ ? dim - 1 - step : step;
      const int64_t previous = reverse_ ? row + 1 : row - 1;
      const T* x_row = x + row * inner;
      T* y_row = y + row * inner;
      if (step == 0) {
        for (int64_t i = 0; i < inner; ++i) y_row[i] = exclusive_ ? T(0) : x_row[i];
        continue;
      }
      const T* y_prev = y + previous * inner;
      if (exclusive_) {
        const T* x_prev = x + previous * inner;
        for (int64_t i = 0; i < inner; ++i) y_row[i] = static_cast<T>(y_prev[i] + x_prev[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) y_row[i] = static_cast<T>(y_prev[i] + x_row[i]);
      }
    }
  }

  std::string node_;
  Shape shape_;
  ScalarParameter axis_;
  bool exclusive_;
  bool reverse_;
};

Expected<PreparedKernel> make_cumsum_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_same_io(node));
  if (!node.has_input(1))
    return node.error(StatusCode::kInvalidModel, "input 1 (axis) is required");
  ONEPOOL_ASSIGN_OR_RETURN(ScalarParameter axis, scalar_parameter(node, 1, "axis"));
  const Shape& shape = node.input(0).shape;
  if (shape.rank() == 0) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name,
                      "' must have rank >= 1, got a scalar");
  }
  if (axis.constant) {
    ONEPOOL_ASSIGN_OR_RETURN(int normalized,
                             data::normalize_axis(node, axis.value, shape.rank(), "axis"));
    axis.value = normalized;
  }
  const auto& attributes = node.node().attributes;
  const bool exclusive = attributes.get_int("exclusive", 0) != 0;
  const bool reverse = attributes.get_int("reverse", 0) != 0;
  constexpr DTypeSet kCumSumTypes = kFloatTypes | dtype_bit(DType::kInt32) |
                                    dtype_bit(DType::kInt64) | dtype_bit(DType::kUInt32) |
                                    dtype_bit(DType::kUInt64);
  return visit_dtype<kCumSumTypes>(node, describe_input(node, 0), node.input(0).dtype,
                                   [&](auto tag) -> Expected<PreparedKernel> {
                                     using T = typename decltype(tag)::type;
                                     PreparedKernel prepared;
                                     prepared.kernel = std::make_unique<CumSumKernel<T>>(
                                         describe_node(node.node()), shape, axis, exclusive,
                                         reverse);
                                     prepared.in_place_inputs = kInPlaceInput0;
                                     return prepared;
                                   });
}

// ---------------------------------------------------------------------------------------------
// Trilu: over the last two dims [rows, cols] of each matrix, keeps element (i, j) when
// j - i >= k (upper) or j - i <= k (lower) and writes 0 elsewhere. Elements move by size.

template <class E>
class TriluKernel final : public Kernel {
 public:
  TriluKernel(int64_t matrices, int64_t rows, int64_t cols, ScalarParameter k, bool upper)
      : matrices_(matrices), rows_(rows), cols_(cols), k_(k), upper_(upper) {}

  Status run(const RunContext& context) override {
    // Any k is valid; clamping it to [-rows, cols] keeps j - i arithmetic far from overflow.
    int64_t k = k_.present ? (k_.constant ? k_.value : read_int(context.inputs[1])) : 0;
    k = std::clamp<int64_t>(k, -rows_ - 1, cols_ + 1);
    const E* x = context.inputs[0].as<const E>();
    E* y = context.outputs[0].as<E>();
    context.threads->parallel_for(matrices_ * rows_, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % rows_;
        // Kept columns: [i + k, cols) for upper, [0, i + k] for lower.
        const int64_t split = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols_);
        const E* src = x + r * cols_;
        E* dst = y + r * cols_;
        for (int64_t j = 0; j < cols_; ++j) {
          const bool keep = upper_ ? j >= split : j < split;
          dst[j] = keep ? src[j] : E{0};
        }
      }
    });
    return Status::ok();
  }

 private:
  int64_t matrices_, rows_, cols_;
  ScalarParameter k_;
  bool upper_;
};

Expected<PreparedKernel> make_trilu_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_same_io(node));
  ONEPOOL_ASSIGN_OR_RETURN(ScalarParameter k, scalar_parameter(node, 1, "k"));
  const Shape& shape = node.input(0).shape;
  if (shape.rank() < 2) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name,
                      "' must have rank >= 2, got ", shape.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size,
                           data::movable_element_size(node, node.input(0).dtype));
  const int64_t rows = shape[shape.rank() - 2];
  const int64_t cols = shape[shape.rank() - 1];
  const int64_t count = shape.element_count();
  const int64_t matrices = rows * cols == 0 ? 0 : count / (rows * cols);
  const bool upper = node.node().attributes.get_int("upper", 1) != 0;
  PreparedKernel prepared;
  data::dispatch_element_size(element_size, [&](auto tag) {
    prepared.kernel = std::make_unique<TriluKernel<decltype(tag)>>(matrices, rows, cols, k, upper);
  });
  prepared.in_place_inputs = kInPlaceInput0;
  return prepared;
}

}  // namespace

void register_cumsum_trilu_kernels(KernelRegistry& registry) {
  registry.add("CumSum", &make_cumsum_kernel);
  registry.add("Trilu", &make_trilu_kernel);
}

}  // namespace onepool::cpu
