// Shape-family CPU kernels: the byte-copy ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout), Shape with start/end, Size, ConstantOfShape, Range and EyeLike.
#include <doctest/doctest.h>

#include <numeric>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput i32(Shape shape, const std::vector<int32_t>& values, bool constant = false) {
  return {make_host_tensor(DType::kInt32, shape, values), constant};
}

void check_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

}  // namespace

// Reshape / Flatten / Squeeze / Unsqueeze / Identity keep the bytes: [2,3] = 0..5 comes out as
// 0..5 in the graph's output shape ([3,2], [2,3], [2,3], [1,2,3], [2,3]).
TEST_CASE("Copy ops keep the bytes") {
  const std::vector<float> values = {0, 1, 2, 3, 4, 5};
  const std::pair<const char*, Shape> cases[] = {{"Reshape", {3, 2}},
                                                 {"Flatten", {2, 3}},
                                                 {"Squeeze", {2, 3}},
                                                 {"Unsqueeze", {1, 2, 3}},
                                                 {"Identity", {2, 3}}};
  for (const auto& [op, shape] : cases) {
    const std::string op_name = op;
    INFO(op_name);
    std::vector<std::optional<TestInput>> inputs = {f32({2, 3}, values)};
    if (std::string(op) == "Reshape") inputs.push_back(i64({2}, {3, -1}, true));
    auto result = run_single_node(op, inputs, {{DType::kFloat32, shape}});
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0]) == values);
  }
}

