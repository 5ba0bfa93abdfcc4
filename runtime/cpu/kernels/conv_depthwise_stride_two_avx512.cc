#include "runtime/cpu/kernels/conv_depthwise_stride_two_avx512.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/cpu/kernels/stride_two_rows.h"

namespace onepool::cpu::nn {
namespace {

constexpr int kTaps = 9;
constexpr int64_t kWidestOutputRow = 2048;
constexpr int64_t kMostVectors = kWidestOutputRow / kStrideTwoOutputs;

// One output row's vectors: where its input rows start (column b of each vector is
// first_column + 32 i) and which of them exist.
struct RowSpan {
  const float* first_row;  // input row 2 oh - pad_top, column -pad_left (may lie outside)
  int first_kh, end_kh;    // the kernel rows inside the input
};

// The lanes of a vector whose left, middle and right taps lie inside the row.
struct TapLanes {
  __mmask16 left, middle, right;
};

// sum + w * x in the lanes whose tap lies inside the row; with kMasked false, every lane; with
// kZeros, every lane with the taps outside the row zeroed.
template <bool kMasked, bool kZeros>
__attribute__((target("avx512f"), always_inline)) inline __m512 add_taps(__m512 sum,
                                                                         const StrideTwoTaps& in,
                                                                         const __m512* w,
                                                                         const TapLanes& lanes) {
  if constexpr (kMasked && kZeros) {
    sum = _mm512_fmadd_ps(w[0], _mm512_maskz_mov_ps(lanes.left, in.left), sum);
    sum = _mm512_fmadd_ps(w[1], _mm512_maskz_mov_ps(lanes.middle, in.middle), sum);
    return _mm512_fmadd_ps(w[2], _mm512_maskz_mov_ps(lanes.right, in.right), sum);
  } else if constexpr (kMasked) {
    sum = _mm512_mask3_fmadd_ps(w[0], in.left, sum, lanes.left);
    sum = _mm512_mask3_fmadd_ps(w[1], in.middle, sum, lanes.middle);
    return _mm512_mask3_fmadd_ps(w[2], in.right, sum, lanes.right);
  }
  sum = _mm512_fmadd_ps(w[0], in.left, sum);
  sum = _mm512_fmadd_ps(w[1], in.middle, sum);
  return _mm512_fmadd_ps(w[2], in.right, sum);
}

// Adds one input row's three taps to `sum`, loaded through the spans' masks (zeros outside the
// row). kZeros: every lane, the padding's zeros included; else with kMasked only the lanes whose
// tap lies inside the row (the spans' tap masks), the others keep their sum.
template <bool kMasked, bool kZeros>
__attribute__((target("avx512f"), always_inline)) inline __m512 add_row(__m512 sum,
                                                                        const float* row,
                                                                        const uint16_t* spans,
                                                                        const __m512* taps) {
  const uint16_t* inside = spans + kStrideTwoTapSpans;
  return add_taps < kMasked && !kZeros,
         false > (sum, stride_two_taps(row, spans, _mm512_setzero_ps()), taps,
                  TapLanes{inside[0], inside[1], inside[2]});
}

// Vector i of one output row whose kernel rows [first_kh, end_kh) lie inside the input; with
// kZeros the others add their taps times zero.
template <bool kMasked, bool kZeros>
__attribute__((target("avx512f"), always_inline)) inline __m512 one_row(const RowSpan& at,
                                                                        int64_t width, int64_t i,
                                                                        const uint16_t* spans,
                                                                        const __m512* taps,
                                                                        __m512 bias) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 sum = bias;
  const float* row = at.first_row + 2 * kStrideTwoOutputs * i;
  for (int kh = 0; kh < 3; ++kh) {
    if (kh >= at.first_kh && kh < at.end_kh) {
      sum = add_row<kMasked, kZeros>(sum, row + kh * width, spans, taps + 3 * kh);
    } else if (kZeros) {
      for (int kw = 0; kw < 3; ++kw) sum = _mm512_fmadd_ps(taps[3 * kh + kw], zero, sum);
    }
  }
  return sum;
}

// The three taps of an input row from column b on, for 16 outputs: four plain loads (all 34
// columns lie in the plane's memory, not all in the row) split by permutes.
__attribute__((target("avx512f"), always_inline)) inline StrideTwoTaps plain_taps(
    const float* row) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512 low = _mm512_loadu_ps(row), high = _mm512_loadu_ps(row + 16);
  const __m512 low_shifted = _mm512_loadu_ps(row + 2), high_shifted = _mm512_loadu_ps(row + 18);
  return StrideTwoTaps{_mm512_permutex2var_ps(low, even, high),
                       _mm512_permutex2var_ps(low, odd, high),
                       _mm512_permutex2var_ps(low_shifted, even, high_shifted)};
}

