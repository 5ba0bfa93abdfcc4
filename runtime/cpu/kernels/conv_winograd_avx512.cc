// The Winograd F(2x2, 3x3) transforms on AVX-512 (see conv_winograd_transforms.h): one lane per
// tile, the same adds in the same order as the portable transforms.
#include "runtime/cpu/kernels/conv_winograd_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/cpu/kernels/avx512_lanes.h"
#include "runtime/cpu/kernels/conv_winograd_transforms.h"

namespace onepool::cpu::nn {
namespace {

using winograd_avx512::lanes_within_limit;
using winograd_avx512::prefetch_next_channel_row;
using winograd_avx512::window_columns;

#define ONEPOOL_AVX512 __attribute__((target("avx512f")))

// d[j] lane l = input column ix + 2 l + j of `row` (j = 0..3), for the kWinogradRowFloats
// columns from ix on; columns outside [0, width) read as 0. Masked loads: a masked-off lane
// touches no memory, so the window may start before the row or end past it (the tiles at a
// plane's edges, which used to be copied into a zero-filled buffer first: every run of a 14x14,
// 28x28 or 56x56 map reaches an edge). Returns false when one of the columns is NaN, Inf or above
// the limit.
ONEPOOL_AVX512 bool load_tile_columns(const float* row, int64_t ix, int64_t width, __m512 d[4]) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const int64_t first = std::clamp<int64_t>(-ix, 0, kWinogradRowFloats);
  const int64_t last = std::clamp<int64_t>(width - ix, first, kWinogradRowFloats);
  const bool whole = first == 0 && last == kWinogradRowFloats;  // most runs of a large map
  const __m512 a = whole ? _mm512_loadu_ps(row + ix) : window_columns(row, ix, 0, first, last);
  const __m512 b =
      whole ? _mm512_loadu_ps(row + ix + 16) : window_columns(row, ix, 16, first, last);
  const __m512 a2 = whole ? _mm512_loadu_ps(row + ix + 2) : window_columns(row, ix, 2, first, last);
  const __m512 b2 =
      whole ? _mm512_loadu_ps(row + ix + 18) : window_columns(row, ix, 18, first, last);
  d[0] = _mm512_permutex2var_ps(a, even, b);
  d[1] = _mm512_permutex2var_ps(a, odd, b);
  d[2] = _mm512_permutex2var_ps(a2, even, b2);
  d[3] = _mm512_permutex2var_ps(a2, odd, b2);
  return lanes_within_limit(a) && lanes_within_limit(b) && lanes_within_limit(b2);
}

ONEPOOL_AVX512 bool transform_input_run(const WinogradImage& image, const TileRun& run,
                                        int64_t channel, float* v) {
  const WindowGeometry& g = image.g;
  const float* plane = image.x + channel * g.input_size();
  __m512 d[4][4];
  bool ok = true;
  for (int r = 0; r < 4; ++r) {
    const int64_t iy = 2 * run.ty - g.pad_begin[1] + r;
    const bool inside = iy >= 0 && iy < g.input[1];  // a row of padding reads as all zeros
    const float* row = plane + (inside ? iy : 0) * g.input[2];
    ok = load_tile_columns(row, 2 * run.tx - g.pad_begin[2], inside ? g.input[2] : 0, d[r]) && ok;
    if (channel + 1 < image.plan.in_channels) {
      prefetch_next_channel_row(g, plane, iy, 2 * run.tx - g.pad_begin[2], kWinogradRowFloats);
    }
  }
  __m512 t[4][4];  // B^T d
  for (int j = 0; j < 4; ++j) {
    t[0][j] = _mm512_sub_ps(d[0][j], d[2][j]);
    t[1][j] = _mm512_add_ps(d[1][j], d[2][j]);
    t[2][j] = _mm512_sub_ps(d[2][j], d[1][j]);
    t[3][j] = _mm512_sub_ps(d[1][j], d[3][j]);
  }
  const int64_t stride = image.plan.v_stride;  // between positions
  float* out = v + channel * image.plan.block_tiles + run.slot;
  const __mmask16 lanes = first_lanes(run.count);
  for (int i = 0; i < 4; ++i) {  // (B^T d) B
    const __m512 row[4] = {_mm512_sub_ps(t[i][0], t[i][2]), _mm512_add_ps(t[i][1], t[i][2]),
                           _mm512_sub_ps(t[i][2], t[i][1]), _mm512_sub_ps(t[i][1], t[i][3])};
    for (int j = 0; j < 4; ++j) _mm512_mask_storeu_ps(out + (4 * i + j) * stride, lanes, row[j]);
  }
  return ok;
}

// The residual (or nullptr) added, then Relu in registers (a NaN stays NaN); other activations
// through apply_activation.
ONEPOOL_AVX512 void store_output_row(const Activation& activation, const float* residual, __m512 lo,
                                     __m512 hi, int64_t columns, float* dst) {
  if (residual != nullptr) {
    lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(first_lanes(columns), residual));
    hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(first_lanes(columns - kWinogradLanes),
                                                 residual + kWinogradLanes));
  }
  if (activation.kind == ActivationKind::kRelu) {
    const __m512 zero = _mm512_setzero_ps();
    lo = _mm512_mask_mov_ps(lo, _mm512_cmp_ps_mask(lo, zero, _CMP_LT_OQ), zero);
    hi = _mm512_mask_mov_ps(hi, _mm512_cmp_ps_mask(hi, zero, _CMP_LT_OQ), zero);
  } else if (activation.kind != ActivationKind::kNone) {
    alignas(64) float row[2 * kWinogradLanes];
    _mm512_store_ps(row, lo);
    _mm512_store_ps(row + kWinogradLanes, hi);
    apply_activation(activation, row, columns);
    lo = _mm512_load_ps(row);
    hi = _mm512_load_ps(row + kWinogradLanes);
  }
  _mm512_mask_storeu_ps(dst, first_lanes(columns), lo);
  _mm512_mask_storeu_ps(dst + kWinogradLanes, first_lanes(columns - kWinogradLanes), hi);
}

