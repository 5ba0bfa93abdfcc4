// Quantized CPU kernels: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// QLinearMatMul, ConvInteger, QLinearConv. Hand-computed cases (ties to even, saturation at both
// ends, per-axis scales and zero points) and integer products checked against plain loops.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput u8(Shape shape, const std::vector<uint8_t>& values) {
  return {make_host_tensor(DType::kUInt8, shape, values), false};
}
TestInput s8(Shape shape, const std::vector<int8_t>& values) {
  return {make_host_tensor(DType::kInt8, shape, values), false};
}
TestInput s32(Shape shape, const std::vector<int32_t>& values) {
  return {make_host_tensor(DType::kInt32, shape, values), false};
}

AttributeMap axis_attributes(int64_t axis) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  return attributes;
}

template <class T>
std::vector<T> run_one(const std::string& op, const std::vector<std::optional<TestInput>>& inputs,
                       DType dtype, Shape shape, const AttributeMap& attributes = {}) {
  auto outputs = run_single_node(op, inputs, {{dtype, shape}}, attributes);
  REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
  return values_of<T>((*outputs)[0]);
}

std::vector<int8_t> as_int8(const std::vector<uint8_t>& bytes) {
  std::vector<int8_t> values(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) values[i] = static_cast<int8_t>(bytes[i]);
  return values;
}

}  // namespace

// uint8, scale 1, no zero point: ties go to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 3.5 -> 4,
// -0.5 -> 0), and 300 / -5 saturate to 255 / 0.
TEST_CASE("QuantizeLinear uint8 rounds ties to even and saturates") {
  const auto y = run_one<uint8_t>(
      "QuantizeLinear", {f32({7}, {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, 300.0f, -5.0f}), f32({}, {1.0f})},
      DType::kUInt8, {7});
  CHECK(y == std::vector<uint8_t>{0, 2, 2, 4, 0, 255, 0});
}

// uint8, scale 2, zero point 128: 5/2 = 2.5 -> 2 -> 130; 7/2 = 3.5 -> 4 -> 132;
// -3/2 = -1.5 -> -2 -> 126; 1000/2 + 128 -> 255; -1000/2 + 128 -> 0.
TEST_CASE("QuantizeLinear uint8 with a zero point") {
  const auto y = run_one<uint8_t>(
      "QuantizeLinear",
      {f32({5}, {5.0f, 7.0f, -3.0f, 1000.0f, -1000.0f}), f32({}, {2.0f}), u8({}, {128})},
      DType::kUInt8, {5});
  CHECK(y == std::vector<uint8_t>{130, 132, 126, 255, 0});
}

// int8, scale 1, zero point -1: 2.5 -> 2 - 1 = 1; 3.5 -> 4 - 1 = 3; -2.5 -> -2 - 1 = -3;
// -3.5 -> -4 - 1 = -5; 128.5 -> 128 - 1 = 127; 129 -> 127 (saturated); -127.5 -> -128 - 1 ->
// -128 (saturated); -300 -> -128.
TEST_CASE("QuantizeLinear int8 rounds ties to even and saturates at both ends") {
  const auto y =
      run_one<int8_t>("QuantizeLinear",
                      {f32({8}, {2.5f, 3.5f, -2.5f, -3.5f, 128.5f, 129.0f, -127.5f, -300.0f}),
                       f32({}, {1.0f}), s8({}, {-1})},
                      DType::kInt8, {8});
  CHECK(y == std::vector<int8_t>{1, 3, -3, -5, 127, 127, -128, -128});
}

// Per axis 1 of [2,3]: scales [1,2,4], zero points [0,10,20].
// Row 0: 1/1 + 0 = 1; 2/2 + 10 = 11; 4/4 + 20 = 21. Row 1: 3; 6/2 + 10 = 13; 10/4 = 2.5 -> 2 -> 22.
TEST_CASE("QuantizeLinear per axis (default axis 1)") {
  const auto y = run_one<uint8_t>(
      "QuantizeLinear",
      {f32({2, 3}, {1, 2, 4, 3, 6, 10}), f32({3}, {1.0f, 2.0f, 4.0f}), u8({3}, {0, 10, 20})},
      DType::kUInt8, {2, 3});
  CHECK(y == std::vector<uint8_t>{1, 11, 21, 3, 13, 22});
}