// A copy op whose output holds a different number of bytes than its input is a model error.
TEST_CASE("Reshape with mismatched sizes is rejected") {
  auto result = run_single_node("Reshape", {f32({2, 3}, {0, 1, 2, 3, 4, 5}), i64({1}, {4}, true)},
                                {{DType::kFloat32, {4}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
}

// Dropout in inference copies [1.5, -2] and its mask output is all true ([1, 1] as bool bytes).
TEST_CASE("Dropout copies and sets the mask") {
  auto result = run_single_node("Dropout", {f32({2}, {1.5f, -2.0f})},
                                {{DType::kFloat32, {2}}, {DType::kBool, {2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1.5f, -2.0f});
  CHECK(values_of<uint8_t>(result.value()[1]) == std::vector<uint8_t>{1, 1});
}

// Shape of a [2,3,4,5] tensor: all dims [2,3,4,5]; start 1 -> [3,4,5]; start 1, end -1 ->
// [3,4]; start -10 (clamped to 0), end 10 (clamped to 4) -> [2,3,4,5]. Size -> 120.
TEST_CASE("Shape with start/end and Size") {
  const auto in = f32({2, 3, 4, 5}, std::vector<float>(120, 0.0f));
  struct Case {
    int64_t start, end;
    std::vector<int64_t> expected;
  };
  const Case cases[] = {
      {0, 4, {2, 3, 4, 5}}, {1, 4, {3, 4, 5}}, {1, -1, {3, 4}}, {-10, 10, {2, 3, 4, 5}}};
  for (const Case& c : cases) {
    AttributeMap attributes;
    attributes.set("start", int_attr(c.start));
    attributes.set("end", int_attr(c.end));
    auto result = run_single_node(
        "Shape", {in}, {{DType::kInt64, {static_cast<int64_t>(c.expected.size())}}}, attributes);
    REQUIRE(result.has_value());
    CHECK(values_of<int64_t>(result.value()[0]) == c.expected);
  }
  auto size = run_single_node("Size", {in}, {{DType::kInt64, {}}});
  REQUIRE(size.has_value());
  CHECK(values_of<int64_t>(size.value()[0]) == std::vector<int64_t>{120});
}

// ConstantOfShape [2,3] with value int64 7 -> six 7s; without a value: float32 zeros.
TEST_CASE("ConstantOfShape") {
  AttributeMap attributes;
  Attribute value;
  value.kind = Attribute::Kind::kTensor;
  value.tensor = make_host_tensor<int64_t>(DType::kInt64, {1}, {7});
  attributes.set("value", value);
  auto sevens = run_single_node("ConstantOfShape", {i64({2}, {2, 3}, true)},
                                {{DType::kInt64, {2, 3}}}, attributes);
  REQUIRE(sevens.has_value());
  CHECK(values_of<int64_t>(sevens.value()[0]) == std::vector<int64_t>(6, 7));
  auto zeros = run_single_node("ConstantOfShape", {i64({1}, {4}, true)}, {{DType::kFloat32, {4}}});
  REQUIRE(zeros.has_value());
  CHECK(values_of<float>(zeros.value()[0]) == std::vector<float>(4, 0.0f));
}

// Range float 1 to 2 by 0.25 -> [1, 1.25, 1.5, 1.75]; int64 10 down to 4 by -3 -> [10, 7];
// an output shape that disagrees with the count (3 instead of 2) is an error at run time.
TEST_CASE("Range float and int") {
  auto floats =
      run_single_node("Range", {f32({}, {1.0f}), f32({}, {2.0f}, true), f32({}, {0.25f}, true)},
                      {{DType::kFloat32, {4}}});
  REQUIRE(floats.has_value());
  check_close(values_of<float>(floats.value()[0]), {1.0f, 1.25f, 1.5f, 1.75f});
  auto ints = run_single_node("Range", {i64({}, {10}), i64({}, {4}), i64({}, {-3})},
                              {{DType::kInt64, {2}}});
  REQUIRE(ints.has_value());
  CHECK(values_of<int64_t>(ints.value()[0]) == std::vector<int64_t>{10, 7});
  auto wrong = run_single_node("Range", {i64({}, {10}), i64({}, {4}), i64({}, {-3})},
                               {{DType::kInt64, {3}}});
  CHECK_FALSE(wrong.has_value());
}

// EyeLike [3,4] with k = 1: ones at (0,1), (1,2), (2,3).
TEST_CASE("EyeLike") {
  AttributeMap attributes;
  attributes.set("k", int_attr(1));
  auto result = run_single_node("EyeLike", {f32({3, 4}, std::vector<float>(12, 5.0f))},
                                {{DType::kFloat32, {3, 4}}}, attributes);
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
}

// Official ONNX node tests (onnx 1.12 data), converted to inline values.
// ONNX node test test_range_int32_type_negative_delta (opset 11).
TEST_CASE("official test_range_int32_type_negative_delta") {
  AttributeMap attributes;
  auto result = run_single_node("Range", {i32({}, {10}), i32({}, {6}, true), i32({}, {-3}, true)},
                                {{DType::kInt32, {2}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<int32_t> expected = {10, 7};
  CHECK(values_of<int32_t>(result.value()[0]) == expected);
}

// ONNX node test test_range_float_type_positive_delta (opset 11).
TEST_CASE("official test_range_float_type_positive_delta") {
  AttributeMap attributes;
  auto result =
      run_single_node("Range", {f32({}, {1.0f}), f32({}, {5.0f}, true), f32({}, {2.0f}, true)},
                      {{DType::kFloat32, {2}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 3.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_shape_start_1_end_negative_1 (opset 15).
TEST_CASE("official test_shape_start_1_end_negative_1") {
  AttributeMap attributes;
  attributes.set("end", int_attr(-1));
  attributes.set("start", int_attr(1));
  auto result = run_single_node(
      "Shape",
      {f32({3, 4, 5}, {1.76405239f,   0.400157213f,  0.97873801f,   2.24089313f,   1.867558f,
                       -0.977277875f, 0.950088441f,  -0.151357204f, -0.103218853f, 0.410598516f,
                       0.144043565f,  1.45427346f,   0.761037707f,  0.121675014f,  0.443863243f,
                       0.333674341f,  1.49407911f,   -0.205158263f, 0.313067704f,  -0.854095757f,
                       -2.55298972f,  0.653618574f,  0.864436209f,  -0.742165029f, 2.26975465f,
                       -1.45436573f,  0.0457585156f, -0.187183857f, 1.53277922f,   1.4693588f,
                       0.15494743f,   0.378162533f,  -0.887785733f, -1.98079646f,  -0.347912163f,
                       0.156348974f,  1.23029065f,   1.20237982f,   -0.387326807f, -0.302302748f,
                       -1.04855299f,  -1.42001796f,  -1.70627022f,  1.95077538f,   -0.509652197f,
                       -0.438074291f, -1.25279534f,  0.777490377f,  -1.6138978f,   -0.212740287f,
                       -0.895466566f, 0.386902511f,  -0.51080513f,  -1.18063223f,  -0.028182229f,
                       0.428331882f,  0.0665172189f, 0.302471906f,  -0.634322107f, -0.362741172f})},
      {{DType::kInt64, {1}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<int64_t> expected = {4};
  CHECK(values_of<int64_t>(result.value()[0]) == expected);
}

// ONNX node test test_unsqueeze_unsorted_axes (opset 13).
TEST_CASE("official test_unsqueeze_unsorted_axes") {
  AttributeMap attributes;
  auto result = run_single_node(
      "Unsqueeze",
      {f32({3, 4, 5}, {1.76405239f,   0.400157213f,  0.97873801f,   2.24089313f,   1.867558f,
                       -0.977277875f, 0.950088441f,  -0.151357204f, -0.103218853f, 0.410598516f,
                       0.144043565f,  1.45427346f,   0.761037707f,  0.121675014f,  0.443863243f,
                       0.333674341f,  1.49407911f,   -0.205158263f, 0.313067704f,  -0.854095757f,
                       -2.55298972f,  0.653618574f,  0.864436209f,  -0.742165029f, 2.26975465f,
                       -1.45436573f,  0.0457585156f, -0.187183857f, 1.53277922f,   1.4693588f,
                       0.15494743f,   0.378162533f,  -0.887785733f, -1.98079646f,  -0.347912163f,
                       0.156348974f,  1.23029065f,   1.20237982f,   -0.387326807f, -0.302302748f,
                       -1.04855299f,  -1.42001796f,  -1.70627022f,  1.95077538f,   -0.509652197f,
                       -0.438074291f, -1.25279534f,  0.777490377f,  -1.6138978f,   -0.212740287f,
                       -0.895466566f, 0.386902511f,  -0.51080513f,  -1.18063223f,  -0.028182229f,
                       0.428331882f,  0.0665172189f, 0.302471906f,  -0.634322107f, -0.362741172f}),
       i64({3}, {5, 4, 2}, true)},
      {{DType::kFloat32, {3, 4, 1, 5, 1, 1}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      1.76405239f,   0.400157213f,  0.97873801f,   2.24089313f,   1.867558f,     -0.977277875f,
      0.950088441f,  -0.151357204f, -0.103218853f, 0.410598516f,  0.144043565f,  1.45427346f,
      0.761037707f,  0.121675014f,  0.443863243f,  0.333674341f,  1.49407911f,   -0.205158263f,
      0.313067704f,  -0.854095757f, -2.55298972f,  0.653618574f,  0.864436209f,  -0.742165029f,
      2.26975465f,   -1.45436573f,  0.0457585156f, -0.187183857f, 1.53277922f,   1.4693588f,
      0.15494743f,   0.378162533f,  -0.887785733f, -1.98079646f,  -0.347912163f, 0.156348974f,
      1.23029065f,   1.20237982f,   -0.387326807f, -0.302302748f, -1.04855299f,  -1.42001796f,
      -1.70627022f,  1.95077538f,   -0.509652197f, -0.438074291f, -1.25279534f,  0.777490377f,
      -1.6138978f,   -0.212740287f, -0.895466566f, 0.386902511f,  -0.51080513f,  -1.18063223f,
      -0.028182229f, 0.428331882f,  0.0665172189f, 0.302471906f,  -0.634322107f, -0.362741172f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_squeeze_negative_axes (opset 13).
TEST_CASE("official test_squeeze_negative_axes") {
  AttributeMap attributes;
  auto result = run_single_node(
      "Squeeze",
      {f32({1, 3, 1, 5}, {1.76405239f, 0.400157213f, 0.97873801f, 2.24089313f, 1.867558f,
                          -0.977277875f, 0.950088441f, -0.151357204f, -0.103218853f, 0.410598516f,
                          0.144043565f, 1.45427346f, 0.761037707f, 0.121675014f, 0.443863243f}),
       i64({1}, {-2}, true)},
      {{DType::kFloat32, {1, 3, 5}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.76405239f,   0.400157213f,  0.97873801f,  2.24089313f,
                                       1.867558f,     -0.977277875f, 0.950088441f, -0.151357204f,
                                       -0.103218853f, 0.410598516f,  0.144043565f, 1.45427346f,
                                       0.761037707f,  0.121675014f,  0.443863243f};
  check_close(values_of<float>(result.value()[0]), expected);
}
