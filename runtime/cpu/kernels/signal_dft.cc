// DFT and STFT (ONNX 17). Signals are real ([..., 1]) or complex ([..., 2]); outputs complex.
//
// Both evaluate the transform directly: X[k] = sum_n x[n] e^(-2 pi i k n / L) (the inverse DFT
// uses +i and divides by L), with a table of the L twiddles so no trig call sits in the inner
// loop. Cost: O(output bins × L) per transformed line, no FFT: fine for the short frames STFT
// front ends use (L of a few hundred), slow for long signals (L = 65536 would be ~4e9 complex
// multiply-adds per line). Accumulation is in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

int64_t int_scalar(const TensorView& view) {
  if (view.dtype == DType::kInt32) return *view.as<const int32_t>();
  return *view.as<const int64_t>();
}

// cos and sin of 2 pi j / L for j < L, interleaved, into `table` (2 * L doubles).
void fill_twiddles(double* table, int64_t length) {
  for (int64_t j = 0; j < length; ++j) {
    const double angle = 2 * kPi * static_cast<double>(j) / static_cast<double>(length);
    table[2 * j] = std::cos(angle);
    table[2 * j + 1] = std::sin(angle);
  }
}

// One line: out[k * out_stride] (re, im) for k < bins from in[n * in_stride] for n < count
// (the rest of the length-L signal is zero), complex when `complex_input`.
template <class T>
void transform_line(const T* in, int64_t in_stride, int64_t count, bool complex_input, T* out,
                    int64_t out_stride, int64_t bins, int64_t length, const double* twiddles,
                    bool inverse, const T* window) {
  const double sign = inverse ? 1.0 : -1.0;
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0.0, im = 0.0;
    int64_t j = 0;  // (k * n) mod L, advanced by k each step
    for (int64_t n = 0; n < count; ++n) {
      const double w = window != nullptr ? static_cast<double>(window[n]) : 1.0;
      const double xr = static_cast<double>(in[n * in_stride]) * w;
      const double xi = complex_input ? static_cast<double>(in[n * in_stride + 1]) * w : 0.0;
      const double c = twiddles[2 * j], s = sign * twiddles[2 * j + 1];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
      j += k % length;
      if (j >= length) j -= length;
    }
    out[k * out_stride] = static_cast<T>(re * scale);
    out[k * out_stride + 1] = static_cast<T>(im * scale);
  }
}

// ---------------------------------------------------------------------------------------------
// DFT: input [batch, ..., n_axis, ..., c] (c = 1 or 2) → output with n_axis replaced by L (or
// L / 2 + 1 when onesided) and c = 2.

template <class T>
class DftKernel final : public Kernel {
 public:
  DftKernel(std::string node, int64_t outer, int64_t in_len, int64_t inner, bool complex_input,
            int64_t bins, int64_t length, bool inverse, bool runtime_length)
      : node_(std::move(node)),
        outer_(outer),
        in_len_(in_len),
        inner_(inner),
        complex_input_(complex_input),
        bins_(bins),
        length_(length),
        inverse_(inverse),
        runtime_length_(runtime_length),
        twiddles_(static_cast<size_t>(2 * length)) {
    fill_twiddles(twiddles_.data(), length_);
  }

  Status run(const RunContext& context) override {
    if (runtime_length_ && int_scalar(context.inputs[1]) != length_) {
      return make_status(StatusCode::kInvalidArgument, node_, ": dft_length ",
                         int_scalar(context.inputs[1]), " differs from ", length_,
                         ", the length the output shape was planned for");
    }
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    const int64_t channels = complex_input_ ? 2 : 1;
    const int64_t count = std::min(in_len_, length_);
    context.threads->parallel_for(outer_ * inner_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t o = line / inner_, i = line % inner_;
        const T* in = x + (o * in_len_ * inner_ + i) * channels;
        T* out = y + (o * bins_ * inner_ + i) * 2;
        transform_line(in, inner_ * channels, count, complex_input_, out, inner_ * 2, bins_,
                       length_, twiddles_.data(), inverse_, static_cast<const T*>(nullptr));
      }
    });
    return Status::ok();
  }

 private:
  std::string node_;
  int64_t outer_, in_len_, inner_;
  bool complex_input_;
  int64_t bins_, length_;
  bool inverse_, runtime_length_;
  std::vector<double> twiddles_;
};