// Per axis 0 of [2,3], int8, no zero point: scales [1, 0.5].
// Row 0: 1, -1, 2.5 -> 2. Row 1: 2, -2, 5.
TEST_CASE("QuantizeLinear per axis 0, int8, no zero point") {
  const auto y = run_one<int8_t>(
      "QuantizeLinear",
      {f32({2, 3}, {1, -1, 2.5f, 1, -1, 2.5f}), f32({2}, {1.0f, 0.5f}), std::nullopt}, DType::kInt8,
      {2, 3}, axis_attributes(0));
  CHECK(y == std::vector<int8_t>{1, -1, 2, 2, -2, 5});
}

// Per axis 1 of [2,2]: scales [0.5, 2], zero points [10, 0].
// (12 - 10) * 0.5 = 1; 3 * 2 = 6; (0 - 10) * 0.5 = -5; 255 * 2 = 510.
TEST_CASE("DequantizeLinear uint8 per axis") {
  const auto y = run_one<float>(
      "DequantizeLinear", {u8({2, 2}, {12, 3, 0, 255}), f32({2}, {0.5f, 2.0f}), u8({2}, {10, 0})},
      DType::kFloat32, {2, 2});
  CHECK(y == std::vector<float>{1.0f, 6.0f, -5.0f, 510.0f});
}

// int8, scale 0.25, zero point -2: (-128 + 2) * 0.25 = -31.5; (127 + 2) * 0.25 = 32.25; 0.
TEST_CASE("DequantizeLinear int8 with a zero point") {
  const auto y =
      run_one<float>("DequantizeLinear", {s8({3}, {-128, 127, -2}), f32({}, {0.25f}), s8({}, {-2})},
                     DType::kFloat32, {3});
  CHECK(y == std::vector<float>{-31.5f, 32.25f, 0.0f});
}

// int32 (a bias), scale 2, no zero point: -5 -> -10; 100000 -> 200000.
TEST_CASE("DequantizeLinear int32") {
  const auto y = run_one<float>("DequantizeLinear", {s32({2}, {-5, 100000}), f32({}, {2.0f})},
                                DType::kFloat32, {2});
  CHECK(y == std::vector<float>{-10.0f, 200000.0f});
}

// x = [0, 2, -3]: range [-3, 2], scale = 5 / 255, zero point = round(3 / scale) = 153;
// y = [153, round(2 / scale) + 153 = 102 + 153 = 255, 0].
// x all zero: scale 0, zero point 0, y 0 (no division by zero).
TEST_CASE("DynamicQuantizeLinear") {
  const std::vector<OutputSpec> outputs{
      {DType::kUInt8, {3}}, {DType::kFloat32, {}}, {DType::kUInt8, {}}};
  auto result = run_single_node("DynamicQuantizeLinear", {f32({3}, {0.0f, 2.0f, -3.0f})}, outputs);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<uint8_t>((*result)[0]) == std::vector<uint8_t>{153, 255, 0});
  CHECK(values_of<float>((*result)[1])[0] == 5.0f / 255.0f);
  CHECK(values_of<uint8_t>((*result)[2])[0] == 153);

  auto zeros = run_single_node("DynamicQuantizeLinear", {f32({3}, {0.0f, 0.0f, 0.0f})}, outputs);
  REQUIRE_MESSAGE(zeros.has_value(), zeros.status().to_string());
  CHECK(values_of<uint8_t>((*zeros)[0]) == std::vector<uint8_t>{0, 0, 0});
  CHECK(values_of<float>((*zeros)[1])[0] == 0.0f);
  CHECK(values_of<uint8_t>((*zeros)[2])[0] == 0);
}

