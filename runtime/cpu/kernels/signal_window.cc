// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix: generators whose parameters are
// runtime scalars. The output shape is fixed when the session is created, so each run checks
// that the parameters give that shape (kInvalidArgument naming both otherwise) before writing.
//
// Windows (ONNX 17): w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), n < size, with
// N = size (periodic, the default) or size - 1 (symmetric); Hann a = (0.5, 0.5, 0), Hamming
// (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08). A symmetric window of size 1 divides by zero
// and is NaN, as the ONNX reference computes it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Element 0 of a numeric scalar tensor as double.
double scalar_at(const TensorView& view) {
  switch (view.dtype) {
    case DType::kFloat32:
      return *view.as<const float>();
    case DType::kFloat64:
      return *view.as<const double>();
    case DType::kInt32:
      return *view.as<const int32_t>();
    case DType::kInt64:
      return static_cast<double>(*view.as<const int64_t>());
    default:
      return std::nan("");
  }
}

Status require_scalar_inputs(const NodeContext& node, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (!node.has_input(i))
      return node.error(StatusCode::kInvalidModel, "input ", i, " is required");
    const Value& v = node.input(i);
    const DType d = v.dtype;
    const bool numeric =
        d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kInt32 || d == DType::kInt64;
    if (!numeric || v.shape.element_count() != 1 || v.shape.rank() > 1) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " '", v.name,
                        "': expected a float or int scalar, got ", dtype_name(d),
                        v.shape.to_string());
    }
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is required");
  return Status::ok();
}

struct WindowCoefficients {
  double a0, a1, a2;
};

template <class T>
class WindowKernel final : public Kernel {
 public:
  WindowKernel(std::string node, int64_t size, bool periodic, WindowCoefficients a)
      : node_(std::move(node)), size_(size), periodic_(periodic), a_(a) {}

  Status run(const RunContext& context) override {
    const double size = scalar_at(context.inputs[0]);
    if (size != static_cast<double>(size_)) {
      return make_status(StatusCode::kInvalidArgument, node_, ": size ", size,
                         " differs from the output's length ", size_,
                         " (fixed when the session is created)");
    }
    const double n_total = static_cast<double>(periodic_ ? size_ : size_ - 1);
    T* out = context.outputs[0].as<T>();
    for (int64_t n = 0; n < size_; ++n) {
      const double phase = 2 * kPi * static_cast<double>(n) / n_total;
      out[n] = static_cast<T>(a_.a0 - a_.a1 * std::cos(phase) + a_.a2 * std::cos(2 * phase));
    }
    return Status::ok();
  }

 private:
  std::string node_;
  int64_t size_;
  bool periodic_;
  WindowCoefficients a_;
};

// The output dtype named by `output_datatype` (default float32) must be the output's.
Status check_output_datatype(const NodeContext& node) {
  const int64_t datatype =
      node.node().attributes.get_int("output_datatype", static_cast<int64_t>(DType::kFloat32));
  if (datatype == static_cast<int64_t>(node.output(0).dtype)) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "attribute 'output_datatype' ",
                    dtype_name(static_cast<DType>(datatype)), " differs from output '",
                    node.output(0).name, "' dtype ", dtype_name(node.output(0).dtype));
}

template <WindowCoefficients (*Coefficients)()>
Expected<PreparedKernel> make_window_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_scalar_inputs(node, 1));
  ONEPOOL_RETURN_IF_ERROR(check_output_datatype(node));
  const Shape& out = node.output(0).shape;
  if (out.rank() != 1) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected rank 1, got ", out.to_string());
  }
  const bool periodic = node.node().attributes.get_int("periodic", 1) != 0;
  return visit_dtype<kFloatTypes>(node, describe_output(node, 0), node.output(0).dtype,
                                  [&](auto tag) -> Expected<PreparedKernel> {
                                    using T = typename decltype(tag)::type;
                                    PreparedKernel prepared;
                                    prepared.kernel = std::make_unique<WindowKernel<T>>(
                                        describe_node(node.node()), out[0], periodic,
                                        Coefficients());
                                    return prepared;
                                  });
}

constexpr WindowCoefficients hann() { return {0.5, 0.5, 0.0}; }
constexpr WindowCoefficients hamming() { return {25.0 / 46.0, 21.0 / 46.0, 0.0}; }
constexpr WindowCoefficients blackman() { return {0.42, 0.5, 0.08}; }