Expected<PreparedKernel> make_dft_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  const Value& input = node.input(0);
  const Shape& in = input.shape;
  if (in.rank() < 3 || (in[in.rank() - 1] != 1 && in[in.rank() - 1] != 2)) {
    return node.error(StatusCode::kInvalidModel, "input '", input.name,
                      "': expected [batch, signal dims..., 1 or 2], got ", in.to_string());
  }
  const auto& attributes = node.node().attributes;
  const int64_t axis_attribute = attributes.get_int("axis", 1);
  const int64_t axis = axis_attribute < 0 ? axis_attribute + in.rank() : axis_attribute;
  if (axis < 1 || axis > in.rank() - 2) {
    return node.error(StatusCode::kInvalidModel, "axis ", axis_attribute,
                      " must name a signal dim of ", in.to_string());
  }
  if (node.has_input(2)) {
    return node.error(StatusCode::kUnsupported, "the axis input (opset 20) is not supported");
  }
  const bool inverse = attributes.get_int("inverse", 0) != 0;
  const bool onesided = attributes.get_int("onesided", 0) != 0;
  if (inverse && onesided) {
    return node.error(StatusCode::kUnsupported, "onesided inverse DFT is not supported");
  }
  // Step 1. L: dft_length when given (constant, or checked at run time), else the signal length.
  const int a = static_cast<int>(axis);
  const Shape& out = node.output(0).shape;
  int64_t length = in[a];
  bool runtime_length = false;
  if (node.has_input(1)) {
    if (const HostTensor* constant = node.constant_input(1)) {
      length = constant->int_at(0);
    } else if (!onesided && out.rank() == in.rank()) {
      length = out[a];
      runtime_length = true;
    } else {
      return node.error(StatusCode::kUnsupported, "a runtime dft_length with onesided output ",
                        "is not supported (make it a constant)");
    }
  }
  if (length < 1) return node.error(StatusCode::kInvalidModel, "dft_length ", length, " < 1");
  // Step 2. The output shape follows.
  Shape expected = in;
  expected[a] = onesided ? length / 2 + 1 : length;
  expected[in.rank() - 1] = 2;
  if (out != expected) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", expected.to_string(), ", got ", out.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, input.dtype));
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < a; ++k) outer *= in[k];
  for (int k = a + 1; k < in.rank() - 1; ++k) inner *= in[k];
  const bool complex_input = in[in.rank() - 1] == 2;
  return visit_dtype<kFloatTypes>(
      node, describe_input(node, 0), input.dtype, [&](auto tag) -> Expected<PreparedKernel> {
        using T = typename decltype(tag)::type;
        PreparedKernel prepared;
        prepared.kernel = std::make_unique<DftKernel<T>>(describe_node(node.node()), outer, in[a],
                                                         inner, complex_input, expected[a], length,
                                                         inverse, runtime_length);
        return prepared;
      });
}

// ---------------------------------------------------------------------------------------------
// STFT: signal [batch, length, c], frame_step (scalar), window [L] (optional), frame_length
// (optional scalar) → [batch, frames, bins, 2] with frames = (length - L) / step + 1 and bins =
// L / 2 + 1 (onesided, the default) or L. frame_step and frame_length may be runtime scalars:
// each run checks they give the output's shape. The twiddle table (2 * L doubles, L <= the
// signal length) lives in the workspace.

template <class T>
class StftKernel final : public Kernel {
 public:
  StftKernel(std::string node, int64_t batch, int64_t signal_length, bool complex_input,
             int64_t frames, int64_t bins, bool onesided, int64_t window_length)
      : node_(std::move(node)),
        batch_(batch),
        signal_length_(signal_length),
        complex_input_(complex_input),
        frames_(frames),
        bins_(bins),
        onesided_(onesided),
        window_length_(window_length) {}

