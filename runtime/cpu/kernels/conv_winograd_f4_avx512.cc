// The Winograd F(4x4, 3x3) transforms on AVX-512 (see conv_winograd_f4.cc for the matrices): one
// lane per tile, the same adds in the same order as the portable transforms (each row's columns
// first, then the rows).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/cpu/kernels/avx512_lanes.h"
#include "runtime/cpu/kernels/conv_winograd_avx512.h"
#include "runtime/cpu/kernels/conv_winograd_transforms.h"

namespace onepool::cpu::nn {
namespace {

using winograd_avx512::lanes_within_limit;
using winograd_avx512::prefetch_next_channel_row;
using winograd_avx512::window_columns;

#define ONEPOOL_AVX512 __attribute__((target("avx512f")))

// d[j] lane l = input column ix + 4 l + j of `row` (j = 0..5), for the kWinograd4RowFloats
// columns from ix on; columns outside [0, width) read as 0. Columns 4 l + j (j < 4) come from the
// four vectors of columns 0..63 by two permutes (lanes 0-7 from the first two vectors, 8-15 from
// the last two); columns 4 l + 4 and 4 l + 5 are d[0] and d[1] one lane on, with columns 64 and
// 65 in the last lane. False when a column is NaN, Inf or above the limit.
ONEPOOL_AVX512 bool load_tile_columns(const float* row, int64_t ix, int64_t width, __m512 d[6]) {
  const int64_t first = std::clamp<int64_t>(-ix, 0, kWinograd4RowFloats);
  const int64_t last = std::clamp<int64_t>(width - ix, first, kWinograd4RowFloats);
  const bool whole = first == 0 && last == kWinograd4RowFloats;  // most runs of a large map
  __m512 columns[4];
  for (int k = 0; k < 4; ++k) {
    columns[k] =
        whole ? _mm512_loadu_ps(row + ix + 16 * k) : window_columns(row, ix, 16 * k, first, last);
  }
  const __m512 tail = window_columns(row, ix, 64, first, last);  // columns 64 and 65
  const __m512i every_fourth =
      _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  for (int j = 0; j < 4; ++j) {
    const __m512i index = _mm512_add_epi32(every_fourth, _mm512_set1_epi32(j));
    const __m512 low = _mm512_permutex2var_ps(columns[0], index, columns[1]);
    const __m512 high = _mm512_permutex2var_ps(columns[2], index, columns[3]);
    d[j] = _mm512_mask_blend_ps(static_cast<__mmask16>(0xFF00), low, high);
  }
  const __m512i next_then_64 =
      _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  const __m512i next_then_65 =
      _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17);
  d[4] = _mm512_permutex2var_ps(d[0], next_then_64, tail);
  d[5] = _mm512_permutex2var_ps(d[1], next_then_65, tail);
  return lanes_within_limit(columns[0]) && lanes_within_limit(columns[1]) &&
         lanes_within_limit(columns[2]) && lanes_within_limit(columns[3]) &&
         lanes_within_limit(tail);
}

// out[k] = (B^T in)[k], as input_1d in conv_winograd_f4.cc.
ONEPOOL_AVX512 void input_1d(const __m512 in[6], __m512 out[6]) {
  const __m512 two = _mm512_set1_ps(2.0f);
  const __m512 four = _mm512_set1_ps(4.0f);
  const __m512 d42 = _mm512_sub_ps(in[4], in[2]);
  const __m512 d31 = _mm512_sub_ps(in[3], in[1]);
  out[0] = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(in[0], in[2]), four), d42);
  out[1] =
      _mm512_sub_ps(_mm512_add_ps(in[3], in[4]), _mm512_mul_ps(_mm512_add_ps(in[1], in[2]), four));
  out[2] =
      _mm512_add_ps(_mm512_sub_ps(in[4], in[3]), _mm512_mul_ps(_mm512_sub_ps(in[1], in[2]), four));
  out[3] = _mm512_add_ps(d42, _mm512_mul_ps(d31, two));
  out[4] = _mm512_sub_ps(d42, _mm512_mul_ps(d31, two));
  out[5] =
      _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(in[1], in[3]), four), _mm512_sub_ps(in[5], in[3]));
}

