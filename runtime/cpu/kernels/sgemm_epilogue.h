// What the packed GEMM's micro-kernels do to a finished tile of C while it is still in registers:
// c = activation((c + bias[row]) + residual[row, col]), each step rounded as the separate passes
// round (add_bias_activation: bias, then the residual, then the activation), so a product with an
// epilogue gives the bits of the product followed by those passes. It saves each pass a read and
// a write of C: on a 1x1 convolution with few input channels (ResNet-50's 64 -> 256 on 56x56) the
// passes cost as much as the multiply-adds.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "runtime/cpu/kernels/activation.h"

namespace onepool::cpu::nn {

struct GemmEpilogue {
  const float* bias = nullptr;      // one per row of the product (row 0 first), or nullptr
  const float* residual = nullptr;  // C's layout and row stride (ldc), or nullptr
  Activation activation;            // one gemm_epilogue_supports() accepts
};

/// The activations a micro-kernel applies in registers: none, Relu, LeakyRelu and Clip with
/// numeric bounds (a NaN bound makes every element NaN, which the Clip pass handles). Callers run
/// the passes instead for the others.
inline bool gemm_epilogue_supports(const Activation& activation) {
  switch (activation.kind) {
    case ActivationKind::kNone:
    case ActivationKind::kRelu:
    case ActivationKind::kLeakyRelu:
      return true;
    case ActivationKind::kClip:
      return activation.alpha == activation.alpha && activation.beta == activation.beta;
    default:
      return false;
  }
}

/// The epilogue of one tile: `bias` at the tile's first row, `residual` at its first element.
struct TileEpilogue {
  const float* bias = nullptr;
  const float* residual = nullptr;
  const Activation* activation = nullptr;
};

/// One element, as the passes compute it.
inline float finish_element(const TileEpilogue& e, int64_t row, const float* residual, float v) {
  if (e.bias != nullptr) v = v + e.bias[row];
  if (residual != nullptr) v = v + *residual;
  return e.activation->apply(v);
}

// The comparisons below are those of Activation::apply: vmaxps(a, b) is a > b ? a : b, so
// max(0, v) is v < 0 ? 0 : v (NaN and -0 pass through), max(low, v) is v < low ? low : v and
// min(high, v) is v > high ? high : v. (The masked forms, all lanes set, compute the same; the
// plain ones trip GCC 12's uninitialized-value warning on their undefined pass-through operand.)
constexpr __mmask16 kAllLanes = 0xFFFF;

/// Row `row` of a tile's vector `v` (lanes `mask`); `residual`: that vector's residual, or nullptr.
__attribute__((target("avx512f"))) inline __m512 finish_avx512(const TileEpilogue& e, int64_t row,
                                                               const float* residual,
                                                               __mmask16 mask, __m512 v) {
  if (e.bias != nullptr) v = _mm512_add_ps(v, _mm512_set1_ps(e.bias[row]));
  if (residual != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, residual));
  const Activation& a = *e.activation;
  switch (a.kind) {
    case ActivationKind::kRelu:
      return _mm512_mask_max_ps(v, kAllLanes, _mm512_setzero_ps(), v);
    case ActivationKind::kClip: {
      const __m512 raised = _mm512_mask_max_ps(v, kAllLanes, _mm512_set1_ps(a.alpha), v);
      return _mm512_mask_min_ps(v, kAllLanes, _mm512_set1_ps(a.beta), raised);
    }
    case ActivationKind::kLeakyRelu: {
      const __mmask16 negative = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
      return _mm512_mask_mul_ps(v, negative, _mm512_set1_ps(a.alpha), v);
    }
    default:
      return v;
  }
}

/// As finish_avx512 for 8 lanes; `residual` already loaded (0 where there is none).
__attribute__((target("avx2,fma"))) inline __m256 finish_avx2(const TileEpilogue& e, int64_t row,
                                                              bool has_residual, __m256 residual,
                                                              __m256 v) {
  if (e.bias != nullptr) v = _mm256_add_ps(v, _mm256_set1_ps(e.bias[row]));
  if (has_residual) v = _mm256_add_ps(v, residual);
  const Activation& a = *e.activation;
  switch (a.kind) {
    case ActivationKind::kRelu:
      return _mm256_max_ps(_mm256_setzero_ps(), v);
    case ActivationKind::kClip:
      return _mm256_min_ps(_mm256_set1_ps(a.beta), _mm256_max_ps(_mm256_set1_ps(a.alpha), v));
    case ActivationKind::kLeakyRelu: {
      const __m256 negative = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
      return _mm256_blendv_ps(v, _mm256_mul_ps(_mm256_set1_ps(a.alpha), v), negative);
    }
    default:
      return v;
  }
}

}  // namespace onepool::cpu::nn
