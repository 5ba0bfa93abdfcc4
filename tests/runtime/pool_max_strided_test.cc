// The 3 x 3 / stride 2 MaxPool on AVX-512 (runtime/cpu/kernels/pool_max_strided.h) and the 3 x 3
// / stride 1 one padded by one all round (pool_max_same.h) against a window-by-window fold with
// nan_max (each window row in kw order, then the rows in kh order, taps in the padding skipped):
// the same bits with NaN, infinities, signed-zero ties and repeated values, at one and two
// threads; at stride 2 for pads of 0 and 1 before and after, even and odd planes, rows of one,
// two and three vectors; at stride 1 for planes of one position up to 64 x 64, rows that start
// mid-vector, single rows and columns. Which pools take each: checked too. Without AVX-512 the
// kernels do not run here (a message says so); their fit is still checked.
#include "runtime/cpu/kernels/pool_max_strided.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/nan_order.h"
#include "runtime/cpu/kernels/pool_max_same.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::testing {
namespace {

using cpu::nn::WindowGeometry;

WindowGeometry pool_geometry(int64_t h, int64_t w, int64_t top, int64_t left, int64_t bottom,
                             int64_t right, int64_t stride = 2) {
  WindowGeometry g;
  g.spatial_rank = 2;
  g.input = {1, h, w};
  g.output = {1, (h + top + bottom - 3) / stride + 1, (w + left + right - 3) / stride + 1};
  g.kernel = {1, 3, 3};
  g.stride = {1, stride, stride};
  g.pad_begin = {0, top, left};
  g.pad_end = {0, bottom, right};
  return g;
}

std::vector<float> awkward(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    const uint32_t pick = (seed >> 24) % 16;
    values[i] = pick == 0   ? std::numeric_limits<float>::quiet_NaN()
                : pick == 1 ? std::numeric_limits<float>::infinity()
                : pick == 2 ? -std::numeric_limits<float>::infinity()
                : pick < 6  ? 0.0f
                : pick < 9  ? -0.0f
                : pick < 11 ? 0.5f
                            : static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return values;
}

float reference_window(const WindowGeometry& g, const float* plane, int64_t oh, int64_t ow) {
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t kh = 0; kh < 3; ++kh) {
    const int64_t r = g.stride[1] * oh + kh - g.pad_begin[1];
    float row = -std::numeric_limits<float>::infinity();
    for (int64_t kw = 0; kw < 3; ++kw) {
      const int64_t c = g.stride[2] * ow + kw - g.pad_begin[2];
      if (r >= 0 && r < g.input[1] && c >= 0 && c < g.input[2]) {
        row = cpu::nan_max(row, plane[r * g.input[2] + c]);
      }
    }
    best = kh == 0 ? row : cpu::nan_max(best, row);
  }
  return best;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Outputs of `planes` planes that differ from the window-by-window fold (NaN for NaN); the first
// three reported.
int mismatches(const WindowGeometry& g, const std::vector<float>& x, const std::vector<float>& y,
               int64_t planes) {
  int count = 0;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oh = 0; oh < g.output[1]; ++oh) {
      for (int64_t ow = 0; ow < g.output[2]; ++ow) {
        const float expected = reference_window(g, x.data() + p * g.input_size(), oh, ow);
        const float actual = y[static_cast<size_t>((p * g.output[1] + oh) * g.output[2] + ow)];
        const bool same = std::isnan(expected) ? std::isnan(actual) : same_bits(actual, expected);
        if (!same && ++count <= 3) {
          CAPTURE(p);
          CAPTURE(oh);
          CAPTURE(ow);
          CHECK(actual == expected);
        }
      }
    }
  }
  return count;
}