// Input row r of a batch of kRows output rows (output j reads input rows 2 j .. 2 j + 2) added
// to the outputs that read it, as their kernel row r - 2 j: each output's rows in kh order.
template <int kRows, bool kMasked, bool kZeros>
__attribute__((target("avx512f"), always_inline)) inline void add_to_outputs(
    int r, const StrideTwoTaps& in, const __m512* taps, const TapLanes& lanes, __m512 sums[kRows]) {
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) {
    const int kh = r - 2 * j;
    if (kh >= 0 && kh <= 2) sums[j] = add_taps<kMasked, kZeros>(sums[j], in, taps + 3 * kh, lanes);
  }
}

// Stores kRows output rows' vectors (`y`: the first, rows out_w apart) after the clamp.
template <int kRows>
__attribute__((target("avx512f"), always_inline)) inline void store_rows(const __m512 sums[kRows],
                                                                         const OutputClamp& clamp,
                                                                         uint16_t store_span,
                                                                         float* y, int64_t out_w) {
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) {
    store_stride_two(y + j * out_w, store_span, clamped(clamp, sums[j]));
  }
}

// One vector of kRows consecutive output rows whose 2 kRows + 1 input rows all exist and whose
// loads lie in the plane's memory (`row`: the first input row at the vector's column b): each
// input row loaded once and added to the outputs that read it, in kh order for each; then the
// clamp and the stores (`y`: the first row's vector, rows out_w apart).
template <int kRows, bool kMasked, bool kZeros>
__attribute__((target("avx512f"), always_inline)) inline void inner_rows(
    const float* row, int64_t width, const __m512* taps, __m512 bias, const TapLanes& lanes,
    const OutputClamp& clamp, uint16_t store_span, float* y, int64_t out_w) {
  __m512 sums[kRows];
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) sums[j] = bias;
#pragma GCC unroll 9
  for (int r = 0; r <= 2 * kRows; ++r) {
    add_to_outputs<kRows, kMasked, kZeros>(r, plain_taps(row + r * width), taps, lanes, sums);
  }
  store_rows<kRows>(sums, clamp, store_span, y, out_w);
}

// A vector's taps need masks unless all three lie inside the row in every lane.
bool vector_masked(const uint16_t* spans) {
  const uint16_t* inside = spans + kStrideTwoTapSpans;
  return (inside[0] & inside[1] & inside[2]) != kAllStrideTwoLanes;
}

// Output rows [first, end) whose three input rows exist and whose loads for the vector at column
// b (34 columns from b on in each) lie in readable memory: the plane, and `before` / `after`
// floats around it (the neighbouring channels' planes). The first vector of a row padded on the
// left reads one column before its row, the last one past it: inside the plane except at its
// first and last rows, where only a neighbouring plane makes them plain.
struct InnerRows {
  int64_t first, end;
};

// The output rows [first, end) of [0, out_h) where inside(oh) holds, an interval (its bounds are
// monotone in oh), found from both ends.
template <class Inside>
InnerRows rows_where(int64_t out_h, const Inside& inside) {
  InnerRows rows{0, out_h};
  while (rows.first < rows.end && !inside(rows.first)) ++rows.first;
  while (rows.end > rows.first && !inside(rows.end - 1)) --rows.end;
  return rows;
}