  Status run(const RunContext& context) override {
    // Step 1. L and the step, checked against the output shape planned at session creation.
    const int64_t step = int_scalar(context.inputs[1]);
    const bool has_length = context.inputs.size() > 3 && context.inputs[3].data != nullptr;
    const int64_t length = has_length ? int_scalar(context.inputs[3]) : window_length_;
    const bool fits = length >= 1 && length <= signal_length_ && step >= 1 &&
                      (window_length_ < 0 || length == window_length_) &&
                      (signal_length_ - length) / step + 1 == frames_ &&
                      (onesided_ ? length / 2 + 1 : length) == bins_;
    if (!fits) {
      return make_status(StatusCode::kInvalidArgument, node_, ": frame_step ", step,
                         " and frame_length ", length, " on a signal of ", signal_length_,
                         " do not give the output's ", frames_, " frames of ", bins_, " bins",
                         window_length_ >= 0 ? " (or differ from the window's length)" : "");
    }
    auto* twiddles = reinterpret_cast<double*>(context.workspace);
    fill_twiddles(twiddles, length);
    // Step 2. One transform per (batch, frame).
    const T* x = context.inputs[0].as<const T>();
    const T* window = context.inputs.size() > 2 && context.inputs[2].data != nullptr
                          ? context.inputs[2].as<const T>()
                          : nullptr;
    T* y = context.outputs[0].as<T>();
    const int64_t channels = complex_input_ ? 2 : 1;
    context.threads->parallel_for(batch_ * frames_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / frames_, f = task % frames_;
        const T* in = x + (b * signal_length_ + f * step) * channels;
        T* out = y + task * bins_ * 2;
        transform_line(in, channels, length, complex_input_, out, 2, bins_, length, twiddles, false,
                       window);
      }
    });
    return Status::ok();
  }

 private:
  std::string node_;
  int64_t batch_, signal_length_;
  bool complex_input_;
  int64_t frames_, bins_;
  bool onesided_;
  int64_t window_length_;  // -1 without a window
};

Expected<PreparedKernel> make_stft_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected inputs signal and frame_step");
  }
  const Value& signal = node.input(0);
  const Shape& in = signal.shape;
  if (in.rank() != 3 || (in[2] != 1 && in[2] != 2)) {
    return node.error(StatusCode::kInvalidModel, "signal '", signal.name,
                      "': expected [batch, length, 1 or 2], got ", in.to_string());
  }
  for (size_t i : {size_t{1}, size_t{3}}) {
    if (!node.has_input(i)) continue;
    const Value& v = node.input(i);
    if ((v.dtype != DType::kInt32 && v.dtype != DType::kInt64) || v.shape.element_count() != 1) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " '", v.name,
                        "': expected an int32 or int64 scalar");
    }
  }
  int64_t window_length = -1;
  if (node.has_input(2)) {
    ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 2, signal.dtype));
    if (node.input(2).shape.rank() != 1) {
      return node.error(StatusCode::kInvalidModel, "window '", node.input(2).name,
                        "': expected rank 1, got ", node.input(2).shape.to_string());
    }
    window_length = node.input(2).shape[0];
  }
  if (window_length < 0 && !node.has_input(3)) {
    return node.error(StatusCode::kInvalidModel, "either window or frame_length is required");
  }
  const Shape& out = node.output(0).shape;
  if (out.rank() != 4 || out[0] != in[0] || out[3] != 2) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "': expected [",
                      in[0], ", frames, bins, 2], got ", out.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, signal.dtype));
  const bool onesided = node.node().attributes.get_int("onesided", 1) != 0;
  ONEPOOL_ASSIGN_OR_RETURN(
      int64_t workspace,
      data::checked_mul(in[1], static_cast<int64_t>(2 * sizeof(double)), "STFT twiddles"));
  return visit_dtype<kFloatTypes>(
      node, describe_input(node, 0), signal.dtype, [&](auto tag) -> Expected<PreparedKernel> {
        using T = typename decltype(tag)::type;
        PreparedKernel prepared;
        prepared.kernel =
            std::make_unique<StftKernel<T>>(describe_node(node.node()), in[0], in[1], in[2] == 2,
                                            out[1], out[2], onesided, window_length);
        prepared.workspace_bytes = static_cast<size_t>(workspace);
        return prepared;
      });
}

}  // namespace

void register_signal_dft_kernels(KernelRegistry& registry) {
  registry.add("DFT", &make_dft_kernel);
  registry.add("STFT", &make_stft_kernel);
}

}  // namespace onepool::cpu
