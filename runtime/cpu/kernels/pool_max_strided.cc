#include "runtime/cpu/kernels/pool_max_strided.h"

#include <immintrin.h>

#include <limits>

#include "runtime/cpu/kernels/nan_order_avx512.h"
#include "runtime/cpu/kernels/stride_two_rows.h"

namespace onepool::cpu::nn {
namespace {

constexpr int kVectorsAtOnce = 4;
// Narrower output rows take the separable path. At 7 (GoogLeNet's last pool, 14x14 -> 7x7 on 832
// channels) these vectors, 7 of 16 lanes used, still ran 0.69-0.79x its time.
constexpr int64_t kNarrowestOutputRow = 7;

// kCount windows' maxima: the three row maxima of window j, row_max(j, kh), folded in kh order.
template <int kCount, class RowMax>
__attribute__((target("avx512f"), always_inline)) inline void fold_windows(const RowMax& row_max,
                                                                           __m512 best[kCount]) {
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
#pragma GCC unroll 4
    for (int j = 0; j < kCount; ++j) {
      const __m512 row = row_max(j, kh);
      best[j] = kh == 0 ? row : nan_max16(best[j], row);
    }
  }
}

template <int kCount>
__attribute__((target("avx512f"), always_inline)) inline void pool_vectors(
    const StrideTwoVector* vectors) {
  const __m512 minus_infinity = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 best[kCount];
  fold_windows<kCount>(
      [&](int j, int kh) __attribute__((target("avx512f"), always_inline)) {
        const float* row = vectors[j].rows[kh];
        if (row == nullptr) return minus_infinity;
        const StrideTwoTaps in = stride_two_taps(row, vectors[j].spans, minus_infinity);
        return nan_max16(nan_max16(in.left, in.middle), in.right);
      },
      best);
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) {
    store_stride_two(vectors[j].y, vectors[j].spans[kStrideTwoStoreSpan], best[j]);
  }
}

// The three taps of one interior input row (stride_two_interior_rows) folded by nan_max16: four
// plain loads, the lanes whose tap lies outside the row -inf (the fill stride_two_taps gives them).
__attribute__((target("avx512f"), always_inline)) inline __m512 interior_row_max(
    const float* row, const uint16_t* spans, __m512 minus_infinity) {
  const StrideTwoTaps in = stride_two_taps_or_zero(row, spans);
  const uint16_t* inside = spans + kStrideTwoTapSpans;
  return nan_max16(nan_max16(_mm512_mask_mov_ps(minus_infinity, inside[0], in.left),
                             _mm512_mask_mov_ps(minus_infinity, inside[1], in.middle)),
                   _mm512_mask_mov_ps(minus_infinity, inside[2], in.right));
}

// kRows interior rows, a vector of each: the windows folded as pool_vectors folds them.
template <int kRows>
__attribute__((target("avx512f"), always_inline)) inline void pool_interior_vectors(
    const StrideTwoInterior& at) {
  const __m512 minus_infinity = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 best[kRows];
  fold_windows<kRows>(
      [&](int j, int kh) __attribute__((target("avx512f"), always_inline)) {
        return interior_row_max(at.x + (2 * j + kh) * at.width, at.spans, minus_infinity);
      },
      best);
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) {
    store_stride_two(at.y + j * at.out_w, at.spans[kStrideTwoStoreSpan], best[j]);
  }
}

__attribute__((target("avx512f"))) void pool_plane(const StrideTwoPlane& plane) {
  sweep_stride_two_plane<kVectorsAtOnce>(
      plane, [](const StrideTwoVector* vectors) __attribute__((target("avx512f"))) {
        pool_vectors<kVectorsAtOnce>(vectors);
      },
      [](const StrideTwoVector* vector)
          __attribute__((target("avx512f"))) { pool_vectors<1>(vector); },
      [](const StrideTwoInterior& at)
          __attribute__((target("avx512f"))) { pool_interior_vectors<kVectorsAtOnce>(at); },
      [](const StrideTwoInterior& at)
          __attribute__((target("avx512f"))) { pool_interior_vectors<1>(at); });
}

}  // namespace

bool max_pool_stride_two_fits(const WindowGeometry& g, bool windows_reach_input, bool avx512) {
  const bool window = g.spatial_rank == 2 && g.input[0] == 1 && g.kernel[0] == 1 &&
                      g.kernel[1] == 3 && g.kernel[2] == 3 && g.stride[1] == 2 &&
                      g.stride[2] == 2 && g.dilation[1] == 1 && g.dilation[2] == 1;
  const bool pads =
      g.pad_begin[1] >= 0 && g.pad_begin[1] <= 1 && g.pad_begin[2] >= 0 && g.pad_begin[2] <= 1;
  return avx512 && window && pads && windows_reach_input && g.output[2] >= kNarrowestOutputRow;
}

std::vector<uint16_t> max_pool_stride_two_spans(const WindowGeometry& g) {
  return stride_two_spans(g.input[2], g.output[2], g.pad_begin[2]);
}

void max_pool_stride_two(const WindowGeometry& g, const std::vector<uint16_t>& spans,
                         const float* x, float* y, int64_t planes, ThreadPool& threads) {
  threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      pool_plane(StrideTwoPlane{x + plane * g.input_size(), y + plane * g.output_size(), g.input[1],
                                g.input[2], g.output[1], g.output[2], g.pad_begin[1],
                                g.pad_begin[2], spans.data()});
    }
  });
}

}  // namespace onepool::cpu::nn
