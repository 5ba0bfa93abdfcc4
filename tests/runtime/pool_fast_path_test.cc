// The fast paths of 1-D / 2-D MaxPool (pool_max_padded's separable passes) and AveragePool
// (pool_window_2d's row sweeps) give the same bits as the generic window-by-window path. The same
// data pooled as [1, 2C, H, W] (fast path) and as [1, C, 2, H, W] with a depth-1 window (generic
// path) must agree exactly, with NaN, signed zeros and ties in the input, over strides, dilations,
// asymmetric pads and widths that leave vector remainders.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool {
namespace {

using testing::f32;
using testing::int_attr;
using testing::ints_attr;
using testing::OutputSpec;
using testing::random_values;
using testing::run_single_node;
using testing::values_of;

struct Geometry {
  int64_t height, width, kernel_h, kernel_w, stride, dilation;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
};

int64_t pooled(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t stride,
               int64_t dilation) {
  return (in + pad_begin + pad_end - ((kernel - 1) * dilation + 1)) / stride + 1;
}

// Random values with NaN, +0 / -0, infinities and repeated values sprinkled in.
std::vector<float> awkward_values(int64_t count, uint32_t seed) {
  std::vector<float> values = random_values(count, seed);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % 37 == 5) values[i] = std::numeric_limits<float>::quiet_NaN();
    if (i % 11 == 3) values[i] = (i % 2 == 0) ? 0.0f : -0.0f;
    if (i % 13 == 7) values[i] = 0.5f;
    if (i % 29 == 11) values[i] = -std::numeric_limits<float>::infinity();
    if (i % 43 == 17) values[i] = std::numeric_limits<float>::infinity();
  }
  return values;
}

// Mostly +0 and -0 among negatives: nearly every window's maximum is a tie between zeros, so
// a path that keeps the wrong one of equal maxima (the sign of a zero) shows.
std::vector<float> zero_ties(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    const uint32_t pick = (state >> 24) % 8;
    v = pick < 3 ? 0.0f : pick < 6 ? -0.0f : pick < 7 ? -1.0f : -2.5f;
  }
  return values;
}

std::vector<float> pool(const char* op, const Geometry& g, bool include_pad, int64_t channels,
                        bool as_3d, const std::vector<float>& x) {
  const int64_t out_h = pooled(g.height, g.pad_top, g.pad_bottom, g.kernel_h, g.stride,
                               op[0] == 'M' ? g.dilation : 1);
  const int64_t out_w =
      pooled(g.width, g.pad_left, g.pad_right, g.kernel_w, g.stride, op[0] == 'M' ? g.dilation : 1);
  AttributeMap attributes;
  const int64_t d = op[0] == 'M' ? g.dilation : 1;
  Shape x_shape{1, 2 * channels, g.height, g.width}, y_shape{1, 2 * channels, out_h, out_w};
  if (as_3d) {
    x_shape = Shape{1, channels, 2, g.height, g.width};
    y_shape = Shape{1, channels, 2, out_h, out_w};
    attributes.set("kernel_shape", ints_attr({1, g.kernel_h, g.kernel_w}));
    attributes.set("strides", ints_attr({1, g.stride, g.stride}));
    attributes.set("pads", ints_attr({0, g.pad_top, g.pad_left, 0, g.pad_bottom, g.pad_right}));
    if (op[0] == 'M') attributes.set("dilations", ints_attr({1, d, d}));
  } else {
    attributes.set("kernel_shape", ints_attr({g.kernel_h, g.kernel_w}));
    attributes.set("strides", ints_attr({g.stride, g.stride}));
    attributes.set("pads", ints_attr({g.pad_top, g.pad_left, g.pad_bottom, g.pad_right}));
    if (op[0] == 'M') attributes.set("dilations", ints_attr({d, d}));
  }
  if (op[0] == 'A') attributes.set("count_include_pad", int_attr(include_pad ? 1 : 0));
  auto result =
      run_single_node(op, {f32(x_shape, x)}, {OutputSpec{DType::kFloat32, y_shape}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

void check_same_bits(const std::vector<float>& fast, const std::vector<float>& generic) {
  REQUIRE(fast.size() == generic.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(generic[i])) {
      CHECK(std::isnan(fast[i]));
      continue;
    }
    uint32_t a = 0, b = 0;
    std::memcpy(&a, &fast[i], 4);
    std::memcpy(&b, &generic[i], 4);
    CHECK_MESSAGE(a == b, fast[i], " vs ", generic[i]);
  }
}

TEST_CASE("2-D pools on the row-sweep path give the generic path's bits") {
  const Geometry cases[] = {
      {7, 7, 3, 3, 1, 1, 1, 1, 1, 1},    // Inception's 3x3 same pool on a small plane
      {14, 20, 3, 3, 1, 1, 1, 1, 1, 1},  // wide enough for vector bodies and remainders
      {23, 37, 3, 3, 2, 1, 1, 1, 1, 1},  // ResNet's 3x3 / 2 stem pool
      {16, 33, 5, 5, 1, 1, 2, 2, 2, 2},  // 5x5 same
      {15, 19, 3, 3, 1, 2, 2, 2, 2, 2},  // dilated, same size
      {9, 18, 2, 3, 1, 1, 0, 1, 1, 0},   // asymmetric pads
      {11, 21, 3, 2, 3, 1, 1, 0, 0, 1},  // stride 3
      {12, 12, 2, 2, 2, 1, 0, 0, 0, 0},  // 2x2 / 2, no padding
      {6, 40, 1, 7, 1, 1, 0, 3, 0, 3},   // a 1 x 7 window
      {13, 17, 3, 3, 2, 2, 2, 2, 1, 2},  // stride 2 and dilated
      {10, 11, 4, 4, 3, 2, 3, 0, 2, 3},  // 4 x 4 window (no unrolled pass), stride 3, dilated
      {8, 9, 1, 1, 2, 1, 0, 0, 0, 0},    // 1 x 1 window, stride 2
      {5, 6, 2, 2, 1, 1, 2, 2, 2, 2},    // pads as wide as the window: windows with no input
      {3, 3, 3, 3, 1, 1, 1, 1, 1, 1},    // plane smaller than a vector
      {9, 70, 3, 3, 1, 1, 1, 1, 1, 1},   // rows of 64+ outputs: MaxPool's flat sweep
  };
  uint32_t seed = 7;
  for (const Geometry& g : cases) {
    CAPTURE(g.height);
    CAPTURE(g.width);
    CAPTURE(g.kernel_h);
    CAPTURE(g.stride);
    CAPTURE(g.dilation);
    const int64_t channels = 3;
    const auto x = awkward_values(2 * channels * g.height * g.width, seed++);
    check_same_bits(pool("MaxPool", g, false, channels, false, x),
                    pool("MaxPool", g, false, channels, true, x));
    const auto ties = zero_ties(2 * channels * g.height * g.width, seed++);
    check_same_bits(pool("MaxPool", g, false, channels, false, ties),
                    pool("MaxPool", g, false, channels, true, ties));
    if (g.dilation != 1) continue;
    for (bool include_pad : {false, true}) {
      CAPTURE(include_pad);
      check_same_bits(pool("AveragePool", g, include_pad, channels, false, x),
                      pool("AveragePool", g, include_pad, channels, true, x));
    }
  }
}

}  // namespace
}  // namespace onepool
