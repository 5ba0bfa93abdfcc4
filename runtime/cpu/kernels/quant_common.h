// Shared pieces of the quantized kernels (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv): the ONNX rounding and saturation rule,
// the reading of scale / zero-point inputs, and the int32 dot-product row the integer GEMMs share.
//
// Rounding is round-half-to-even (std::nearbyint under the default rounding mode), as the spec's
// numpy.rint. Integer products accumulate in int32 and wrap on overflow like ONNX Runtime (the
// sums are done in uint32, so the wrap is defined behaviour).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::quant {

using nn::checked_mul;

/// saturate(round_half_even(value) + zero_point) into Q. NaN gives the zero point.
template <class Q>
Q saturate_rounded(float value, int32_t zero_point) {
  const float rounded = std::nearbyint(value);
  constexpr float kLow = static_cast<float>(std::numeric_limits<Q>::lowest());
  constexpr float kHigh = static_cast<float>(std::numeric_limits<Q>::max());
  // |rounded| >= 2^24 saturates anyway, so the float sum below is exact where it matters.
  // Selects, not branches, so that the loops calling this vectorize.
  const float shifted = rounded + static_cast<float>(zero_point);
  const float low = shifted < kLow ? kLow : shifted;
  const float clamped = low > kHigh ? kHigh : low;
  const bool is_nan = rounded != rounded;
  return static_cast<Q>(is_nan ? static_cast<float>(zero_point) : clamped);
}

/// ONNX QuantizeLinear of one value: saturate(round(x / scale) + zero_point). Divides (not
/// multiplies by the reciprocal) so that ties land where the spec's x / y_scale puts them.
template <class Q>
Q quantize_value(float x, float scale, int32_t zero_point) {
  return saturate_rounded<Q>(x / scale, zero_point);
}

/// Requantizes an int32 accumulator: saturate(round(float(acc) * multiplier) + zero_point), the
/// output stage of QLinearMatMul and QLinearConv (multiplier = a_scale * b_scale / y_scale).
template <class Q>
Q requantize(int32_t acc, float multiplier, int32_t zero_point) {
  return saturate_rounded<Q>(static_cast<float>(acc) * multiplier, zero_point);
}

/// a + b on int32 with two's-complement wrap (the accumulation ONNX Runtime does).
inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

/// out[i] = requantize(acc[i] + bias (wrapping), multiplier, zero_point) over one row: vector
/// rounding where the CPU has SSE4.1 (a baseline build would call libm per element).
template <class Q>
ONEPOOL_ISA_CLONES void requantize_row(const int32_t* acc, int32_t bias, float multiplier,
                                       int32_t zero_point, Q* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = requantize<Q>(wrapping_add(acc[i], bias), multiplier, zero_point);
  }
}

/// out[i] = quantize_value(x[i], scale, zero_point) over one row.
template <class Q>
ONEPOOL_ISA_CLONES void quantize_row(const float* x, float scale, int32_t zero_point, Q* out,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = quantize_value<Q>(x[i], scale, zero_point);
}

/// A scale or zero-point input seen at prepare time: per tensor (one element) or one value per
/// channel along some axis. At run time `at(data, c)` reads channel c's value.
struct QuantParam {
  size_t input = 0;
  bool present = false;
  int64_t count = 1;  // 1: per tensor; else per channel

  int64_t index(int64_t channel) const { return count == 1 ? 0 : channel; }
};

/// Checks input `index` (optional when `optional`) as a per-tensor (one element) or per-channel
/// (1-D of `channels` elements) parameter of dtype `dtype`. `role` names it in errors
/// ("y_scale"). kInvalidModel / kUnsupported name the node, input, expected and actual.
Expected<QuantParam> read_quant_param(const NodeContext& node, size_t index, DType dtype,
                                      int64_t channels, bool optional, const char* role);

/// The zero point of channel c as int32 (0 when the input is omitted).
template <class Q>
int32_t zero_point_at(const QuantParam& param, const RunContext& context, int64_t channel) {
  if (!param.present) return 0;
  const Q* data = context.inputs[param.input].as<const Q>();
  return static_cast<int32_t>(data[param.index(channel)]);
}

/// The float32 scale of channel c.
inline float scale_at(const QuantParam& param, const RunContext& context, int64_t channel) {
  return context.inputs[param.input].as<const float>()[param.index(channel)];
}

/// acc[j] = sum_k (a[k] - a_zero) * (b[k * n + j] - b_zero[j]) for j in [0, n), wrapping in
/// int32. `b_zero` is one value (b_zero_stride 0) or one per column (stride 1).
template <class A, class B>
ONEPOOL_ISA_CLONES void integer_dot_row(int64_t n, int64_t k, const A* a, int32_t a_zero,
                                        const B* b, const B* b_zero, int64_t b_zero_stride,
                                        int32_t* acc) {
  std::fill(acc, acc + n, 0);
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t av = static_cast<int32_t>(a[kk]) - a_zero;
    if (av == 0) continue;
    const B* b_row = b + kk * n;
    if (b_zero_stride == 0) {
      const int32_t bz = b_zero ? static_cast<int32_t>(*b_zero) : 0;
      for (int64_t j = 0; j < n; ++j) {
        acc[j] = wrapping_add(acc[j], av * (static_cast<int32_t>(b_row[j]) - bz));
      }
      continue;
    }
    for (int64_t j = 0; j < n; ++j) {
      const int32_t bz = static_cast<int32_t>(b_zero[j]);
      acc[j] = wrapping_add(acc[j], av * (static_cast<int32_t>(b_row[j]) - bz));
    }
  }
}

/// The factories of the integer-product kernels (quant_matmul.cc, quant_conv.cc), registered
/// with the rest by register_quantized_kernels (quantize.cc).
Expected<PreparedKernel> make_matmul_integer(const NodeContext& node);
Expected<PreparedKernel> make_qlinear_matmul(const NodeContext& node);
Expected<PreparedKernel> make_conv_integer(const NodeContext& node);
Expected<PreparedKernel> make_qlinear_conv(const NodeContext& node);

}  // namespace onepool::cpu::quant

namespace onepool::cpu::quant {

template <class T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<uint8_t>{}) or f(TypeTag<int8_t>{}) for `dtype`; kUnsupported naming `what`
/// for any other dtype.
template <class F>
Expected<PreparedKernel> visit_8bit(const NodeContext& node, const std::string& what, DType dtype,
                                    F&& f) {
  if (dtype == DType::kUInt8) return f(TypeTag<uint8_t>{});
  if (dtype == DType::kInt8) return f(TypeTag<int8_t>{});
  return node.error(StatusCode::kUnsupported, what, ": dtype ", dtype_name(dtype),
                    " is not supported (uint8, int8)");
}

}  // namespace onepool::cpu::quant
