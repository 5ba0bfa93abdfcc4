#include "runtime/cpu/kernels/pool_max_same.h"

#include <immintrin.h>

#include <limits>

#include "runtime/cpu/kernels/nan_order_avx512.h"

namespace onepool::cpu::nn {
namespace {

constexpr int64_t kLanes = 16;
constexpr uint16_t kAllLanes = 0xFFFF;
// A vector's masks (max_pool_same_masks), in this order.
enum Mask : int { kLeft, kRight, kUp, kDown, kInside, kMasks };

// Loads 16 floats from `at`, -inf in the lanes off `mask` (memory there untouched).
__attribute__((target("avx512f"), always_inline)) inline __m512 load_or_minus_infinity(
    const float* at, uint16_t mask) {
  const __m512 minus_infinity = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  return mask == kAllLanes ? _mm512_loadu_ps(at) : _mm512_mask_loadu_ps(minus_infinity, mask, at);
}

// The three taps at offsets -step, 0, +step from `at` folded in that order; the first and last
// under their masks, the middle one under `inside`.
__attribute__((target("avx512f"), always_inline)) inline __m512 fold_three(
    const float* at, int64_t step, uint16_t before, uint16_t inside, uint16_t after) {
  const __m512 first = load_or_minus_infinity(at - step, before);
  const __m512 middle = load_or_minus_infinity(at, inside);
  const __m512 last = load_or_minus_infinity(at + step, after);
  return nan_max16(nan_max16(first, middle), last);
}

__attribute__((target("avx512f"))) void pool_plane(const WindowGeometry& g, const uint16_t* masks,
                                                   const float* x, float* y) {
  alignas(64) float row_max[kMaxSamePoolPositions];
  const int64_t positions = g.input_size();
  const int64_t width = g.input[2];
  const int64_t vectors = (positions + kLanes - 1) / kLanes;
  for (int64_t v = 0; v < vectors; ++v) {
    const uint16_t* m = masks + v * kMasks;
    const __m512 folded = fold_three(x + v * kLanes, 1, m[kLeft], m[kInside], m[kRight]);
    _mm512_mask_storeu_ps(row_max + v * kLanes, m[kInside], folded);
  }
  for (int64_t v = 0; v < vectors; ++v) {
    const uint16_t* m = masks + v * kMasks;
    const __m512 folded = fold_three(row_max + v * kLanes, width, m[kUp], m[kInside], m[kDown]);
    _mm512_mask_storeu_ps(y + v * kLanes, m[kInside], folded);
  }
}

// Rows from kNarrowestRowSweep up to kMostRowVectors vectors wide sweep row by row
// (pool_plane_rows; each row's maxima sit on the stack): Inception's pools on 28x28 and 14x14
// maps ran 0.81-0.98x the flat passes' time at one thread, 0.90-1.0x at two. Narrower rows keep
// the flat passes, whose vectors span rows (7x7: 1.00-1.03x).
constexpr int64_t kNarrowestRowSweep = 14;
constexpr int64_t kMostRowVectors = 16;

// Row r's maxima over its three columns for each of its `vectors` vectors: each vector loaded
// once (the last through a mask, -inf past the row's end), its left and right neighbours shifted
// in from the vectors beside it (-inf beyond the row); a row of padding all -inf.
__attribute__((target("avx512f"), always_inline)) inline void fold_row_vectors(const float* row,
                                                                               int64_t vectors,
                                                                               __mmask16 last,
                                                                               __m512* maxima) {
  const __m512 minus_infinity = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  if (row == nullptr) {
    for (int64_t i = 0; i < vectors; ++i) maxima[i] = minus_infinity;
    return;
  }
  __m512 previous = minus_infinity;
  __m512 current = load_or_minus_infinity(row, vectors == 1 ? last : kAllLanes);
  for (int64_t i = 0; i < vectors; ++i) {
    const __m512 next =
        i + 1 < vectors
            ? load_or_minus_infinity(row + (i + 1) * kLanes, i + 2 == vectors ? last : kAllLanes)
            : minus_infinity;
    // left: lane l holds column 16 i + l - 1 (lane 0 the previous vector's last); right: + 1.
    const __m512 left = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        kAllLanes, _mm512_castps_si512(current), _mm512_castps_si512(previous), 15));
    const __m512 right = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        kAllLanes, _mm512_castps_si512(next), _mm512_castps_si512(current), 1));
    maxima[i] = nan_max16(nan_max16(left, current), right);
    previous = current;
    current = next;
  }
}