InnerRows inner_rows_of(const WindowGeometry& g, int64_t b, int64_t before, int64_t after) {
  const int64_t height = g.input[1], width = g.input[2];
  const auto inside = [&](int64_t oh) {
    const int64_t top = 2 * oh - g.pad_begin[1];
    return top >= 0 && top + 2 < height && top * width + b >= -before &&
           (top + 2) * width + b + kStrideTwoReach <= height * width + after;
  };
  return rows_where(g.output[1], inside);
}

// A channel's neighbours: a plane before it (bit 0), a plane after it (bit 1).
constexpr int kNeighbourKinds = 4;
int neighbours(int64_t m, int64_t count) { return (m > 0 ? 1 : 0) | (m + 1 < count ? 2 : 0); }

// What each vector column of the output rows needs, made once for all the channels: its masks,
// whether its taps need them, its inner rows.
struct Column {
  const uint16_t* spans;
  InnerRows inner[kNeighbourKinds];  // by neighbours()
  bool masked;
};

constexpr int kRowsAtOnce = 4;

// Vector column i of output rows [rows.first, rows.end): the inner rows kRowsAtOnce at a time
// (then two, then one), the others through masked loads.
template <bool kMasked, bool kZeros>
__attribute__((target("avx512f"))) void sweep_column(const WindowGeometry& g, const float* x,
                                                     const __m512* taps, __m512 bias,
                                                     const OutputClamp& clamp,
                                                     const uint16_t* spans, InnerRows inner,
                                                     InnerRows rows, int64_t i, float* y) {
  const int64_t width = g.input[2], out_w = g.output[2];
  const uint16_t* inside = spans + kStrideTwoTapSpans;
  const TapLanes lanes{inside[0], inside[1], inside[2]};
  const uint16_t store_span = spans[kStrideTwoStoreSpan];
  const int64_t b = 2 * kStrideTwoOutputs * i - g.pad_begin[2];
  float* column = y + kStrideTwoOutputs * i;
  const auto edge_row = [&](int64_t oh) __attribute__((target("avx512f"), always_inline)) {
    const int64_t top = 2 * oh - g.pad_begin[1];
    const RowSpan at{x + top * width - g.pad_begin[2],
                     static_cast<int>(std::clamp<int64_t>(-top, 0, 3)),
                     static_cast<int>(std::clamp<int64_t>(g.input[1] - top, 0, 3))};
    store_stride_two(column + oh * out_w, store_span,
                     clamped(clamp, one_row<true, kZeros>(at, width, i, spans, taps, bias)));
  };
  inner.first = std::clamp(inner.first, rows.first, rows.end);
  inner.end = std::clamp(inner.end, inner.first, rows.end);
  for (int64_t oh = rows.first; oh < inner.first; ++oh) edge_row(oh);
  const auto row_at = [&](int64_t oh) { return x + (2 * oh - g.pad_begin[1]) * width + b; };
  int64_t oh = inner.first;
  for (; oh + kRowsAtOnce <= inner.end; oh += kRowsAtOnce) {
    inner_rows<kRowsAtOnce, kMasked, kZeros>(row_at(oh), width, taps, bias, lanes, clamp,
                                             store_span, column + oh * out_w, out_w);
  }
  if (oh + 2 <= inner.end) {
    inner_rows<2, kMasked, kZeros>(row_at(oh), width, taps, bias, lanes, clamp, store_span,
                                   column + oh * out_w, out_w);
    oh += 2;
  }
  for (; oh < inner.end; ++oh) {
    inner_rows<1, kMasked, kZeros>(row_at(oh), width, taps, bias, lanes, clamp, store_span,
                                   column + oh * out_w, out_w);
  }
  for (; oh < rows.end; ++oh) edge_row(oh);
}

