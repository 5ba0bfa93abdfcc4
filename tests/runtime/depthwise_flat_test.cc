// The small-plane path (planes up to 4096 floats with their padding, every output summing all
// 9 taps, the padding's zeros included), the flat-plane path of larger depthwise 3x3 "same"
// convolutions and the row path of 5x5 ones (conv_depthwise.cc) sum each output in the generic
// path's order (a padding tap adds w * 0, which changes no sum of finite weights), so all give
// the same bits: the
// same data as [1, 2C, H, W] with each channel's weights twice (flat path) and as [1, C, 2, H, W]
// with a depth-1 window (the generic path), with NaN and signed zeros in the input, on planes from
// 5x5 to 40x23.
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

std::vector<float> depthwise(const Shape& x_shape, const std::vector<float>& x,
                             const Shape& w_shape, const std::vector<float>& w,
                             const std::vector<float>& b, const std::vector<int64_t>& kernel,
                             const std::vector<int64_t>& pads,
                             const std::vector<int64_t>& strides = {},
                             const Shape* y_shape = nullptr) {
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr(kernel));
  attributes.set("pads", ints_attr(pads));
  if (!strides.empty()) attributes.set("strides", ints_attr(strides));
  attributes.set("group", int_attr(w_shape[0]));
  auto result = run_single_node(
      "Conv", {f32(x_shape, x), f32(w_shape, w, true), f32(Shape{w_shape[0]}, b, true)},
      {OutputSpec{DType::kFloat32, y_shape != nullptr ? *y_shape : x_shape}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

// One plane pair's data: x with signed zeros every `zero_step` and a NaN; each channel's weights
// and bias once (the generic [1, C, 2, H, W] run) and twice (the flat [1, 2C, H, W] run).
struct PlanePair {
  std::vector<float> x, w, b, w_twice, b_twice;
};

PlanePair plane_pair(int64_t channels, int64_t k, int64_t height, int64_t width, size_t zero_step,
                     uint32_t& seed) {
  PlanePair data;
  data.x = random_values(2 * channels * height * width, seed++);
  for (size_t i = 0; i < data.x.size(); i += zero_step) data.x[i] = (i % 2 == 0) ? 0.0f : -0.0f;
  data.x[data.x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
  data.w = random_values(channels * k * k, seed++);
  data.b = random_values(channels, seed++);
  for (int64_t c = 0; c < channels; ++c) {
    for (int copy = 0; copy < 2; ++copy) {
      data.w_twice.insert(data.w_twice.end(), data.w.begin() + c * k * k,
                          data.w.begin() + (c + 1) * k * k);
      data.b_twice.push_back(data.b[static_cast<size_t>(c)]);
    }
  }
  return data;
}

TEST_CASE("flat-plane depthwise convolutions give the generic path's bits") {
  const int64_t channels = 3;
  uint32_t seed = 40;
  for (const int64_t k : {3, 5}) {
    for (const auto& size :
         {std::pair<int64_t, int64_t>{7, 7}, {5, 5}, {14, 14}, {23, 40}, {9, 17}}) {
      const int64_t height = size.first;
      const int64_t width = size.second;
      CAPTURE(k);
      CAPTURE(height);
      CAPTURE(width);
      const PlanePair data = plane_pair(channels, k, height, width, 29, seed);
      const auto& [x, w, b, w_twice, b_twice] = data;
      const int64_t half = k / 2;
      const auto flat =
          depthwise(Shape{1, 2 * channels, height, width}, x, Shape{2 * channels, 1, k, k}, w_twice,
                    b_twice, {k, k}, {half, half, half, half});
      const auto generic =
          depthwise(Shape{1, channels, 2, height, width}, x, Shape{channels, 1, 1, k, k}, w, b,
                    {1, k, k}, {0, half, half, 0, half, half});
      REQUIRE(flat.size() == generic.size());
      for (size_t i = 0; i < flat.size(); ++i) {
        CAPTURE(i);
        if (std::isnan(generic[i])) {
          CHECK(std::isnan(flat[i]));
        } else {
          CHECK(std::memcmp(&flat[i], &generic[i], sizeof(float)) == 0);
        }
      }
    }
  }
}

// Stride 2 (MobileNet's downsampling depthwise convolutions): the small-plane path's column
// phases against the generic path, planes from 5x5 to 56x56 (the largest that fits the small
// plane) with NaN and signed zeros, K = 3 and 5, pad K / 2.
TEST_CASE("stride-2 small-plane depthwise convolutions give the generic path's bits") {
  const int64_t channels = 3;
  uint32_t seed = 90;
  for (const int64_t k : {3, 5}) {
    for (const auto& size : {std::pair<int64_t, int64_t>{7, 7},
                             {5, 5},
                             {14, 14},
                             {15, 9},
                             {28, 28},
                             {56, 56},
                             {23, 40}}) {
      const int64_t height = size.first;
      const int64_t width = size.second;
      CAPTURE(k);
      CAPTURE(height);
      CAPTURE(width);
      const PlanePair data = plane_pair(channels, k, height, width, 31, seed);
      const auto& [x, w, b, w_twice, b_twice] = data;
      const int64_t half = k / 2;
      const int64_t out_h = (height + 2 * half - k) / 2 + 1;
      const int64_t out_w = (width + 2 * half - k) / 2 + 1;
      const Shape flat_y{1, 2 * channels, out_h, out_w};
      const Shape generic_y{1, channels, 2, out_h, out_w};
      const auto flat =
          depthwise(Shape{1, 2 * channels, height, width}, x, Shape{2 * channels, 1, k, k}, w_twice,
                    b_twice, {k, k}, {half, half, half, half}, {2, 2}, &flat_y);
      const auto generic =
          depthwise(Shape{1, channels, 2, height, width}, x, Shape{channels, 1, 1, k, k}, w, b,
                    {1, k, k}, {0, half, half, 0, half, half}, {1, 2, 2}, &generic_y);
      REQUIRE(flat.size() == generic.size());
      int mismatches = 0;
      for (size_t i = 0; i < flat.size(); ++i) {
        const bool same = std::isnan(generic[i])
                              ? std::isnan(flat[i])
                              : std::memcmp(&flat[i], &generic[i], sizeof(float)) == 0;
        mismatches += same ? 0 : 1;
      }
      CHECK(mismatches == 0);
    }
  }
}

}  // namespace
}  // namespace onepool
