// Helpers that the AVX-512 Winograd transforms of both tile sizes share
// (conv_winograd_avx512.cc, conv_winograd_f4_avx512.cc). Include only from files that compile
// AVX-512 code: each function carries the avx512f target attribute.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/cpu/kernels/avx512_lanes.h"
#include "runtime/cpu/kernels/conv_winograd_transforms.h"

namespace onepool::cpu::nn::winograd_avx512 {

/// All 16 lanes within the magnitude limit (a NaN compares false).
__attribute__((target("avx512f"))) inline bool lanes_within_limit(__m512 values) {
  const __m512 magnitude = _mm512_abs_ps(values);
  return _mm512_cmp_ps_mask(magnitude, _mm512_set1_ps(kWinogradMagnitudeLimit), _CMP_LE_OQ) ==
         static_cast<__mmask16>(0xFFFF);
}

/// The 16 columns from ix + offset on of `row`, those outside the window's [first, last) as 0.
/// A masked-off lane touches no memory, so the window may start before the row or end past it.
__attribute__((target("avx512f"))) inline __m512 window_columns(const float* row, int64_t ix,
                                                                int64_t offset, int64_t first,
                                                                int64_t last) {
  const auto outside_before = static_cast<__mmask16>(first_lanes(first - offset));
  const auto mask = static_cast<__mmask16>(first_lanes(last - offset) & ~outside_before);
  const auto* at = reinterpret_cast<const float*>(
      reinterpret_cast<std::uintptr_t>(row) +
      static_cast<std::uintptr_t>((ix + offset) * static_cast<int64_t>(sizeof(float))));
  return _mm512_maskz_loadu_ps(mask, at);
}

/// The `floats` columns from ix on of input row iy of the next channel's plane, which the block
/// reads a few runs later: the block walks channel by channel, each a short stretch of a
/// far-apart plane, too short for the hardware prefetcher to follow.
inline void prefetch_next_channel_row(const WindowGeometry& g, const float* plane, int64_t iy,
                                      int64_t ix, int64_t floats) {
  if (iy < 0 || iy >= g.input[1]) return;
  const int64_t first = std::max<int64_t>(ix, 0);
  const int64_t last = std::min<int64_t>(ix + floats, g.input[2]);
  if (first >= last) return;
  const char* next = reinterpret_cast<const char*>(plane + g.input_size() + iy * g.input[2]);
  for (int64_t column = first; column < last; column += 16) {
    _mm_prefetch(next + column * 4, _MM_HINT_T0);
  }
  _mm_prefetch(next + (last - 1) * 4, _MM_HINT_T0);
}

}  // namespace onepool::cpu::nn::winograd_avx512