ONEPOOL_AVX512 void transform_output_run(const WinogradImage& image, const TileRun& run,
                                         int64_t channel, const float* m) {
  const WindowGeometry& g = image.g;
  const int64_t stride = image.plan.m_stride;  // between positions
  const float* in = m + channel * image.plan.block_tiles + run.slot;
  __m512 t[2][4];  // A^T m
  for (int j = 0; j < 4; ++j) {
    const __m512 m0 = _mm512_loadu_ps(in + j * stride);
    const __m512 m1 = _mm512_loadu_ps(in + (4 + j) * stride);
    const __m512 m2 = _mm512_loadu_ps(in + (8 + j) * stride);
    const __m512 m3 = _mm512_loadu_ps(in + (12 + j) * stride);
    t[0][j] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
    t[1][j] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
  }
  const __m512 bias = _mm512_set1_ps(image.bias != nullptr ? image.bias[channel] : 0.0f);
  // Lanes of column 0 and column 1 interleaved into 32 consecutive output columns.
  const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const int64_t out_w = g.output[2];
  const int64_t x0 = 2 * run.tx;
  const int64_t columns = std::min(2 * run.count, out_w - x0);
  for (int i = 0; i < 2; ++i) {
    const int64_t oy = 2 * run.ty + i;
    if (oy >= g.output[1]) break;
    const __m512 col0 =
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t[i][0], t[i][1]), t[i][2]), bias);
    const __m512 col1 =
        _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(t[i][1], t[i][2]), t[i][3]), bias);
    const int64_t at = channel * g.output_size() + oy * out_w + x0;
    store_output_row(image.activation, image.residual != nullptr ? image.residual + at : nullptr,
                     _mm512_permutex2var_ps(col0, low, col1),
                     _mm512_permutex2var_ps(col0, high, col1), columns, image.y + at);
  }
}

}  // namespace

bool transform_input_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                            int64_t end) {
  return for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    return transform_input_run(image, run, channel, block.v);
  });
}

void transform_output_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                             int64_t end) {
  for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    transform_output_run(image, run, channel, block.m);
    return true;
  });
}

}  // namespace onepool::cpu::nn