// out[k] = (A^T in)[k], as output_1d in conv_winograd_f4.cc.
ONEPOOL_AVX512 void output_1d(const __m512 in[6], __m512 out[4]) {
  const __m512 s12 = _mm512_add_ps(in[1], in[2]);
  const __m512 d12 = _mm512_sub_ps(in[1], in[2]);
  const __m512 s34 = _mm512_add_ps(in[3], in[4]);
  const __m512 d34 = _mm512_sub_ps(in[3], in[4]);
  out[0] = _mm512_add_ps(_mm512_add_ps(in[0], s12), s34);
  out[1] = _mm512_add_ps(d12, _mm512_mul_ps(d34, _mm512_set1_ps(2.0f)));
  out[2] = _mm512_add_ps(s12, _mm512_mul_ps(s34, _mm512_set1_ps(4.0f)));
  out[3] = _mm512_add_ps(_mm512_add_ps(d12, _mm512_mul_ps(d34, _mm512_set1_ps(8.0f))), in[5]);
}

ONEPOOL_AVX512 bool transform_input_run(const WinogradImage& image, const TileRun& run,
                                        int64_t channel, float* v) {
  const WindowGeometry& g = image.g;
  const float* plane = image.x + channel * g.input_size();
  __m512 w[6][6];  // w[r] = (row r of d) B
  bool ok = true;
  for (int r = 0; r < 6; ++r) {
    const int64_t iy = 4 * run.ty - g.pad_begin[1] + r;
    const bool inside = iy >= 0 && iy < g.input[1];  // a row of padding reads as all zeros
    const float* row = plane + (inside ? iy : 0) * g.input[2];
    const int64_t ix = 4 * run.tx - g.pad_begin[2];
    __m512 d[6];
    ok = load_tile_columns(row, ix, inside ? g.input[2] : 0, d) && ok;
    if (channel + 1 < image.plan.in_channels)
      prefetch_next_channel_row(g, plane, iy, ix, kWinograd4RowFloats);
    input_1d(d, w[r]);
  }
  const int64_t stride = image.plan.v_stride;  // between positions
  float* out = v + channel * image.plan.block_tiles + run.slot;
  const __mmask16 lanes = first_lanes(run.count);
  for (int k = 0; k < 6; ++k) {  // B^T w, column k of the tile
    const __m512 column[6] = {w[0][k], w[1][k], w[2][k], w[3][k], w[4][k], w[5][k]};
    __m512 transformed[6];
    input_1d(column, transformed);
    for (int i = 0; i < 6; ++i) {
      _mm512_mask_storeu_ps(out + (6 * i + k) * stride, lanes, transformed[i]);
    }
  }
  return ok;
}

