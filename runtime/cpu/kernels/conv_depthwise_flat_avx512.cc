#include "runtime/cpu/kernels/conv_depthwise_flat_avx512.h"

#include <immintrin.h>

#include <algorithm>

namespace onepool::cpu::nn {

namespace {

constexpr int kTaps = 9;
constexpr int64_t kLanes = 16;
constexpr int kVectorsAtOnce = 4;  // independent chains side by side
constexpr __mmask16 kAllLanes = 0xFFFF;

// kCount vectors of the flat sweep from y[f] on: each row's kCount + 2 vectors around them loaded
// once, the left and right taps shifted in (valignd).
template <int kCount>
__attribute__((target("avx512f"), always_inline)) inline void flat_sweep_vectors(
    const float* x, int64_t width, int64_t pad_top, const __m512 taps[kTaps], __m512 bias,
    int64_t f, float* y) {
  __m512 sums[kCount];
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) sums[j] = bias;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
    const float* row = x + f + (kh - pad_top) * width;
    __m512i lanes[kCount + 2];
#pragma GCC unroll 6
    for (int i = 0; i < kCount + 2; ++i) {
      lanes[i] = _mm512_castps_si512(_mm512_loadu_ps(row + (i - 1) * kLanes));
    }
#pragma GCC unroll 4
    for (int j = 0; j < kCount; ++j) {
      const __m512 left =
          _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kAllLanes, lanes[j + 1], lanes[j], 15));
      const __m512 right =
          _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(kAllLanes, lanes[j + 2], lanes[j + 1], 1));
      sums[j] = _mm512_fmadd_ps(taps[kh * 3], left, sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 1], _mm512_castsi512_ps(lanes[j + 1]), sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 2], right, sums[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) _mm512_storeu_ps(y + f + j * kLanes, sums[j]);
}

// The lanes `mask` of one vector of the flat sweep from y[f] on, each tap a (masked) load at its
// offset: for the vectors whose neighbours reach past the extent. The same chains.
__attribute__((target("avx512f"), always_inline)) inline void flat_sweep_loads(
    const float* x, int64_t width, int64_t pad_top, const __m512 taps[kTaps], __m512 bias,
    int64_t f, float* y, __mmask16 mask) {
  __m512 sum = bias;
#pragma GCC unroll 9
  for (int t = 0; t < kTaps; ++t) {
    const float* at = x + f + (t / 3 - pad_top) * width + t % 3 - 1;
    sum = _mm512_fmadd_ps(taps[t], _mm512_maskz_loadu_ps(mask, at), sum);
  }
  _mm512_mask_storeu_ps(y + f, mask, sum);
}

}  // namespace

__attribute__((target("avx512f"))) void flat_sweep_3x3_avx512(const float* x, int64_t extent,
                                                              int64_t width, int64_t pad_top,
                                                              const float* w, float bias, float* y,
                                                              int64_t begin, int64_t end) {
  __m512 taps[kTaps];
  for (int t = 0; t < kTaps; ++t) taps[t] = _mm512_set1_ps(w[t]);
  const __m512 bias_lanes = _mm512_set1_ps(bias);
  // Vectors from f on read [f - pad_top * width - 16, f + (2 - pad_top) * width + 16 (count + 1)).
  const int64_t first_vector = std::max(begin, pad_top * width + kLanes);
  const auto fits = [&](int64_t f, int64_t count) {
    return f + count * kLanes <= end && f + (2 - pad_top) * width + (count + 1) * kLanes <= extent;
  };
  int64_t f = begin;
  for (; f < first_vector && f + kLanes <= end; f += kLanes) {
    flat_sweep_loads(x, width, pad_top, taps, bias_lanes, f, y, kAllLanes);
  }
  for (; fits(f, kVectorsAtOnce); f += kVectorsAtOnce * kLanes) {
    flat_sweep_vectors<kVectorsAtOnce>(x, width, pad_top, taps, bias_lanes, f, y);
  }
  for (; fits(f, 1); f += kLanes) flat_sweep_vectors<1>(x, width, pad_top, taps, bias_lanes, f, y);
  for (; f + kLanes <= end; f += kLanes) {
    flat_sweep_loads(x, width, pad_top, taps, bias_lanes, f, y, kAllLanes);
  }
  if (f < end) {
    const auto mask = static_cast<__mmask16>((1u << (end - f)) - 1u);
    flat_sweep_loads(x, width, pad_top, taps, bias_lanes, f, y, mask);
  }
}

}  // namespace onepool::cpu::nn