TEST_CASE("the stride-2 3x3 max pool gives the window-by-window fold's bits") {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512) MESSAGE("no AVX-512 on this CPU: the stride-2 max pool does not run here");
  struct Case {
    int64_t h, w, top, left, bottom, right;
  };
  const Case cases[] = {
      {112, 112, 1, 1, 1, 1},  // ResNet's stem pool
      {23, 37, 1, 1, 1, 1},    // odd plane, rows of 19 outputs
      {30, 33, 0, 0, 1, 1},    // TensorFlow's SAME padding
      {29, 16, 1, 1, 0, 0},    // no padding after
      {17, 100, 1, 0, 1, 1},   // rows of 50 outputs: four vectors, the last partial
      {18, 66, 0, 1, 0, 0},    // rows of 33: a last vector of one output
      {14, 14, 0, 0, 1, 1},    // rows of 7, the narrowest (GoogLeNet's last pool, ceil mode)
  };
  for (const Case& c : cases) {
    CAPTURE(c.h);
    CAPTURE(c.w);
    CAPTURE(c.top);
    CAPTURE(c.left);
    const WindowGeometry g = pool_geometry(c.h, c.w, c.top, c.left, c.bottom, c.right);
    CHECK(cpu::nn::max_pool_stride_two_fits(g, true, true));
    CHECK_FALSE(cpu::nn::max_pool_stride_two_fits(g, true, false));
    CHECK_FALSE(cpu::nn::max_pool_stride_two_fits(g, false, true));
    if (!avx512) continue;
    const int64_t planes = 3;
    const std::vector<float> x = awkward(planes * g.input_size(), static_cast<uint32_t>(c.w));
    const std::vector<uint16_t> spans = cpu::nn::max_pool_stride_two_spans(g);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      cpu::ThreadPool pool(threads);
      std::vector<float> y(static_cast<size_t>(planes * g.output_size()), 7.0f);
      cpu::nn::max_pool_stride_two(g, spans, x.data(), y.data(), planes, pool);
      CHECK(mismatches(g, x, y, planes) == 0);
    }
  }
}

TEST_CASE("the stride-2 max pool takes only 3x3 stride-2 windows with small pads and rows") {
  CHECK_FALSE(cpu::nn::max_pool_stride_two_fits(pool_geometry(11, 11, 1, 1, 1, 1), true, true));
  WindowGeometry wide_pad = pool_geometry(40, 40, 2, 2, 2, 2);
  CHECK_FALSE(cpu::nn::max_pool_stride_two_fits(wide_pad, true, true));
  WindowGeometry dilated = pool_geometry(40, 40, 1, 1, 1, 1);
  dilated.dilation = {1, 2, 2};
  CHECK_FALSE(cpu::nn::max_pool_stride_two_fits(dilated, true, true));
  WindowGeometry stride_three = pool_geometry(40, 40, 1, 1, 1, 1);
  stride_three.stride = {1, 3, 3};
  CHECK_FALSE(cpu::nn::max_pool_stride_two_fits(stride_three, true, true));
}

TEST_CASE("the 3x3 stride-1 same max pool gives the window-by-window fold's bits") {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512) MESSAGE("no AVX-512 on this CPU: the stride-1 same max pool does not run here");
  const int64_t sizes[][2] = {
      {28, 28},  // Inception's 3a / 3b branch pools
      {14, 14},  // 4a-4e: a last vector of 4 positions
      {7, 7},    // 5a / 5b: four vectors, the last of one position
      {1, 1},    // a single position: every neighbour in the padding
      {1, 37},   // one row: no row above nor below
      {19, 1},   // one column: no left nor right neighbour
      {13, 17},  // rows that start mid-vector
      {64, 64},  // the largest plane it takes
  };
  for (const auto& size : sizes) {
    CAPTURE(size[0]);
    CAPTURE(size[1]);
    const WindowGeometry g = pool_geometry(size[0], size[1], 1, 1, 1, 1, 1);
    CHECK(cpu::nn::max_pool_same_fits(g, true));
    CHECK_FALSE(cpu::nn::max_pool_same_fits(g, false));
    if (!avx512) continue;
    const int64_t planes = 3;
    const std::vector<float> x = awkward(planes * g.input_size(), static_cast<uint32_t>(size[1]));
    const std::vector<uint16_t> masks = cpu::nn::max_pool_same_masks(g);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      cpu::ThreadPool pool(threads);
      std::vector<float> y(static_cast<size_t>(planes * g.output_size()), 7.0f);
      cpu::nn::max_pool_same(g, masks, x.data(), y.data(), planes, pool);
      CHECK(mismatches(g, x, y, planes) == 0);
    }
  }
}

TEST_CASE("the stride-1 same max pool takes only 3x3 windows padded by one on planes up to 64x64") {
  CHECK_FALSE(cpu::nn::max_pool_same_fits(pool_geometry(65, 64, 1, 1, 1, 1, 1), true));
  CHECK_FALSE(cpu::nn::max_pool_same_fits(pool_geometry(14, 14, 0, 0, 0, 0, 1), true));
  CHECK_FALSE(cpu::nn::max_pool_same_fits(pool_geometry(14, 14, 1, 1, 1, 1, 2), true));
  CHECK_FALSE(cpu::nn::max_pool_same_fits(pool_geometry(14, 14, 0, 0, 2, 2, 1), true));
  WindowGeometry dilated = pool_geometry(14, 14, 1, 1, 1, 1, 1);
  dilated.dilation = {1, 2, 2};
  CHECK_FALSE(cpu::nn::max_pool_same_fits(dilated, true));
}

}  // namespace
}  // namespace onepool::testing
