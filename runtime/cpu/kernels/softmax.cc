// CPU Softmax, LogSoftmax and Hardmax.
//
// Opset >= 13: along one axis (default -1), viewed as [outer, axis dim, inner]. Before opset 13
// the input is flattened to 2-D at `axis` (default 1): [outer, product of dims from axis], inner 1.
// Numerically stable: the row max is subtracted before exp. NaN and Inf flow through the plain
// formula (a row holding +Inf gives NaN), as in ONNX Runtime. Parallel over rows; when the axis
// is the last (inner == 1) each row is contiguous.
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

#include "runtime/cpu/kernels/fast_math.h"
#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/reduce_family.h"
#include "runtime/cpu/kernels/reduce_layout.h"

namespace onepool::cpu {
namespace {

enum class SoftmaxKind : uint8_t { kSoftmax, kLogSoftmax, kHardmax };

// A contiguous float row's max and sum run in kLanes independent lanes (lane j takes elements j,
// j + kLanes, ...), combined in a fixed order at the end: the compiler keeps the lanes in vector
// registers (a single running sum is one dependent chain, 128 adds a row of BERT's attention),
// and the bits are the same on every ISA, since the lanes are part of the arithmetic, not of the
// vectorization. The lanes combine pairwise (lane j with lane j + 8, then + 4, + 2, + 1): four
// vector steps, not sixteen dependent scalar ones (a 32-wide row of attention spent half its time
// there).
constexpr int64_t kLanes = 16;

// The largest element of x[0, n), n >= 1. NaN elements compare false and are skipped, as in the
// strided loop; a row holding one comes out NaN anyway (its exp is NaN, so the sum is).
ONEPOOL_ISA_CLONES float contiguous_max(const float* x, int64_t n) {
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, x[0]);
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
  }
  for (int64_t half = kLanes / 2; half > 0; half /= 2) {
    for (int64_t j = 0; j < half; ++j)
      lanes[j] = lanes[j + half] > lanes[j] ? lanes[j + half] : lanes[j];
  }
  float max = lanes[0];
  for (int64_t i = whole; i < n; ++i) max = x[i] > max ? x[i] : max;
  return max;
}

// y = e^(x - max) over a contiguous row, returning the sum of y (lane sums, then the tail).
ONEPOOL_ISA_CLONES float contiguous_exp_sum(const float* x, float* y, int64_t n, float max) {
  float lanes[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      const float e = fast_exp(x[i + j] - max);
      y[i + j] = e;
      lanes[j] += e;
    }
  }
  for (int64_t half = kLanes / 2; half > 0; half /= 2) {
    for (int64_t j = 0; j < half; ++j) lanes[j] += lanes[j + half];
  }
  float sum = lanes[0];
  for (int64_t i = whole; i < n; ++i) {
    y[i] = fast_exp(x[i] - max);
    sum += y[i];
  }
  return sum;
}

// Softmax of one contiguous float row; y may alias x.
ONEPOOL_ISA_CLONES void contiguous_softmax_row(const float* x, float* y, int64_t n) {
  const float max = contiguous_max(x, n);
  const float scale = 1.0f / contiguous_exp_sum(x, y, n, max);
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

// One row of n values at `stride` elements apart; y may alias x (each index is read before it is
// written).
template <class T, SoftmaxKind kKind>
ONEPOOL_ISA_CLONES void softmax_row(const T* x, T* y, int64_t n, int64_t stride) {
  T max = x[0];
  int64_t max_index = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i * stride] > max) {
      max = x[i * stride];
      max_index = i;
    }
  }
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    for (int64_t i = 0; i < n; ++i) y[i * stride] = T{0};
    y[max_index * stride] = T{1};
  } else if constexpr (kKind == SoftmaxKind::kSoftmax) {
    T sum = 0;
    if constexpr (std::is_same_v<T, float>) {
      // fast_exp vectorizes where std::exp stays a libm call; the sum keeps its order.
      for (int64_t i = 0; i < n; ++i) y[i * stride] = fast_exp(x[i * stride] - max);
      for (int64_t i = 0; i < n; ++i) sum += y[i * stride];
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const T e = std::exp(x[i * stride] - max);
        y[i * stride] = e;
        sum += e;
      }
    }
    const T scale = T{1} / sum;
    for (int64_t i = 0; i < n; ++i) y[i * stride] *= scale;
  } else {
    T sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i * stride] - max);
    const T shift = max + std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i * stride] = x[i * stride] - shift;
  }
}

template <class T, SoftmaxKind kKind>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(AxisSplit split) : split_(split) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    const int64_t n = split_.dim;
    if (n == 0) return Status::ok();
    const int64_t min_chunk = std::max<int64_t>(1, (int64_t{1} << 14) / n);
    if (split_.inner == 1) {
      context.threads->parallel_for(split_.outer, min_chunk, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          if constexpr (std::is_same_v<T, float> && kKind == SoftmaxKind::kSoftmax) {
            contiguous_softmax_row(x + row * n, y + row * n, n);
          } else {
            softmax_row<T, kKind>(x + row * n, y + row * n, n, 1);
          }
        }
      });
      return Status::ok();
    }
    // A non-last axis: row (o, i) starts at o*n*inner + i with stride inner.
    const int64_t inner = split_.inner;
    context.threads->parallel_for(split_.outer * inner, min_chunk, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t start = (row / inner) * n * inner + row % inner;
        softmax_row<T, kKind>(x + start, y + start, n, inner);
      }
    });
    return Status::ok();
  }

 private:
  AxisSplit split_;
};

Status check_softmax_node(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "input 0 and output 0 are required");
  }
  if (node.output(0).dtype != node.input(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "': expected ",
                      dtype_name(node.input(0).dtype), " like input '", node.input(0).name,
                      "', got ", dtype_name(node.output(0).dtype));
  }
  return check_output_shape(node, node.input(0).shape);
}

template <SoftmaxKind kKind>
Expected<PreparedKernel> make_softmax_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_softmax_node(node));
  const bool flatten = node.graph().opset < 13;
  const int64_t axis_attribute = node.node().attributes.get_int("axis", flatten ? 1 : -1);
  const int rank = node.input(0).shape.rank();
  ONEPOOL_ASSIGN_OR_RETURN(const int axis, normalize_axis(node, axis_attribute, rank));
  ONEPOOL_ASSIGN_OR_RETURN(const AxisSplit split, split_at_axis(node, axis, flatten));
  PreparedKernel result;
  result.in_place_inputs = kInPlaceInput0;  // softmax_row reads each element before writing it
  if (node.input(0).dtype == DType::kFloat32) {
    result.kernel = std::make_unique<SoftmaxKernel<float, kKind>>(split);
  } else if (node.input(0).dtype == DType::kFloat64) {
    result.kernel = std::make_unique<SoftmaxKernel<double, kKind>>(split);
  } else {
    return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "': dtype ",
                      dtype_name(node.input(0).dtype), " is not supported by the CPU kernel");
  }
  return result;
}

}  // namespace

void register_softmax_kernels(KernelRegistry& registry) {
  registry.add("Softmax", &make_softmax_kernel<SoftmaxKind::kSoftmax>);
  registry.add("LogSoftmax", &make_softmax_kernel<SoftmaxKind::kLogSoftmax>);
  registry.add("Hardmax", &make_softmax_kernel<SoftmaxKind::kHardmax>);
}

}  // namespace onepool::cpu