// A plane row by row: each input row's maxima over its columns made once, then each output row
// folds the maxima of the rows above, at and below it (kh order). One load per input vector,
// where the flat passes took six (most across two cache lines) and two stores.
__attribute__((target("avx512f"))) void pool_plane_rows(const WindowGeometry& g, const float* x,
                                                        float* y) {
  const int64_t height = g.input[1], width = g.input[2];
  const int64_t vectors = (width + kLanes - 1) / kLanes;
  const auto last = static_cast<__mmask16>((1u << (width - (vectors - 1) * kLanes)) - 1u);
  __m512 above[kMostRowVectors], here[kMostRowVectors], below[kMostRowVectors];
  const auto row = [&](int64_t r) { return r >= 0 && r < height ? x + r * width : nullptr; };
  fold_row_vectors(nullptr, vectors, last, above);
  fold_row_vectors(row(0), vectors, last, here);
  for (int64_t r = 0; r < height; ++r) {
    fold_row_vectors(row(r + 1), vectors, last, below);
    float* out = y + r * width;
    for (int64_t i = 0; i < vectors; ++i) {
      const __m512 folded = nan_max16(nan_max16(above[i], here[i]), below[i]);
      _mm512_mask_storeu_ps(out + i * kLanes, i + 1 == vectors ? last : kAllLanes, folded);
      above[i] = here[i];
      here[i] = below[i];
    }
  }
}

}  // namespace

bool max_pool_same_fits(const WindowGeometry& g, bool avx512) {
  const bool window = g.spatial_rank == 2 && g.input[0] == 1 && g.kernel[0] == 1 &&
                      g.kernel[1] == 3 && g.kernel[2] == 3 && g.stride[1] == 1 &&
                      g.stride[2] == 1 && g.dilation[1] == 1 && g.dilation[2] == 1;
  const bool same = g.pad_begin[1] == 1 && g.pad_begin[2] == 1 && g.pad_end[1] == 1 &&
                    g.pad_end[2] == 1 && g.output[1] == g.input[1] && g.output[2] == g.input[2];
  return avx512 && window && same && g.input_size() <= kMaxSamePoolPositions;
}

std::vector<uint16_t> max_pool_same_masks(const WindowGeometry& g) {
  const int64_t height = g.input[1], width = g.input[2];
  const int64_t positions = height * width;
  const int64_t vectors = (positions + kLanes - 1) / kLanes;
  std::vector<uint16_t> masks(static_cast<size_t>(vectors * kMasks), 0);
  for (int64_t f = 0; f < positions; ++f) {
    const int64_t row = f / width, column = f % width;
    uint16_t* m = masks.data() + f / kLanes * kMasks;
    const auto lane = static_cast<uint16_t>(1u << (f % kLanes));
    if (column > 0) m[kLeft] |= lane;
    if (column + 1 < width) m[kRight] |= lane;
    if (row > 0) m[kUp] |= lane;
    if (row + 1 < height) m[kDown] |= lane;
    m[kInside] |= lane;
  }
  return masks;
}

void max_pool_same(const WindowGeometry& g, const std::vector<uint16_t>& masks, const float* x,
                   float* y, int64_t planes, ThreadPool& threads) {
  threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      if (g.input[2] >= kNarrowestRowSweep && g.input[2] <= kMostRowVectors * kLanes) {
        pool_plane_rows(g, x + plane * g.input_size(), y + plane * g.input_size());
      } else {
        pool_plane(g, masks.data(), x + plane * g.input_size(), y + plane * g.input_size());
      }
    }
  });
}

}  // namespace onepool::cpu::nn
