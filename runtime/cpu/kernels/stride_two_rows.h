// 16 outputs of a row of a 3-wide, stride-2 window on AVX-512 (the masked depthwise convolution,
// the strided max pool): the 33 input columns they read, from b = 32 i - pad_left on for the i-th
// vector of an output row, loaded as two pairs of vectors (from b and b + 16, from b + 2 and
// b + 18) with the lanes outside the input row taking a fill value (and the memory they would read
// untouched), then split into each tap's columns b + 2 l + kw by two-source permutes: the loads
// from b give the even (kw = 0) and odd (kw = 1) columns, those from b + 2 the even ones from
// b + 2 on (kw = 2).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <vector>

namespace onepool::cpu::nn {

constexpr int kStrideTwoSpans = 5;      // masks per vector of an output row
constexpr int kStrideTwoStoreSpan = 4;  // the last: its outputs inside the row
constexpr int64_t kStrideTwoOutputs = 16;
constexpr uint16_t kAllStrideTwoLanes = 0xFFFF;

/// For each vector of an output row `output_w` wide: the lanes inside the input row (`input_w`
/// wide, padded by `pad_left` before) of the loads from b, b + 16, b + 2 and b + 18, then the
/// vector's outputs inside the output row.
std::vector<uint16_t> stride_two_spans(int64_t input_w, int64_t output_w, int64_t pad_left);

/// The three taps of one input row for one vector of outputs: `row` points at column b of the
/// input row (b may be -1: the lanes before the row are masked), `spans` at the vector's masks.
struct StrideTwoTaps {
  __m512 left, middle, right;
};

__attribute__((target("avx512f"), always_inline)) inline StrideTwoTaps stride_two_taps(
    const float* row, const uint16_t* spans, __m512 fill) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  // Inside the row, all four loads are plain: masked ones took the strided max pool on a Zen 5
  // core 0.28 -> 0.18 ms (ResNet-50's, 64 x 112 x 112), though every mask of the middle vectors
  // is full.
  const bool inside = (spans[0] & spans[1] & spans[2] & spans[3]) == kAllStrideTwoLanes;
  const __m512 low = inside ? _mm512_loadu_ps(row) : _mm512_mask_loadu_ps(fill, spans[0], row);
  const __m512 high =
      inside ? _mm512_loadu_ps(row + 16) : _mm512_mask_loadu_ps(fill, spans[1], row + 16);
  const __m512 low_shifted =
      inside ? _mm512_loadu_ps(row + 2) : _mm512_mask_loadu_ps(fill, spans[2], row + 2);
  const __m512 high_shifted =
      inside ? _mm512_loadu_ps(row + 18) : _mm512_mask_loadu_ps(fill, spans[3], row + 18);
  return StrideTwoTaps{_mm512_permutex2var_ps(low, even, high),
                       _mm512_permutex2var_ps(low, odd, high),
                       _mm512_permutex2var_ps(low_shifted, even, high_shifted)};
}

/// Stores a vector of outputs: plain where all 16 lie inside the output row (`span` full), masked
/// at a row's end.
__attribute__((target("avx512f"), always_inline)) inline void store_stride_two(float* y,
                                                                               uint16_t span,
                                                                               __m512 value) {
  if (span == kAllStrideTwoLanes) {
    _mm512_storeu_ps(y, value);
  } else {
    _mm512_mask_storeu_ps(y, span, value);
  }
}

/// One plane of a 3 x 3, stride-2 window: its input (height x width, padded by pad_top and
/// pad_left before) and output (out_h x out_w), and the output rows' masks (stride_two_spans).
struct StrideTwoPlane {
  const float* x;
  float* y;
  int64_t height, width, out_h, out_w, pad_top, pad_left;
  const uint16_t* spans;
};

/// 16 outputs of one output row: the three input rows they read, from the vector's column b on
/// (nullptr: a row of padding), its masks and where its outputs go.
struct StrideTwoVector {
  const float* rows[3];
  const uint16_t* spans;
  float* y;
};

/// Every vector of the plane's output rows, in row order, handed to `batch` kBatch at a time
/// (independent chains side by side) and the last few to `single` one at a time.
template <int kBatch, class Batch, class Single>
inline void sweep_stride_two(const StrideTwoPlane& p, const Batch& batch, const Single& single) {
  const int64_t per_row = (p.out_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  StrideTwoVector vectors[kBatch];
  int count = 0;
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    for (int64_t i = 0; i < per_row; ++i) {
      StrideTwoVector& vector = vectors[count++];
      const int64_t first_column = 2 * kStrideTwoOutputs * i - p.pad_left;
      for (int kh = 0; kh < 3; ++kh) {
        const int64_t r = 2 * oh + kh - p.pad_top;
        vector.rows[kh] = r >= 0 && r < p.height ? p.x + r * p.width + first_column : nullptr;
      }
      vector.spans = p.spans + i * kStrideTwoSpans;
      vector.y = p.y + oh * p.out_w + i * kStrideTwoOutputs;
      if (count == kBatch) {
        batch(vectors);
        count = 0;
      }
    }
  }
  for (int j = 0; j < count; ++j) single(vectors + j);
}

}  // namespace onepool::cpu::nn