// 37 values (two blocks of the 16-lane range and a tail of 5): the minimum -4 in block 1's lane 5
// and the maximum 6 in the tail give scale 10 / 255 and zero point round(4 / scale) = 102. A NaN
// anywhere (here block 0's lane 7) makes the scale NaN and the zero point 0, as np.min / np.max
// and the spec's formula give.
TEST_CASE("DynamicQuantizeLinear finds the range in every lane and the tail") {
  std::vector<float> x(37);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i);
  x[21] = -4.0f;
  x[35] = 6.0f;
  const std::vector<OutputSpec> outputs{
      {DType::kUInt8, {37}}, {DType::kFloat32, {}}, {DType::kUInt8, {}}};
  auto result = run_single_node("DynamicQuantizeLinear", {f32({37}, x)}, outputs);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<float>((*result)[1])[0] == 10.0f / 255.0f);
  CHECK(values_of<uint8_t>((*result)[2])[0] == 102);
  CHECK(values_of<uint8_t>((*result)[0])[21] == 0);
  CHECK(values_of<uint8_t>((*result)[0])[35] == 255);

  x[7] = std::numeric_limits<float>::quiet_NaN();
  auto nan = run_single_node("DynamicQuantizeLinear", {f32({37}, x)}, outputs);
  REQUIRE_MESSAGE(nan.has_value(), nan.status().to_string());
  CHECK(std::isnan(values_of<float>((*nan)[1])[0]));
  CHECK(values_of<uint8_t>((*nan)[2])[0] == 0);
}

// A = [[1,2],[3,4]] - 1 = [[0,1],[2,3]]; B = [[1,0],[0,1]] (int8, no zero point): Y = A - 1.
TEST_CASE("MatMulInteger hand case") {
  const auto y = run_one<int32_t>("MatMulInteger",
                                  {u8({2, 2}, {1, 2, 3, 4}), s8({2, 2}, {1, 0, 0, 1}), u8({}, {1})},
                                  DType::kInt32, {2, 2});
  CHECK(y == std::vector<int32_t>{0, 1, 2, 3});
}

// A [2,3,5] uint8 with a per-row zero point [3] times a shared B [5,4] int8 with a per-column
// zero point [4], against the plain triple loop.
TEST_CASE("MatMulInteger batched, per-row and per-column zero points, vs a triple loop") {
  const int64_t batch = 2, m = 3, k = 5, n = 4;
  const auto a = random_bytes(batch * m * k, 1);
  const auto b = as_int8(random_bytes(k * n, 2));
  const std::vector<uint8_t> a_zero{7, 128, 250};
  const std::vector<int8_t> b_zero{-3, 0, 5, -128};
  const auto y = run_one<int32_t>(
      "MatMulInteger", {u8({batch, m, k}, a), s8({k, n}, b), u8({m}, a_zero), s8({n}, b_zero)},
      DType::kInt32, {batch, m, n});
  REQUIRE(y.size() == static_cast<size_t>(batch * m * n));
  for (int64_t p = 0; p < batch; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int32_t expected = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          expected +=
              (int32_t{a[static_cast<size_t>((p * m + i) * k + kk)]} -
               a_zero[static_cast<size_t>(i)]) *
              (int32_t{b[static_cast<size_t>(kk * n + j)]} - b_zero[static_cast<size_t>(j)]);
        }
        INFO("batch ", p, " row ", i, " column ", j);
        CHECK(y[static_cast<size_t>((p * m + i) * n + j)] == expected);
      }
    }
  }
}

// a = [10, 4], b = [[1,1],[0,1]]: acc = [10, 14]; multiplier 0.5 * 1 / 2 = 0.25:
// 2.5 -> 2 and 3.5 -> 4 (ties to even), y zero point 0.
// int8 output, y_scale 0.1: a = [-100, 100] (int8), acc = [-100, 0], multiplier 0.5 / 0.1 = 5:
// -500 saturates to -128, 0 stays 0.
TEST_CASE("QLinearMatMul rounds ties to even and saturates") {
  const auto y =
      run_one<uint8_t>("QLinearMatMul",
                       {u8({1, 2}, {10, 4}), f32({}, {0.5f}), u8({}, {0}), u8({2, 2}, {1, 1, 0, 1}),
                        f32({}, {1.0f}), u8({}, {0}), f32({}, {2.0f}), u8({}, {0})},
                       DType::kUInt8, {1, 2});
  CHECK(y == std::vector<uint8_t>{2, 4});
  const auto z = run_one<int8_t>(
      "QLinearMatMul",
      {s8({1, 2}, {-100, 100}), f32({}, {0.5f}), s8({}, {0}), u8({2, 2}, {1, 1, 0, 1}),
       f32({}, {1.0f}), u8({}, {0}), f32({}, {0.1f}), s8({}, {0})},
      DType::kInt8, {1, 2});
  CHECK(z == std::vector<int8_t>{-128, 0});
}