// kRows output rows of a map padded by one column on the left (output l reads columns 2 l - 1,
// 2 l and 2 l + 1), every vector of them left to right: each input row's vector loaded from column
// 32 i on (two loads, aligned where the rows are), split into its even columns (the middle taps)
// and odd ones (the right taps), the left taps the odd ones shifted up a lane with the previous
// vector's last. Half the loads of the column sweep's four, none of them before the row: loads
// across two cache lines held the column sweep at about 23 cycles a vector on a Zen 5 core.
// `top_row`: input row 2 oh - pad_top, column 0; all 2 kRows + 1 input rows exist, and the last
// one's loads lie in readable memory.
template <int kRows, bool kZeros>
__attribute__((target("avx512f"), always_inline)) inline void row_major_rows(
    const float* top_row, int64_t width, int64_t per_row, const Column* columns, const __m512* taps,
    __m512 bias, const OutputClamp& clamp, float* y, int64_t out_w) {
  constexpr int kInputRows = 2 * kRows + 1;
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  __m512i previous[kInputRows];
#pragma GCC unroll 9
  for (int r = 0; r < kInputRows; ++r) previous[r] = _mm512_setzero_si512();
  for (int64_t i = 0; i < per_row; ++i) {
    const uint16_t* spans = columns[i].spans;
    const uint16_t* inside = spans + kStrideTwoTapSpans;
    const TapLanes lanes{inside[0], inside[1], inside[2]};
    __m512 sums[kRows];
#pragma GCC unroll 4
    for (int j = 0; j < kRows; ++j) sums[j] = bias;
#pragma GCC unroll 9
    for (int r = 0; r < kInputRows; ++r) {
      const float* at = top_row + r * width + 2 * kStrideTwoOutputs * i;
      const __m512 low = _mm512_loadu_ps(at), high = _mm512_loadu_ps(at + kStrideTwoOutputs);
      const __m512 right = _mm512_permutex2var_ps(low, odd, high);
      const __m512i odd_bits = _mm512_castps_si512(right);
      const __m512 left = _mm512_castsi512_ps(
          _mm512_maskz_alignr_epi32(kAllStrideTwoLanes, odd_bits, previous[r], 15));
      previous[r] = odd_bits;
      const StrideTwoTaps in{left, _mm512_permutex2var_ps(low, even, high), right};
      add_to_outputs<kRows, true, kZeros>(r, in, taps, lanes, sums);
    }
    store_rows<kRows>(sums, clamp, spans[kStrideTwoStoreSpan], y + kStrideTwoOutputs * i, out_w);
  }
}

