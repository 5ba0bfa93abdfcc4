// 16 outputs of a row of a 3-wide, stride-2 window on AVX-512 (the masked depthwise convolution,
// the strided max pool): the 33 input columns they read, from b = 32 i - pad_left on for the i-th
// vector of an output row, loaded as two pairs of vectors (from b and b + 16, from b + 2 and
// b + 18) with the lanes outside the input row taking a fill value (and the memory they would read
// untouched), then split into each tap's columns b + 2 l + kw by two-source permutes: the loads
// from b give the even (kw = 0) and odd (kw = 1) columns, those from b + 2 the even ones from
// b + 2 on (kw = 2).
//
// Rows whose loads all lie inside the plane's memory (all but the first and last output rows,
// stride_two_interior_rows) load plainly and drop the lanes outside their input row afterwards,
// a vector of four rows at a time with no per-vector bookkeeping: the sweep that builds each
// vector's row pointers and masks (sweep_stride_two) held MobileNetV2's stride-2 depthwise
// convolutions at 2-2.5x ONNX Runtime's time on a Zen 5 core (144 x 56 x 56: 0.113 -> 0.065 ms)
// and ResNet's stem max pool at 0.18 ms (now 0.13).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <vector>

namespace onepool::cpu::nn {

constexpr int kStrideTwoSpans = 8;      // masks per vector of an output row
constexpr int kStrideTwoStoreSpan = 4;  // its outputs inside the row
constexpr int kStrideTwoTapSpans = 5;   // then the lanes whose left, middle, right tap is inside
constexpr int64_t kStrideTwoOutputs = 16;
constexpr uint16_t kAllStrideTwoLanes = 0xFFFF;
constexpr int64_t kStrideTwoReach = 34;  // columns a vector's four loads read from b on

/// For each vector of an output row `output_w` wide: the lanes inside the input row (`input_w`
/// wide, padded by `pad_left` before) of the loads from b, b + 16, b + 2 and b + 18, then the
/// vector's outputs inside the output row, then the outputs whose tap kw (column b + 2 l + kw)
/// lies inside the input row, for kw = 0, 1, 2.
std::vector<uint16_t> stride_two_spans(int64_t input_w, int64_t output_w, int64_t pad_left);

/// The kStrideTwoSpans masks of vector i alone, into `spans` (no allocation).
void stride_two_vector_spans(int64_t input_w, int64_t output_w, int64_t pad_left, int64_t i,
                             uint16_t* spans);

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

/// As stride_two_taps with a fill of zero, for a row of stride_two_interior_rows: four plain loads
/// (the 34 columns from `row` on lie inside the plane, though not all inside the row), then
/// permutes that zero the lanes whose tap lies outside the row. The same values.
__attribute__((target("avx512f"), always_inline)) inline StrideTwoTaps stride_two_taps_or_zero(
    const float* row, const uint16_t* spans) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512 low = _mm512_loadu_ps(row);
  const __m512 high = _mm512_loadu_ps(row + 16);
  const __m512 low_shifted = _mm512_loadu_ps(row + 2);
  const __m512 high_shifted = _mm512_loadu_ps(row + 18);
  const uint16_t* taps = spans + kStrideTwoTapSpans;
  return StrideTwoTaps{_mm512_maskz_permutex2var_ps(taps[0], low, even, high),
                       _mm512_maskz_permutex2var_ps(taps[1], low, odd, high),
                       _mm512_maskz_permutex2var_ps(taps[2], low_shifted, even, high_shifted)};
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

/// Every vector of output rows [first_row, end_row), in row order, handed to `batch` kBatch at a
/// time (independent chains side by side) and the last few to `single` one at a time.
template <int kBatch, class Batch, class Single>
inline void sweep_stride_two(const StrideTwoPlane& p, int64_t first_row, int64_t end_row,
                             const Batch& batch, const Single& single) {
  const int64_t per_row = (p.out_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  StrideTwoVector vectors[kBatch];
  int count = 0;
  for (int64_t oh = first_row; oh < end_row; ++oh) {
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

/// Output rows [first, end) of the plane whose three input rows exist and whose every vector's
/// loads (kStrideTwoReach columns from b on) lie inside the plane's memory, though not all inside
/// their row: the rows stride_two_taps_or_zero and its kin may read with plain loads.
struct StrideTwoRows {
  int64_t first = 0;
  int64_t end = 0;
};
StrideTwoRows stride_two_interior_rows(const StrideTwoPlane& p);

/// One vector of each of a few interior output rows: row j's input row kh starts at
/// x + (2 j + kh) * width (column b), its outputs at y + j * out_w.
struct StrideTwoInterior {
  const float* x;
  int64_t width;
  const uint16_t* spans;
  float* y;
  int64_t out_w;
};

/// Every vector of the plane: the rows outside stride_two_interior_rows by sweep_stride_two
/// (`batch` and `single`), the interior ones kBatch rows at a time (`interior_batch`, a vector of
/// each row at a time), the last few one at a time (`interior_single`).
template <int kBatch, class Batch, class Single, class InteriorBatch, class InteriorSingle>
inline void sweep_stride_two_plane(const StrideTwoPlane& p, const Batch& batch,
                                   const Single& single, const InteriorBatch& interior_batch,
                                   const InteriorSingle& interior_single) {
  const StrideTwoRows interior = stride_two_interior_rows(p);
  const int64_t per_row = (p.out_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  const auto each_vector = [&](int64_t oh, const auto& fn) {
    for (int64_t i = 0; i < per_row; ++i) {
      fn(StrideTwoInterior{
          p.x + (2 * oh - p.pad_top) * p.width + 2 * kStrideTwoOutputs * i - p.pad_left, p.width,
          p.spans + i * kStrideTwoSpans, p.y + oh * p.out_w + kStrideTwoOutputs * i, p.out_w});
    }
  };
  sweep_stride_two<kBatch>(p, 0, interior.first, batch, single);
  int64_t oh = interior.first;
  for (; oh + kBatch <= interior.end; oh += kBatch) each_vector(oh, interior_batch);
  for (; oh < interior.end; ++oh) each_vector(oh, interior_single);
  sweep_stride_two<kBatch>(p, interior.end, p.out_h, batch, single);
}

}  // namespace onepool::cpu::nn
