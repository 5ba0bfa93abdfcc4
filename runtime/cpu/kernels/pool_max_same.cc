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
      pool_plane(g, masks.data(), x + plane * g.input_size(), y + plane * g.input_size());
    }
  });
}

}  // namespace onepool::cpu::nn
