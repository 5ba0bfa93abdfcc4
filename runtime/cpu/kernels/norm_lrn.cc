// LRN (local response normalization across channels) and MeanVarianceNormalization.
//
// LRN over X [N, C, d...]: for each element, square_sum = the sum of x^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C), and
// y = x / (bias + alpha / size * square_sum)^beta. A running window over the channels makes it
// O(N * C * spatial) whatever `size` is.
//
// MeanVarianceNormalization over `axes` (default [0, 2, 3]): y = (x - mean) / (sqrt(var) + 1e-9),
// the ONNX function body's formula, with mean and population variance over the reduced axes.
// The statistics of each kept position live in the workspace (two doubles each).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

template <class T>
class LrnKernel final : public Kernel {
 public:
  LrnKernel(int64_t batch, int64_t channels, int64_t spatial, int64_t size, double alpha,
            double beta, double bias)
      : batch_(batch),
        channels_(channels),
        spatial_(spatial),
        before_((size - 1) / 2),
        after_(size - 1 - (size - 1) / 2),
        scale_(alpha / static_cast<double>(size)),
        beta_(beta),
        bias_(bias) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    // One task per (n, spatial position): the window slides along the channels.
    context.threads->parallel_for(batch_ * spatial_, 256, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / spatial_;
        const int64_t s = task % spatial_;
        const T* in = x + n * channels_ * spatial_ + s;
        T* out = y + n * channels_ * spatial_ + s;
        double window = 0.0;
        for (int64_t c = 0; c < std::min(after_, channels_); ++c) {
          window += square(in[c * spatial_]);
        }
        for (int64_t c = 0; c < channels_; ++c) {
          if (c + after_ < channels_) window += square(in[(c + after_) * spatial_]);
          if (c - before_ - 1 >= 0) window -= square(in[(c - before_ - 1) * spatial_]);
          const double denominator = std::pow(bias_ + scale_ * std::max(window, 0.0), beta_);
          out[c * spatial_] = static_cast<T>(static_cast<double>(in[c * spatial_]) / denominator);
        }
      }
    });
    return Status::ok();
  }

 private:
  static double square(T v) { return static_cast<double>(v) * static_cast<double>(v); }

  int64_t batch_, channels_, spatial_, before_, after_;
  double scale_, beta_, bias_;
};

Status require_float_same_io(const NodeContext& node) {
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

Expected<PreparedKernel> make_lrn_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_float_same_io(node));
  const Shape& shape = node.input(0).shape;
  if (shape.rank() < 3) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name,
                      "': expected [N, C, d1, ...] of rank >= 3, got ", shape.to_string());
  }
  const auto& attributes = node.node().attributes;
  const int64_t size = attributes.get_int("size", 0);
  if (size < 1) {
    return node.error(StatusCode::kInvalidModel, "attribute 'size' must be >= 1, got ", size);
  }
  const double alpha = attributes.get_float("alpha", 1e-4f);
  const double beta = attributes.get_float("beta", 0.75f);
  const double bias = attributes.get_float("bias", 1.0f);
  int64_t spatial = 1;
  for (int a = 2; a < shape.rank(); ++a) spatial *= shape[a];
  return visit_dtype<kFloatTypes>(node, describe_input(node, 0), node.input(0).dtype,
                                  [&](auto tag) -> Expected<PreparedKernel> {
                                    using T = typename decltype(tag)::type;
                                    PreparedKernel prepared;
                                    prepared.kernel = std::make_unique<LrnKernel<T>>(
                                        shape[0], shape[1], spatial, size, alpha, beta, bias);
                                    return prepared;
                                  });
}

// ---------------------------------------------------------------------------------------------

template <class T>
class MvnKernel final : public Kernel {
 public:
  MvnKernel(Shape shape, std::vector<int64_t> kept_strides, int64_t kept, int64_t group)
      : shape_(shape), kept_strides_(std::move(kept_strides)), kept_(kept), group_(group) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    auto* mean = reinterpret_cast<double*>(context.workspace);
    double* scale = mean + kept_;
    std::fill(mean, mean + 2 * kept_, 0.0);
    // Step 1. Means, Step 2. variances (two passes: no cancellation), Step 3. normalize.
    for_each_element([&](int64_t i, int64_t k) { mean[k] += static_cast<double>(x[i]); });
    for (int64_t k = 0; k < kept_; ++k) mean[k] /= static_cast<double>(group_);
    for_each_element([&](int64_t i, int64_t k) {
      const double d = static_cast<double>(x[i]) - mean[k];
      scale[k] += d * d;
    });
    for (int64_t k = 0; k < kept_; ++k) {
      scale[k] = 1.0 / (std::sqrt(scale[k] / static_cast<double>(group_)) + 1e-9);
    }
    for_each_element([&](int64_t i, int64_t k) {
      y[i] = static_cast<T>((static_cast<double>(x[i]) - mean[k]) * scale[k]);
    });
    return Status::ok();
  }

 private:
  // fn(element index, kept position) for every element, in memory order.
  template <class Fn>
  void for_each_element(const Fn& fn) const {
    const int rank = shape_.rank();
    int64_t coord[Shape::kMaxRank] = {};
    int64_t k = 0;
    const int64_t count = shape_.element_count();
    for (int64_t i = 0; i < count; ++i) {
      fn(i, k);
      for (int a = rank - 1; a >= 0; --a) {
        const auto stride = kept_strides_[static_cast<size_t>(a)];
        if (++coord[a] < shape_[a]) {
          k += stride;
          break;
        }
        k -= stride * (shape_[a] - 1);
        coord[a] = 0;
      }
    }
  }

  Shape shape_;
  std::vector<int64_t> kept_strides_;  // 0 on reduced axes
  int64_t kept_, group_;
};

Expected<PreparedKernel> make_mvn_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_float_same_io(node));
  const Shape& shape = node.input(0).shape;
  const std::vector<int64_t> axes = node.node().attributes.get_ints("axes", {0, 2, 3});
  bool reduced[Shape::kMaxRank] = {};
  for (int64_t axis : axes) {
    ONEPOOL_ASSIGN_OR_RETURN(int a, data::normalize_axis(node, axis, shape.rank(), "axes entry"));
    reduced[a] = true;
  }
  std::vector<int64_t> kept_strides(static_cast<size_t>(shape.rank()), 0);
  int64_t kept = 1, group = 1;
  for (int a = shape.rank() - 1; a >= 0; --a) {
    if (reduced[a]) {
      group *= shape[a];
      continue;
    }
    kept_strides[static_cast<size_t>(a)] = kept;
    kept *= shape[a];
  }
  ONEPOOL_ASSIGN_OR_RETURN(int64_t workspace,
                           data::checked_mul(kept, static_cast<int64_t>(2 * sizeof(double)),
                                             "MeanVarianceNormalization"));
  return visit_dtype<kFloatTypes>(node, describe_input(node, 0), node.input(0).dtype,
                                  [&](auto tag) -> Expected<PreparedKernel> {
                                    using T = typename decltype(tag)::type;
                                    PreparedKernel prepared;
                                    prepared.kernel = std::make_unique<MvnKernel<T>>(
                                        shape, kept_strides, kept, group);
                                    prepared.workspace_bytes = static_cast<size_t>(workspace);
                                    return prepared;
                                  });
}

}  // namespace

void register_lrn_mvn_kernels(KernelRegistry& registry) {
  registry.add("LRN", &make_lrn_kernel);
  registry.add("MeanVarianceNormalization", &make_mvn_kernel);
}

}  // namespace onepool::cpu
