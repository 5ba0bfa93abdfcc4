// BatchNormalization, LayerNormalization and InstanceNormalization CPU kernels against naive
// formulas written here and official ONNX node-test cases with inline numbers.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool {
namespace {

using testing::f32;
using testing::float_attr;
using testing::int_attr;
using testing::OutputSpec;
using testing::random_values;
using testing::run_single_node;
using testing::values_of;

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 float tolerance = 1e-5f) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(actual[i] - expected[i]) <= tolerance * (1.0f + std::fabs(expected[i])));
  }
}

// --- BatchNormalization ---------------------------------------------------------------------

// The parameters of test_batchnorm_example (scale, B, mean, var; epsilon 1e-5) on x = -1..4 as
// [1,3,2]; expected y = scale * (x - mean) / sqrt(var + eps) + B, computed with numpy.
const std::vector<float> kScale{0.37642553f, -1.0994008f, 0.29823819f};
const std::vector<float> kBias{1.3263859f, -0.69456786f, -0.14963454f};
const std::vector<float> kMean{-0.43515354f, 1.8492638f, 0.67229474f};
const std::vector<float> kVar{0.9755215f, 0.85580337f, 0.011714084f};
const std::vector<float> kBatchNormExpected{1.1111132f,   1.4922303f, 0.31470615f,
                                            -0.87370437f, 6.2617502f, 9.0161295f};

TEST_CASE("BatchNormalization with weight parameters matches the folded formula") {
  for (bool constant : {true, false}) {  // prepare-time folding and the per-run workspace path
    CAPTURE(constant);
    auto y = run_single_node("BatchNormalization",
                             {f32(Shape{1, 3, 2}, {-1, 0, 1, 2, 3, 4}),
                              f32(Shape{3}, kScale, constant), f32(Shape{3}, kBias, constant),
                              f32(Shape{3}, kMean, constant), f32(Shape{3}, kVar, constant)},
                             {OutputSpec{DType::kFloat32, Shape{1, 3, 2}}});
    REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
    check_close(values_of<float>((*y)[0]), kBatchNormExpected);
  }
}

// A [2,4,3,5] input with epsilon 0.01 against the naive per-element formula (variances in
// [0.5, 1.5)).
TEST_CASE("BatchNormalization matches the naive formula on a 4-D input") {
  const auto x = random_values(120, 7);
  const auto scale = random_values(4, 8), bias = random_values(4, 9), mean = random_values(4, 10);
  std::vector<float> var = random_values(4, 11);
  for (float& v : var) v = v * 0.5f + 1.0f;
  AttributeMap attributes;
  attributes.set("epsilon", float_attr(0.01f));
  auto y = run_single_node(
      "BatchNormalization",
      {f32(Shape{2, 4, 3, 5}, x), f32(Shape{4}, scale, true), f32(Shape{4}, bias, true),
       f32(Shape{4}, mean, true), f32(Shape{4}, var, true)},
      {OutputSpec{DType::kFloat32, Shape{2, 4, 3, 5}}}, attributes);
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i / 15 % 4;
    expected[i] = scale[c] * (x[i] - mean[c]) / std::sqrt(var[c] + 0.01f) + bias[c];
  }
  check_close(values_of<float>((*y)[0]), expected);
}

// training_mode = 1 and the running-mean output are unsupported, and say so.
TEST_CASE("BatchNormalization rejects training mode") {
  const auto p = f32(Shape{3}, {1, 1, 1}, true);
  AttributeMap training;
  training.set("training_mode", int_attr(1));
  auto mode =
      run_single_node("BatchNormalization", {f32(Shape{1, 3, 2}, {-1, 0, 1, 2, 3, 4}), p, p, p, p},
                      {OutputSpec{DType::kFloat32, Shape{1, 3, 2}}}, training);
  REQUIRE_FALSE(mode.has_value());
  CHECK(mode.status().code() == StatusCode::kUnsupported);
  CHECK(mode.status().message().find("training_mode") != std::string::npos);
  auto outputs = run_single_node(
      "BatchNormalization", {f32(Shape{1, 3, 2}, {-1, 0, 1, 2, 3, 4}), p, p, p, p},
      {OutputSpec{DType::kFloat32, Shape{1, 3, 2}}, OutputSpec{DType::kFloat32, Shape{3}}});
  REQUIRE_FALSE(outputs.has_value());
  CHECK(outputs.status().code() == StatusCode::kUnsupported);
}

// --- LayerNormalization ---------------------------------------------------------------------

