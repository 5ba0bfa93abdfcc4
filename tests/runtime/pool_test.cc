// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool CPU kernels: a sweep against naive
// pools written here, and official ONNX node-test cases with inline numbers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
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
using testing::string_attr;
using testing::values_of;

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 float tolerance = 1e-5f) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(actual[i] - expected[i]) <= tolerance * (1.0f + std::fabs(expected[i])));
  }
}

std::vector<float> iota_values(int count, float first = 1.0f) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) values[static_cast<size_t>(i)] = first + static_cast<float>(i);
  return values;
}

struct PoolCase {
  bool max = true;
  int64_t planes = 3;  // N * C with N = 1
  std::vector<int64_t> input, kernel, stride, dilation, pads;
  bool ceil_mode = false;
  bool count_include_pad = false;
};

// ONNX 1.12 output size: floor or ceil of (in + pads - extent) / stride, plus one.
std::vector<int64_t> pool_output(const PoolCase& c) {
  const size_t rank = c.input.size();
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t span =
        c.input[i] + c.pads[i] + c.pads[rank + i] - ((c.kernel[i] - 1) * c.dilation[i] + 1);
    out[i] = (c.ceil_mode ? (span + c.stride[i] - 1) / c.stride[i] : span / c.stride[i]) + 1;
  }
  return out;
}

// Direct pool over 1-D or 2-D (1-D treated as height 1). Average divisor: the taps inside the
// input, or with count_include_pad the window clipped to the padded input.
std::vector<float> naive_pool(const PoolCase& c, const std::vector<int64_t>& out,
                              const std::vector<float>& x) {
  const bool two_d = c.input.size() == 2;
  const size_t rank = c.input.size();
  const int64_t ih = two_d ? c.input[0] : 1, iw = c.input.back();
  const int64_t kh = two_d ? c.kernel[0] : 1, kw = c.kernel.back();
  const int64_t oh = two_d ? out[0] : 1, ow = out.back();
  const int64_t sh = two_d ? c.stride[0] : 1, sw = c.stride.back();
  const int64_t dh = two_d ? c.dilation[0] : 1, dw = c.dilation.back();
  const int64_t ph = two_d ? c.pads[0] : 0, pw = c.pads[rank - 1];
  const int64_t eh = two_d ? c.pads[rank] : 0, ew = c.pads[2 * rank - 1];
  std::vector<float> y;
  for (int64_t p = 0; p < c.planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
        int64_t count = 0;
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t yi = oy * sh - ph + ky * dh, xi = ox * sw - pw + kx * dw;
            if (yi < 0 || yi >= ih || xi < 0 || xi >= iw) continue;
            const double v = x[static_cast<size_t>((p * ih + yi) * iw + xi)];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        // A window wholly in the padding (ceil_mode) yields the lowest float (max) or 0 (average).
        if (count == 0) {
          y.push_back(c.max ? std::numeric_limits<float>::lowest() : 0.0f);
          continue;
        }
        if (c.count_include_pad) {
          const int64_t y0 = oy * sh - ph, x0 = ox * sw - pw;
          count = (std::min(y0 + kh, ih + eh) - y0) * (std::min(x0 + kw, iw + ew) - x0);
        }
        y.push_back(static_cast<float>(c.max ? best : sum / static_cast<double>(count)));
      }
  return y;
}

void check_pool_case(const PoolCase& c, uint32_t seed) {
  const std::vector<int64_t> out = pool_output(c);
  Shape x_shape{1, c.planes}, y_shape{1, c.planes};
  for (int64_t d : c.input) x_shape.push_back(d);
  for (int64_t d : out) y_shape.push_back(d);
  const auto x = random_values(x_shape.element_count(), seed);
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr(c.kernel));
  attributes.set("strides", ints_attr(c.stride));
  attributes.set("pads", ints_attr(c.pads));
  attributes.set("ceil_mode", int_attr(c.ceil_mode ? 1 : 0));
  if (c.max) attributes.set("dilations", ints_attr(c.dilation));
  if (!c.max) attributes.set("count_include_pad", int_attr(c.count_include_pad ? 1 : 0));
  auto result = run_single_node(c.max ? "MaxPool" : "AveragePool", {f32(x_shape, x)},
                                {OutputSpec{DType::kFloat32, y_shape}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  check_close(values_of<float>((*result)[0]), naive_pool(c, out, x));
}

// MaxPool and AveragePool against naive_pool over 1-D and 2-D, kernels 2x3 and 3x3, strides 1
// to 3, dilation 2 (MaxPool), pads 0/1 (asymmetric), ceil_mode on/off, count_include_pad on/off.
TEST_CASE("MaxPool and AveragePool match naive pools over a configuration sweep") {
  uint32_t seed = 1;
  for (bool max : {true, false}) {
    for (int64_t stride : {1, 2, 3}) {
      for (bool ceil_mode : {false, true}) {
        for (bool include_pad : {false, true}) {
          for (int64_t pad : {0, 1}) {
            PoolCase c;
            c.max = max;
            c.input = {8, 7};
            c.kernel = {3, 2};
            c.stride = {stride, stride};
            c.dilation = {max && stride == 2 ? 2 : 1, 1};
            c.pads = {pad, pad, 1, 0};
            c.ceil_mode = ceil_mode;
            c.count_include_pad = include_pad;
            CAPTURE(max);
            CAPTURE(stride);
            CAPTURE(ceil_mode);
            CAPTURE(include_pad);
            CAPTURE(pad);
            check_pool_case(c, seed++);
            PoolCase one_d = c;
            one_d.input = {10};
            one_d.kernel = {3};
            one_d.stride = {stride};
            one_d.dilation = {c.dilation[0]};
            one_d.pads = {pad, 1};
            check_pool_case(one_d, seed++);
          }
        }
      }
    }
  }
}

AttributeMap pool_attributes(std::vector<int64_t> kernel, std::vector<int64_t> strides) {
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr(std::move(kernel)));
  if (!strides.empty()) attributes.set("strides", ints_attr(std::move(strides)));
  return attributes;
}