// One output row of 16 tiles: out[k] lane l is column 4 l + k. Interleaved into 64 consecutive
// columns, the residual (or nullptr) added, then Relu in registers (a NaN stays NaN) or another
// activation through apply_activation; the first `columns` stored.
ONEPOOL_AVX512 void store_output_row(const Activation& activation, const float* residual,
                                     const __m512 out[4], int64_t columns, float* dst) {
  // Pairs first: (out[0], out[1]) and (out[2], out[3]) interleaved lane by lane...
  const __m512i pair_low =
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i pair_high =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 p0 = _mm512_permutex2var_ps(out[0], pair_low, out[1]);   // tiles 0-7
  const __m512 p1 = _mm512_permutex2var_ps(out[0], pair_high, out[1]);  // tiles 8-15
  const __m512 q0 = _mm512_permutex2var_ps(out[2], pair_low, out[3]);
  const __m512 q1 = _mm512_permutex2var_ps(out[2], pair_high, out[3]);
  // ...then the pairs of the two, two floats at a time: four columns a tile.
  const __m512i quad_low =
      _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i quad_high =
      _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  __m512 row[4] = {
      _mm512_permutex2var_ps(p0, quad_low, q0), _mm512_permutex2var_ps(p0, quad_high, q0),
      _mm512_permutex2var_ps(p1, quad_low, q1), _mm512_permutex2var_ps(p1, quad_high, q1)};
  const int64_t vectors = std::min<int64_t>(4, (columns + 15) / 16);
  for (int64_t k = 0; k < vectors; ++k) {
    const __mmask16 mask = first_lanes(columns - 16 * k);
    if (residual != nullptr) {
      row[k] = _mm512_add_ps(row[k], _mm512_maskz_loadu_ps(mask, residual + 16 * k));
    }
    if (activation.kind == ActivationKind::kRelu) {
      const __m512 zero = _mm512_setzero_ps();
      row[k] = _mm512_mask_mov_ps(row[k], _mm512_cmp_ps_mask(row[k], zero, _CMP_LT_OQ), zero);
    }
  }
  if (activation.kind != ActivationKind::kNone && activation.kind != ActivationKind::kRelu) {
    alignas(64) float values[64];
    for (int64_t k = 0; k < 4; ++k) _mm512_store_ps(values + 16 * k, row[k]);
    apply_activation(activation, values, columns);
    for (int64_t k = 0; k < 4; ++k) row[k] = _mm512_load_ps(values + 16 * k);
  }
  for (int64_t k = 0; k < vectors; ++k) {
    _mm512_mask_storeu_ps(dst + 16 * k, first_lanes(columns - 16 * k), row[k]);
  }
}

ONEPOOL_AVX512 void transform_output_run(const WinogradImage& image, const TileRun& run,
                                         int64_t channel, const float* m) {
  const WindowGeometry& g = image.g;
  const int64_t stride = image.plan.m_stride;  // between positions
  const float* in = m + channel * image.plan.block_tiles + run.slot;
  __m512 t[6][4];  // t[r] = (row r of m) A
  for (int r = 0; r < 6; ++r) {
    __m512 row[6];
    for (int j = 0; j < 6; ++j) row[j] = _mm512_loadu_ps(in + (6 * r + j) * stride);
    output_1d(row, t[r]);
  }
  __m512 o[4][4];  // o[k][i]: output row i, column k of every tile
  for (int k = 0; k < 4; ++k) {
    const __m512 column[6] = {t[0][k], t[1][k], t[2][k], t[3][k], t[4][k], t[5][k]};
    output_1d(column, o[k]);
  }
  const __m512 bias = _mm512_set1_ps(image.bias != nullptr ? image.bias[channel] : 0.0f);
  const int64_t out_w = g.output[2];
  const int64_t x0 = 4 * run.tx;
  const int64_t columns = std::min(4 * run.count, out_w - x0);
  for (int i = 0; i < 4; ++i) {
    const int64_t oy = 4 * run.ty + i;
    if (oy >= g.output[1]) break;
    const __m512 row[4] = {_mm512_add_ps(o[0][i], bias), _mm512_add_ps(o[1][i], bias),
                           _mm512_add_ps(o[2][i], bias), _mm512_add_ps(o[3][i], bias)};
    const int64_t at = channel * g.output_size() + oy * out_w + x0;
    store_output_row(image.activation, image.residual != nullptr ? image.residual + at : nullptr,
                     row, columns, image.y + at);
  }
}

}  // namespace

bool transform4_input_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                             int64_t end) {
  return for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    return transform_input_run(image, run, channel, block.v);
  });
}

void transform4_output_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                              int64_t end) {
  for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    transform_output_run(image, run, channel, block.m);
    return true;
  });
}

}  // namespace onepool::cpu::nn