// test_layer_normalization_2d_axis0: X, W, B all [3,4], axis 0 (one row of 12): Mean [[0.7482124]],
// InvStdDev [[1.0837431]], Y below.
TEST_CASE("LayerNormalization reproduces test_layer_normalization_2d_axis0") {
  const std::vector<float> x{1.7640524f,   0.40015721f,  0.97873801f, 2.2408931f,
                             1.867558f,    -0.97727787f, 0.95008844f, -0.1513572f,
                             -0.10321885f, 0.41059852f,  0.14404356f, 1.4542735f};
  const std::vector<float> w{0.76103771f, 0.12167501f,  0.44386324f, 0.33367434f,
                             1.4940791f,  -0.20515826f, 0.3130677f,  -0.85409576f,
                             -2.5529897f, 0.65361857f,  0.86443621f, -0.74216503f};
  const std::vector<float> b{2.2697546f,   -1.4543657f, 0.045758516f, -0.18718386f,
                             1.5327792f,   1.4693588f,  0.15494743f,  0.37816253f,
                             -0.88778573f, -1.9807965f, -0.34791216f, 0.15634897f};
  AttributeMap attributes;
  attributes.set("axis", int_attr(0));
  auto y = run_single_node(
      "LayerNormalization",
      {f32(Shape{3, 4}, x), f32(Shape{3, 4}, w, true), f32(Shape{3, 4}, b, true)},
      {OutputSpec{DType::kFloat32, Shape{3, 4}}, OutputSpec{DType::kFloat32, Shape{1, 1}},
       OutputSpec{DType::kFloat32, Shape{1, 1}}},
      attributes);
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  check_close(values_of<float>((*y)[0]),
              {3.1075883f, -1.5002618f, 0.15664911f, 0.35259527f, 3.3452215f, 1.8530023f,
               0.22344095f, 1.2108226f, 1.4679415f, -2.2199469f, -0.91391373f, -0.4115474f});
  check_close(values_of<float>((*y)[1]), {0.7482124f});
  check_close(values_of<float>((*y)[2]), {1.0837431f});
}

// test_layer_normalization_3d_axis1_epsilon: X [2,3,5], W and B [3,5], axis 1, epsilon 0.1;
// the first and last five values of Y, and both rows of Mean [0.68700826, 0.19870459] and InvStdDev
// [1.111287, 0.78767842].
TEST_CASE("LayerNormalization reproduces test_layer_normalization_3d_axis1_epsilon") {
  const std::vector<float> x{1.7640524f,   0.40015721f,  0.97873801f,  2.2408931f,   1.867558f,
                             -0.97727787f, 0.95008844f,  -0.1513572f,  -0.10321885f, 0.41059852f,
                             0.14404356f,  1.4542735f,   0.76103771f,  0.12167501f,  0.44386324f,
                             0.33367434f,  1.4940791f,   -0.20515826f, 0.3130677f,   -0.85409576f,
                             -2.5529897f,  0.65361857f,  0.86443621f,  -0.74216503f, 2.2697546f,
                             -1.4543657f,  0.045758516f, -0.18718386f, 1.5327792f,   1.4693588f};
  const std::vector<float> w{-0.068241604f, 1.7133427f, -0.74475485f, -0.82643855f, -0.098452523f,
                             -0.66347831f,  1.1266359f, -1.0799315f,  -1.1474687f,  -0.43782005f,
                             -0.49803245f,  1.9295321f, 0.94942081f,  0.087551244f, -1.2254355f};
  const std::vector<float> b{0.84436297f, -1.0002153f,  -1.5447711f, 1.1880298f,   0.3169426f,
                             0.9208588f,  0.31872764f,  0.8568306f,  -0.65102559f, -1.0342429f,
                             0.68159449f, -0.80340964f, -0.6895498f, -0.45553249f, 0.017479159f};
  AttributeMap attributes;
  attributes.set("axis", int_attr(1));
  attributes.set("epsilon", float_attr(0.1f));
  auto y = run_single_node(
      "LayerNormalization",
      {f32(Shape{2, 3, 5}, x), f32(Shape{3, 5}, w, true), f32(Shape{3, 5}, b, true)},
      {OutputSpec{DType::kFloat32, Shape{2, 3, 5}}, OutputSpec{DType::kFloat32, Shape{2, 1, 1}},
       OutputSpec{DType::kFloat32, Shape{2, 1, 1}}},
      attributes);
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  const auto values = values_of<float>((*y)[0]);
  check_close(std::vector<float>(values.begin(), values.begin() + 5),
              {0.76268423f, -1.5463841f, -1.7862172f, -0.23907423f, 0.18777983f});
  check_close(std::vector<float>(values.end() - 5, values.end()),
              {1.3300765f, -1.0358648f, -0.97813195f, -0.36353174f, -1.2090186f});
  check_close(values_of<float>((*y)[1]), {0.68700826f, 0.19870459f});
  check_close(values_of<float>((*y)[2]), {1.111287f, 0.78767842f});
}