// The ONNX convinteger_with_padding case: x = 2..10 (3x3) with zero point 1, w = ones (2x2),
// pads 1: the padded taps contribute 0, so y is the 2x2 box sum of x - 1 = 1..9.
TEST_CASE("ConvInteger with padding") {
  AttributeMap attributes;
  attributes.set("pads", ints_attr({1, 1, 1, 1}));
  const auto y = run_one<int32_t>(
      "ConvInteger",
      {u8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10}), u8({1, 1, 2, 2}, {1, 1, 1, 1}), u8({}, {1})},
      DType::kInt32, {1, 1, 4, 4}, attributes);
  CHECK(y == std::vector<int32_t>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9});
}

// Grouped (2), strided (2), padded (1) ConvInteger with int8 weights and a per-output-channel
// weight zero point, against a plain loop over the definition.
TEST_CASE("ConvInteger grouped and strided, per-channel w zero point, vs a plain loop") {
  const int64_t c = 4, m = 4, h = 5, w = 6, kh = 3, kw = 2, group = 2, oh = 3, ow = 4;
  const auto x = random_bytes(c * h * w, 3);
  const auto weights = as_int8(random_bytes(m * (c / group) * kh * kw, 4));
  const std::vector<int8_t> w_zero{1, -2, 0, 100};
  const uint8_t x_zero = 100;
  AttributeMap attributes;
  attributes.set("group", int_attr(group));
  attributes.set("strides", ints_attr({2, 2}));
  attributes.set("pads", ints_attr({1, 1, 1, 1}));
  const auto y = run_one<int32_t>(
      "ConvInteger",
      {u8({1, c, h, w}, x), s8({m, c / group, kh, kw}, weights), u8({}, {x_zero}), s8({m}, w_zero)},
      DType::kInt32, {1, m, oh, ow}, attributes);
  REQUIRE(y.size() == static_cast<size_t>(m * oh * ow));
  for (int64_t oc = 0; oc < m; ++oc) {
    const int64_t g = oc / (m / group);
    for (int64_t r = 0; r < oh; ++r) {
      for (int64_t s = 0; s < ow; ++s) {
        int32_t expected = 0;
        for (int64_t ic = 0; ic < c / group; ++ic) {
          for (int64_t i = 0; i < kh; ++i) {
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t ih = r * 2 - 1 + i, iw = s * 2 - 1 + j;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              const int32_t xv = x[static_cast<size_t>(((g * (c / group) + ic) * h + ih) * w + iw)];
              const int32_t wv =
                  weights[static_cast<size_t>(((oc * (c / group) + ic) * kh + i) * kw + j)];
              expected += (xv - x_zero) * (wv - w_zero[static_cast<size_t>(oc)]);
            }
          }
        }
        INFO("channel ", oc, " at ", r, ",", s);
        CHECK(y[static_cast<size_t>((oc * oh + r) * ow + s)] == expected);
      }
    }
  }
}

// x = [10,20,30,40] (x_scale 0.5), w = [2] (scale 1), bias 2: acc = [22, 42, 62, 82];
// multiplier 0.5 * 1 / 2 = 0.25: 5.5 -> 6, 10.5 -> 10, 15.5 -> 16, 20.5 -> 20 (ties to even);
// plus y zero point 5: [11, 15, 21, 25].
TEST_CASE("QLinearConv with bias, ties to even") {
  const auto y = run_one<uint8_t>(
      "QLinearConv",
      {u8({1, 1, 2, 2}, {10, 20, 30, 40}), f32({}, {0.5f}), u8({}, {0}), u8({1, 1, 1, 1}, {2}),
       f32({1}, {1.0f}), u8({1}, {0}), f32({}, {2.0f}), u8({}, {5}), s32({1}, {2})},
      DType::kUInt8, {1, 1, 2, 2});
  CHECK(y == std::vector<uint8_t>{11, 15, 21, 25});
}

// A scale that is neither one element nor one per channel is refused at prepare time.
TEST_CASE("QuantizeLinear rejects a scale of the wrong size") {
  auto result =
      run_single_node("QuantizeLinear", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1.0f, 1.0f})},
                      {{DType::kUInt8, {2, 3}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().to_string().find("one per channel") != std::string::npos);
}