// ---------------------------------------------------------------------------------------------
// MelWeightMatrix [dft_length / 2 + 1, num_mel_bins]: triangular filters whose edges are
// num_mel_bins + 2 points spaced evenly on the mel scale (mel = 2595 log10(1 + f / 700))
// between lower_edge_hertz and upper_edge_hertz, mapped to spectrogram bins as
// floor((dft_length + 1) * f / sample_rate), exactly as the ONNX reference does.

template <class T>
class MelWeightMatrixKernel final : public Kernel {
 public:
  MelWeightMatrixKernel(std::string node, int64_t bins, int64_t mels)
      : node_(std::move(node)), bins_(bins), mels_(mels) {}

  Status run(const RunContext& context) override {
    const double mels = scalar_at(context.inputs[0]);
    const double dft_length = scalar_at(context.inputs[1]);
    const double sample_rate = scalar_at(context.inputs[2]);
    const double lower = scalar_at(context.inputs[3]);
    const double upper = scalar_at(context.inputs[4]);
    if (mels != static_cast<double>(mels_) || !(dft_length >= 0) ||
        std::floor(dft_length / 2) + 1 != static_cast<double>(bins_) || !(sample_rate > 0)) {
      return make_status(StatusCode::kInvalidArgument, node_, ": num_mel_bins ", mels,
                         ", dft_length ", dft_length, " and sample_rate ", sample_rate,
                         " do not give the output's shape [", bins_, ", ", mels_,
                         "] with a positive sample rate");
    }
    T* out = context.outputs[0].as<T>();
    std::fill(out, out + bins_ * mels_, T(0));
    // Step 1. The num_mel_bins + 2 filter edges as spectrogram bin indices.
    const double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0);
    const double high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
    const double step = (high_mel - low_mel) / static_cast<double>(mels_ + 2);
    auto edge = [&](int64_t i) {
      const double hertz =
          700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      return static_cast<int64_t>(std::floor((dft_length + 1) * hertz / sample_rate));
    };
    // Step 2. Rising then falling ramps; bins outside the matrix are an error, not a write.
    for (int64_t m = 0; m < mels_; ++m) {
      const int64_t left = edge(m), center = edge(m + 1), right = edge(m + 2);
      if (left < 0 || right >= bins_ || center < left || right < center) {
        return make_status(StatusCode::kInvalidArgument, node_, ": mel filter ", m, " spans bins [",
                           left, ", ", right, "], outside [0, ", bins_ - 1,
                           "]; check lower_edge_hertz and upper_edge_hertz");
      }
      if (center == left) {
        out[center * mels_ + m] = T(1);
      } else {
        for (int64_t j = left; j <= center; ++j) {
          out[j * mels_ + m] =
              static_cast<T>(static_cast<double>(j - left) / static_cast<double>(center - left));
        }
      }
      for (int64_t j = center; j < right; ++j) {
        out[j * mels_ + m] =
            static_cast<T>(static_cast<double>(right - j) / static_cast<double>(right - center));
      }
    }
    return Status::ok();
  }

 private:
  std::string node_;
  int64_t bins_, mels_;
};

Expected<PreparedKernel> make_mel_weight_matrix_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_scalar_inputs(node, 5));
  ONEPOOL_RETURN_IF_ERROR(check_output_datatype(node));
  const Shape& out = node.output(0).shape;
  if (out.rank() != 2) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected [dft_length / 2 + 1, num_mel_bins], got ", out.to_string());
  }
  return visit_dtype<kFloatTypes>(node, describe_output(node, 0), node.output(0).dtype,
                                  [&](auto tag) -> Expected<PreparedKernel> {
                                    using T = typename decltype(tag)::type;
                                    PreparedKernel prepared;
                                    prepared.kernel = std::make_unique<MelWeightMatrixKernel<T>>(
                                        describe_node(node.node()), out[0], out[1]);
                                    return prepared;
                                  });
}

}  // namespace

void register_signal_window_kernels(KernelRegistry& registry) {
  registry.add("HannWindow", &make_window_kernel<hann>);
  registry.add("HammingWindow", &make_window_kernel<hamming>);
  registry.add("BlackmanWindow", &make_window_kernel<blackman>);
  registry.add("MelWeightMatrix", &make_mel_weight_matrix_kernel);
}

}  // namespace onepool::cpu