// X [2,3,4] normalized over axis -1 (rows of 4), 1 (rows of 12) and -3 (one row of 24), with a
// full Scale and no bias, against mean / population variance computed here (epsilon 1e-5).
TEST_CASE("LayerNormalization matches the naive formula for each axis") {
  const auto x = random_values(24, 21);
  for (int64_t axis : {-1, 1, -3}) {
    CAPTURE(axis);
    const int64_t inner = axis == -1 ? 4 : axis == 1 ? 12 : 24;
    const auto scale = random_values(inner, 22);
    Shape scale_shape = axis == -1 ? Shape{4} : axis == 1 ? Shape{3, 4} : Shape{2, 3, 4};
    AttributeMap attributes;
    attributes.set("axis", int_attr(axis));
    auto y = run_single_node("LayerNormalization",
                             {f32(Shape{2, 3, 4}, x), f32(scale_shape, scale, true)},
                             {OutputSpec{DType::kFloat32, Shape{2, 3, 4}}}, attributes);
    REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
    std::vector<float> expected(24);
    for (int64_t row = 0; row < 24 / inner; ++row) {
      double mean = 0.0, var = 0.0;
      for (int64_t i = 0; i < inner; ++i) mean += x[static_cast<size_t>(row * inner + i)];
      mean /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i)
        var += std::pow(x[static_cast<size_t>(row * inner + i)] - mean, 2);
      var /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) {
        const size_t at = static_cast<size_t>(row * inner + i);
        expected[at] = static_cast<float>((x[at] - mean) / std::sqrt(var + 1e-5) *
                                          scale[static_cast<size_t>(i)]);
      }
    }
    check_close(values_of<float>((*y)[0]), expected);
  }
}

// A Scale of 3 values for a normalized size of 4 is unsupported and names both counts.
TEST_CASE("LayerNormalization rejects a Scale of the wrong size") {
  auto y = run_single_node("LayerNormalization",
                           {f32(Shape{2, 4}, random_values(8, 3)), f32(Shape{3}, {1, 1, 1}, true)},
                           {OutputSpec{DType::kFloat32, Shape{2, 4}}});
  REQUIRE_FALSE(y.has_value());
  CHECK(y.status().message().find("expected 4 values") != std::string::npos);
}

// --- InstanceNormalization ------------------------------------------------------------------

// test_instancenorm_example: x [1,2,1,3] = [-1,0,1, 2,3,4], scale [1,1.5], B [0,1]:
// y = [-1.2247356, 0, 1.2247356, -0.8371035, 1, 2.8371034].
TEST_CASE("InstanceNormalization reproduces test_instancenorm_example") {
  auto y = run_single_node("InstanceNormalization",
                           {f32(Shape{1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4}),
                            f32(Shape{2}, {1, 1.5f}, true), f32(Shape{2}, {0, 1}, true)},
                           {OutputSpec{DType::kFloat32, Shape{1, 2, 1, 3}}});
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  check_close(values_of<float>((*y)[0]),
              {-1.2247356f, 0.0f, 1.2247356f, -0.8371035f, 1.0f, 2.8371034f});
}

// X [2,3,10] (six planes of 10) with epsilon 0.01 against per-plane mean and variance.
TEST_CASE("InstanceNormalization matches the naive formula") {
  const auto x = random_values(60, 31), scale = random_values(3, 32), bias = random_values(3, 33);
  AttributeMap attributes;
  attributes.set("epsilon", float_attr(0.01f));
  auto y = run_single_node(
      "InstanceNormalization",
      {f32(Shape{2, 3, 10}, x), f32(Shape{3}, scale, true), f32(Shape{3}, bias, true)},
      {OutputSpec{DType::kFloat32, Shape{2, 3, 10}}}, attributes);
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  std::vector<float> expected(60);
  for (size_t plane = 0; plane < 6; ++plane) {
    double mean = 0.0, var = 0.0;
    for (size_t i = 0; i < 10; ++i) mean += x[plane * 10 + i];
    mean /= 10.0;
    for (size_t i = 0; i < 10; ++i) var += std::pow(x[plane * 10 + i] - mean, 2);
    var /= 10.0;
    for (size_t i = 0; i < 10; ++i) {
      expected[plane * 10 + i] = static_cast<float>(
          (x[plane * 10 + i] - mean) / std::sqrt(var + 0.01) * scale[plane % 3] + bias[plane % 3]);
    }
  }
  check_close(values_of<float>((*y)[0]), expected);
}

}  // namespace
}  // namespace onepool