std::vector<float> run_pool(const std::string& op, const Shape& x_shape,
                            const std::vector<float>& x, const Shape& y_shape,
                            const AttributeMap& attributes) {
  auto result =
      run_single_node(op, {f32(x_shape, x)}, {OutputSpec{DType::kFloat32, y_shape}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

// Official ONNX node tests on x = 1..16 as [1,1,4,4] or 1..25 as [1,1,5,5]:
//   test_maxpool_2d_ceil: 3x3, strides 2, ceil_mode -> [11,12,15,16]
//   test_averagepool_2d_ceil: same -> [6,7.5,12,13.5]
//   test_maxpool_2d_dilations: 2x2, dilations 2 -> [11,12,15,16]
//   test_maxpool_2d_precomputed_pads: 5x5, pads 2 -> 5x5 of window maxima
//   test_averagepool_2d_precomputed_pads_count_include_pad: 5x5, pads 2, divisor 25
//   test_averagepool_2d_precomputed_same_upper: 3x3, strides 2, SAME_UPPER -> 3x3
TEST_CASE("Pooling reproduces the official ONNX node tests") {
  const Shape x4{1, 1, 4, 4}, x5{1, 1, 5, 5};
  AttributeMap ceil = pool_attributes({3, 3}, {2, 2});
  ceil.set("ceil_mode", int_attr(1));
  check_close(run_pool("MaxPool", x4, iota_values(16), Shape{1, 1, 2, 2}, ceil), {11, 12, 15, 16});
  check_close(run_pool("AveragePool", x4, iota_values(16), Shape{1, 1, 2, 2}, ceil),
              {6, 7.5, 12, 13.5});

  AttributeMap dilated = pool_attributes({2, 2}, {1, 1});
  dilated.set("dilations", ints_attr({2, 2}));
  check_close(run_pool("MaxPool", x4, iota_values(16), Shape{1, 1, 2, 2}, dilated),
              {11, 12, 15, 16});

  AttributeMap padded = pool_attributes({5, 5}, {});
  padded.set("pads", ints_attr({2, 2, 2, 2}));
  check_close(run_pool("MaxPool", x5, iota_values(25), Shape{1, 1, 5, 5}, padded),
              {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
               25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25});
  padded.set("count_include_pad", int_attr(1));
  check_close(
      run_pool("AveragePool", x5, iota_values(25), Shape{1, 1, 5, 5}, padded),
      {2.52f, 3.6f, 4.8f,  4.08f, 3.24f, 4.56f,  6.4f,  8.4f,  7.04f, 5.52f, 7.2f,  10,   13,
       10.8f, 8.4f, 6.96f, 9.6f,  12.4f, 10.24f, 7.92f, 6.12f, 8.4f,  10.8f, 8.88f, 6.84f});

  AttributeMap same = pool_attributes({3, 3}, {2, 2});
  same.set("auto_pad", string_attr("SAME_UPPER"));
  check_close(run_pool("AveragePool", x5, iota_values(25), Shape{1, 1, 3, 3}, same),
              {4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22});
}

// test_maxpool_with_argmax_2d_precomputed_strides: x = 1..25 as [1,1,5,5], 2x2, strides 2,
// storage_order 1 (column-major indices) -> Y = [7,9,17,19], Indices = [6,16,8,18]. With
// storage_order 0 the indices are row-major: [6,8,16,18].
TEST_CASE("MaxPool writes row- and column-major Indices") {
  AttributeMap attributes = pool_attributes({2, 2}, {2, 2});
  for (int64_t order : {1, 0}) {
    attributes.set("storage_order", int_attr(order));
    auto result = run_single_node("MaxPool", {f32(Shape{1, 1, 5, 5}, iota_values(25))},
                                  {OutputSpec{DType::kFloat32, Shape{1, 1, 2, 2}},
                                   OutputSpec{DType::kInt64, Shape{1, 1, 2, 2}}},
                                  attributes);
    REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
    check_close(values_of<float>((*result)[0]), {7, 9, 17, 19});
    const std::vector<int64_t> expected =
        order == 1 ? std::vector<int64_t>{6, 16, 8, 18} : std::vector<int64_t>{6, 8, 16, 18};
    CHECK(values_of<int64_t>((*result)[1]) == expected);
  }
}

// ceil_mode with a last window that lies wholly in the end padding: x = 1..4 as [1,1,4],
// kernel 1, stride 2, pads [0,1]. ONNX 1.12 shape inference says ceil(4/2)+1 = 3 outputs
// (windows at 0, 2, 4); newer ONNX and PyTorch drop the window at 4 and say 2. The kernel accepts
// either: 2 outputs = [1,3]; with 3 the first two are [1,3]. A graph claiming 4 is rejected,
// naming the 1.12 shape [1,1,3] and axis 2.
TEST_CASE("MaxPool accepts both ceil_mode output conventions") {
  AttributeMap attributes = pool_attributes({1}, {2});
  attributes.set("pads", ints_attr({0, 1}));
  attributes.set("ceil_mode", int_attr(1));
  check_close(run_pool("MaxPool", Shape{1, 1, 4}, iota_values(4), Shape{1, 1, 2}, attributes),
              {1, 3});
  auto three = run_single_node("MaxPool", {f32(Shape{1, 1, 4}, iota_values(4))},
                               {OutputSpec{DType::kFloat32, Shape{1, 1, 3}}}, attributes);
  REQUIRE_MESSAGE(three.has_value(), three.status().to_string());
  const auto values = values_of<float>((*three)[0]);
  CHECK(values[0] == 1.0f);
  CHECK(values[1] == 3.0f);
  auto wrong = run_single_node("MaxPool", {f32(Shape{1, 1, 4}, iota_values(4))},
                               {OutputSpec{DType::kFloat32, Shape{1, 1, 4}}}, attributes);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.status().message().find("expected shape [1,1,3]") != std::string::npos);
  CHECK(wrong.status().message().find("axis 2") != std::string::npos);
}

// test_globalaveragepool / test_globalmaxpool use 75 random values; here x = 1..24 as
// [2,3,2,2]: plane means are 2.5, 6.5, ..., 22.5 and plane maxima 4, 8, ..., 24. A 3-D plane
// [1,1,2,2,2] of 1..8 has mean 4.5 and max 8.
TEST_CASE("GlobalAveragePool and GlobalMaxPool reduce each plane") {
  check_close(
      run_pool("GlobalAveragePool", Shape{2, 3, 2, 2}, iota_values(24), Shape{2, 3, 1, 1}, {}),
      {2.5, 6.5, 10.5, 14.5, 18.5, 22.5});
  check_close(run_pool("GlobalMaxPool", Shape{2, 3, 2, 2}, iota_values(24), Shape{2, 3, 1, 1}, {}),
              {4, 8, 12, 16, 20, 24});
  check_close(
      run_pool("GlobalAveragePool", Shape{1, 1, 2, 2, 2}, iota_values(8), Shape{1, 1, 1, 1, 1}, {}),
      {4.5});
  check_close(
      run_pool("GlobalMaxPool", Shape{1, 1, 2, 2, 2}, iota_values(8), Shape{1, 1, 1, 1, 1}, {}),
      {8});
}

// Errors: AveragePool with dilations 2 is unsupported (opsets <= 17 have none); a missing
// kernel_shape is an invalid model; a GlobalAveragePool output of [1,3,2,2] names [1,3,1,1].
TEST_CASE("Pooling reports unsupported attributes and wrong shapes") {
  AttributeMap dilated = pool_attributes({2, 2}, {});
  dilated.set("dilations", ints_attr({2, 2}));
  auto average = run_single_node("AveragePool", {f32(Shape{1, 1, 4, 4}, iota_values(16))},
                                 {OutputSpec{DType::kFloat32, Shape{1, 1, 2, 2}}}, dilated);
  REQUIRE_FALSE(average.has_value());
  CHECK(average.status().code() == StatusCode::kUnsupported);
  auto no_kernel = run_single_node("MaxPool", {f32(Shape{1, 1, 4, 4}, iota_values(16))},
                                   {OutputSpec{DType::kFloat32, Shape{1, 1, 2, 2}}});
  REQUIRE_FALSE(no_kernel.has_value());
  CHECK(no_kernel.status().message().find("kernel_shape") != std::string::npos);
  auto global = run_single_node("GlobalAveragePool", {f32(Shape{1, 3, 2, 2}, iota_values(12))},
                                {OutputSpec{DType::kFloat32, Shape{1, 3, 2, 2}}});
  REQUIRE_FALSE(global.has_value());
  CHECK(global.status().message().find("expected shape [1,3,1,1]") != std::string::npos);
}

}  // namespace
}  // namespace onepool
