// The direct depthwise Conv (group == channels): its K x K row kernels (K = 3 and 5, stride 1
// and 2) and the generic path, against a naive double-precision loop written here, including
// rows narrower than the kernel, asymmetric pads and the fused LeakyRelu epilogue.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool {
namespace {

using testing::f32;
using testing::float_attr;
using testing::int_attr;
using testing::ints_attr;
using testing::OutputSpec;
using testing::random_values;
using testing::run_single_node;
using testing::string_attr;
using testing::values_of;

constexpr float kLeakyAlpha = 0.1f;

struct DepthwiseCase {
  int64_t channels = 3, height = 1, width = 1, kernel = 3, stride = 1, stride_h = 0;  // 0: stride
  int64_t row_stride() const { return stride_h > 0 ? stride_h : stride; }
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_height() const { return (height + pad_top + pad_bottom - kernel) / row_stride() + 1; }
  int64_t out_width() const { return (width + pad_left + pad_right - kernel) / stride + 1; }
};

// y[c] = LeakyRelu(bias[c] + sum over the window of x[c] * w[c]), zero padding, in double.
std::vector<float> naive_depthwise(const DepthwiseCase& c, const std::vector<float>& x,
                                   const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t oh = c.out_height(), ow = c.out_width(), k = c.kernel;
  std::vector<float> y(static_cast<size_t>(c.channels * oh * ow));
  for (int64_t ch = 0; ch < c.channels; ++ch)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double sum = b[static_cast<size_t>(ch)];
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx) {
            const int64_t iy = oy * c.row_stride() - c.pad_top + ky,
                          ix = ox * c.stride - c.pad_left + kx;
            if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
            sum += double{x[static_cast<size_t>((ch * c.height + iy) * c.width + ix)]} *
                   w[static_cast<size_t>((ch * k + ky) * k + kx)];
          }
        const float value = static_cast<float>(sum);
        y[static_cast<size_t>((ch * oh + oy) * ow + ox)] = value >= 0 ? value : kLeakyAlpha * value;
      }
  return y;
}

void check_depthwise(const DepthwiseCase& c, uint32_t seed) {
  const Shape x_shape{1, c.channels, c.height, c.width};
  const Shape w_shape{c.channels, 1, c.kernel, c.kernel};
  const auto x = random_values(x_shape.element_count(), seed);
  const auto w = random_values(w_shape.element_count(), seed + 1);
  const auto b = random_values(c.channels, seed + 2);
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr({c.kernel, c.kernel}));
  attributes.set("strides", ints_attr({c.row_stride(), c.stride}));
  attributes.set("pads", ints_attr({c.pad_top, c.pad_left, c.pad_bottom, c.pad_right}));
  attributes.set("group", int_attr(c.channels));
  attributes.set("onepool_activation", string_attr("LeakyRelu"));
  attributes.set("onepool_alpha", float_attr(kLeakyAlpha));
  const Shape y_shape{1, c.channels, c.out_height(), c.out_width()};
  auto result = run_single_node(
      "Conv", {f32(x_shape, x), f32(w_shape, w, true), f32(Shape{c.channels}, b, true)},
      {OutputSpec{DType::kFloat32, y_shape}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  const auto actual = values_of<float>((*result)[0]);
  const auto expected = naive_depthwise(c, x, w, b);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(actual[i] - expected[i]) <= 1e-5f * (1.0f + std::fabs(expected[i])));
  }
}

// Kernels 3 and 5 (the specialized rows), 4 (generic path); strides 1 and 2, equal on both axes
// or (1, 2) and (2, 1) (H, W); no pad, "same"
// pad and asymmetric pads; widths from 1 (every column an edge) to 33 (a vector body plus a
// tail); heights 1 to 9. Every output is within 1e-5 relative of the double loop.
TEST_CASE("Depthwise Conv matches the naive loop over kernels, strides, pads and sizes") {
  uint32_t seed = 1;
  for (int64_t kernel : {3, 4, 5}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t stride_h : {int64_t{0}, 3 - stride}) {
        for (int64_t pad_case = 0; pad_case < 3; ++pad_case) {
          for (int64_t width : {1, 2, 5, 16, 33}) {
            for (int64_t height : {1, 4, 9}) {
              DepthwiseCase c;
              c.kernel = kernel;
              c.stride = stride;
              c.stride_h = stride_h;
              c.width = width;
              c.height = height;
              const int64_t half = kernel / 2;
              if (pad_case == 1) c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = half;
              if (pad_case == 2) {
                c.pad_top = c.pad_left = half;
                c.pad_bottom = c.pad_right = kernel - 1 - half + 1;
              }
              if (height + c.pad_top + c.pad_bottom < kernel ||
                  width + c.pad_left + c.pad_right < kernel) {
                continue;  // the window does not fit: an invalid model
              }
              CAPTURE(kernel);
              CAPTURE(stride);
              CAPTURE(stride_h);
              CAPTURE(pad_case);
              CAPTURE(width);
              CAPTURE(height);
              check_depthwise(c, seed++);
            }
          }
        }
      }
    }
  }
}

// 2 channels, 1x3 input, 3x3 kernel of ones, pads 1, bias 0: each output sums its neighbours
// (x = [1, 2, 3] -> [3, 6, 5]); channel 1 has x = [-1, -2, -3] -> LeakyRelu 0.1 -> [-0.3,
// -0.6, -0.5].
TEST_CASE("Depthwise Conv 3x3 with padding on a single row") {
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr({3, 3}));
  attributes.set("pads", ints_attr({1, 1, 1, 1}));
  attributes.set("group", int_attr(2));
  attributes.set("onepool_activation", string_attr("LeakyRelu"));
  attributes.set("onepool_alpha", float_attr(kLeakyAlpha));
  auto result = run_single_node("Conv",
                                {f32(Shape{1, 2, 1, 3}, {1, 2, 3, -1, -2, -3}),
                                 f32(Shape{2, 1, 3, 3}, std::vector<float>(18, 1.0f), true)},
                                {OutputSpec{DType::kFloat32, Shape{1, 2, 1, 3}}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  const auto y = values_of<float>((*result)[0]);
  const std::vector<float> expected{3, 6, 5, -0.3f, -0.6f, -0.5f};
  REQUIRE(y.size() == expected.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(expected[i]).epsilon(1e-6));
}

}  // namespace
}  // namespace onepool
