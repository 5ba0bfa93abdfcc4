// The fused activation of the AVX-512 depthwise kernels (conv_depthwise_masked.h,
// conv_depthwise_stride_two_avx512.h), applied to each vector before its store where it is a
// clamp.
#pragma once

#include <immintrin.h>

#include <limits>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/sgemm_epilogue.h"

namespace onepool::cpu::nn {

// The fused activation applied to each vector before its store, where it is a clamp (Relu: 0 and
// +inf; Clip with numeric bounds): the comparisons of Activation::apply (sgemm_epilogue.h's), so
// the bits of the separate pass, which read and wrote every output plane once more (MobileNetV2's
// masked nodes ran 0.87-0.92x without it, the whole model 0.98x at one thread, 0.97x at two).
struct OutputClamp {
  bool on = false;
  __m512 low, high;
};

inline bool clamp_fits(const Activation& activation) {
  return activation.kind == ActivationKind::kNone || activation.kind == ActivationKind::kRelu ||
         (activation.kind == ActivationKind::kClip && gemm_epilogue_supports(activation));
}

// The clamp's bounds, made once per node (vectors only inside the AVX-512 functions).
struct ClampBounds {
  bool on = false;
  float low = 0.0f;
  float high = 0.0f;
};

inline ClampBounds clamp_bounds(const Activation& activation) {
  const bool relu = activation.kind == ActivationKind::kRelu;
  return ClampBounds{relu || activation.kind == ActivationKind::kClip,
                     relu ? 0.0f : activation.alpha,
                     relu ? std::numeric_limits<float>::infinity() : activation.beta};
}

__attribute__((target("avx512f"), always_inline)) inline OutputClamp output_clamp(
    const ClampBounds& bounds) {
  return OutputClamp{bounds.on, _mm512_set1_ps(bounds.low), _mm512_set1_ps(bounds.high)};
}

__attribute__((target("avx512f"), always_inline)) inline __m512 clamped(const OutputClamp& clamp,
                                                                        __m512 v) {
  if (!clamp.on) return v;
  const __m512 raised = _mm512_mask_max_ps(v, kAllLanes, clamp.low, v);
  return _mm512_mask_min_ps(v, kAllLanes, clamp.high, raised);
}

}  // namespace onepool::cpu::nn