// Output rows whose three input rows exist and whose row-major loads (row_major_rows: up to
// column 32 per_row of each input row) lie in the plane and the `after` floats past it; none
// unless the map is padded by one column on the left.
InnerRows row_major_range(const WindowGeometry& g, int64_t after) {
  if (g.pad_begin[2] != 1) return InnerRows{0, 0};
  const int64_t height = g.input[1], width = g.input[2];
  const int64_t per_row = (g.output[2] + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  const auto inside = [&](int64_t oh) {
    const int64_t top = 2 * oh - g.pad_begin[1];
    return top >= 0 && top + 2 < height &&
           (top + 2) * width + 2 * kStrideTwoOutputs * per_row <= height * width + after;
  };
  return rows_where(g.output[1], inside);
}

constexpr int kRowMajorRows = 2;

template <bool kZeros>
__attribute__((target("avx512f"))) void sweep(const WindowGeometry& g, const float* x,
                                              const float* w, float bias, const ClampBounds& bounds,
                                              const Column* columns, int kind,
                                              const InnerRows& row_major, float* y) {
  const OutputClamp clamp = output_clamp(bounds);
  __m512 taps[kTaps];
  for (int t = 0; t < kTaps; ++t) taps[t] = _mm512_set1_ps(w[t]);
  const __m512 bias_lanes = _mm512_set1_ps(bias);
  const int64_t width = g.input[2], out_w = g.output[2];
  const int64_t per_row = (out_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  const auto columns_over = [&](InnerRows rows) __attribute__((target("avx512f"))) {
    if (rows.first >= rows.end) return;
    for (int64_t i = 0; i < per_row; ++i) {
      const Column& c = columns[i];
      if (c.masked) {
        sweep_column<true, kZeros>(g, x, taps, bias_lanes, clamp, c.spans, c.inner[kind], rows, i,
                                   y);
      } else {
        sweep_column<false, kZeros>(g, x, taps, bias_lanes, clamp, c.spans, c.inner[kind], rows, i,
                                    y);
      }
    }
  };
  columns_over(InnerRows{0, row_major.first});
  int64_t oh = row_major.first;
  for (; oh + kRowMajorRows <= row_major.end; oh += kRowMajorRows) {
    row_major_rows<kRowMajorRows, kZeros>(x + (2 * oh - g.pad_begin[1]) * width, width, per_row,
                                          columns, taps, bias_lanes, clamp, y + oh * out_w, out_w);
  }
  for (; oh < row_major.end; ++oh) {
    row_major_rows<1, kZeros>(x + (2 * oh - g.pad_begin[1]) * width, width, per_row, columns, taps,
                              bias_lanes, clamp, y + oh * out_w, out_w);
  }
  columns_over(InnerRows{std::max(oh, row_major.first), g.output[1]});
}

// stride_two_spans on the stack.
void spans_of(const WindowGeometry& g, uint16_t* spans) {
  const int64_t per_row = (g.output[2] + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  for (int64_t i = 0; i < per_row; ++i) {
    stride_two_vector_spans(g.input[2], g.output[2], g.pad_begin[2], i,
                            spans + i * kStrideTwoSpans);
  }
}

}  // namespace

bool depthwise_stride_two_3x3_fits(const WindowGeometry& g) {
  return g.spatial_rank == 2 && g.input[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == 3 &&
         g.kernel[2] == 3 && g.stride[1] == 2 && g.stride[2] == 2 && g.dilation[1] == 1 &&
         g.dilation[2] == 1 && g.pad_begin[2] >= 0 && g.pad_begin[2] <= 1 && g.output[2] >= 1 &&
         g.output[2] <= kWidestOutputRow;
}

void depthwise_stride_two_3x3_avx512(const WindowGeometry& g, const DepthwiseChannels& channels,
                                     const ClampBounds& clamp, bool zero_padding) {
  uint16_t spans[kMostVectors * kStrideTwoSpans];
  spans_of(g, spans);
  Column columns[kMostVectors];
  const int64_t per_row = (g.output[2] + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  for (int64_t i = 0; i < per_row; ++i) {
    Column& column = columns[i];
    column.spans = spans + i * kStrideTwoSpans;
    column.masked = vector_masked(column.spans);
    const int64_t b = 2 * kStrideTwoOutputs * i - g.pad_begin[2];
    for (int kind = 0; kind < kNeighbourKinds; ++kind) {
      column.inner[kind] = inner_rows_of(g, b, (kind & 1) != 0 ? channels.x_stride : 0,
                                         (kind & 2) != 0 ? channels.x_stride : 0);
    }
  }
  InnerRows row_major[kNeighbourKinds];
  for (int kind = 0; kind < kNeighbourKinds; ++kind) {
    row_major[kind] = row_major_range(g, (kind & 2) != 0 ? channels.x_stride : 0);
  }
  for (int64_t m = 0; m < channels.count; ++m) {
    const int kind = neighbours(m, channels.count);
    const float* x = channels.x + m * channels.x_stride;
    const float* w = channels.w + m * kTaps;
    const float bias = channels.bias != nullptr ? channels.bias[m] : 0.0f;
    float* y = channels.y + m * channels.y_stride;
    if (zero_padding) {
      sweep<true>(g, x, w, bias, clamp, columns, kind, row_major[kind], y);
    } else {
      sweep<false>(g, x, w, bias, clamp, columns, kind, row_major[kind], y);
    }
  }
}

}  // namespace onepool::cpu::nn
