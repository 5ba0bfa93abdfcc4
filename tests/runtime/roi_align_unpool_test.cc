// RoiAlign (hand-computed bins on a ramp image, both coordinate modes, max mode, errors) and
// MaxUnpool (scatter by MaxPool's flat indices, the default output shape, index errors).
#include <doctest/doctest.h>

#include <cmath>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap roi_attributes(int64_t out_h, int64_t out_w, int64_t ratio,
                            const std::string& transform, const std::string& mode = "avg") {
  AttributeMap attributes;
  attributes.set("output_height", int_attr(out_h));
  attributes.set("output_width", int_attr(out_w));
  attributes.set("sampling_ratio", int_attr(ratio));
  attributes.set("coordinate_transformation_mode", string_attr(transform));
  attributes.set("mode", string_attr(mode));
  return attributes;
}

// A 4x4 image whose value is its column: v(y, x) = x. Bilinear samples of it return the sample's
// x coordinate (clamped to [0, 3]), so each avg bin is the mean of its samples' x.
std::vector<float> ramp4() {
  std::vector<float> image(16);
  for (size_t i = 0; i < 16; ++i) image[i] = static_cast<float>(i % 4);
  return image;
}

}  // namespace

// roi (x1, y1, x2, y2) = (0, 0, 2, 2), one bin, 2x2 samples.
// output_half_pixel: samples at x = 0.5, 1.5 → mean 1.0.
// half_pixel: the roi shifts by -0.5 → samples at x = 0, 1 → mean 0.5.
TEST_CASE("RoiAlign avg on a ramp, both coordinate modes") {
  for (const auto& [transform, expected] :
       {std::pair<std::string, float>{"output_half_pixel", 1.0f}, {"half_pixel", 0.5f}}) {
    const std::string mode = transform;
    INFO(mode);
    auto result = run_single_node(
        "RoiAlign",
        {f32(Shape{1, 1, 4, 4}, ramp4()), f32(Shape{1, 4}, {0, 0, 2, 2}), i64(Shape{1}, {0})},
        {{DType::kFloat32, Shape{1, 1, 1, 1}}}, roi_attributes(1, 1, 2, transform));
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0])[0] == doctest::Approx(expected));
  }
}

// Two bins across the roi (0, 0, 4, 4), output_half_pixel, one sample each: bin centres at
// x = 1 and 3 → [1, 3]. Max mode with one sample per bin at x = 1 (weights 1 on column 1): 1.
TEST_CASE("RoiAlign several bins and max mode") {
  auto avg = run_single_node(
      "RoiAlign",
      {f32(Shape{1, 1, 4, 4}, ramp4()), f32(Shape{1, 4}, {0, 0, 4, 4}), i64(Shape{1}, {0})},
      {{DType::kFloat32, Shape{1, 1, 1, 2}}}, roi_attributes(1, 2, 1, "output_half_pixel"));
  REQUIRE(avg.has_value());
  CHECK(values_of<float>(avg.value()[0]) == std::vector<float>{1, 3});
  auto max = run_single_node(
      "RoiAlign",
      {f32(Shape{1, 1, 4, 4}, ramp4()), f32(Shape{1, 4}, {0, 0, 4, 4}), i64(Shape{1}, {0})},
      {{DType::kFloat32, Shape{1, 1, 1, 2}}}, roi_attributes(1, 2, 1, "output_half_pixel", "max"));
  REQUIRE(max.has_value());
  CHECK(values_of<float>(max.value()[0]) == std::vector<float>{1, 3});
}

TEST_CASE("RoiAlign: batch index and non-finite roi are errors") {
  auto batch = run_single_node(
      "RoiAlign",
      {f32(Shape{1, 1, 4, 4}, ramp4()), f32(Shape{1, 4}, {0, 0, 2, 2}), i64(Shape{1}, {1})},
      {{DType::kFloat32, Shape{1, 1, 1, 1}}}, roi_attributes(1, 1, 2, "half_pixel"));
  REQUIRE_FALSE(batch.has_value());
  CHECK(batch.status().code() == StatusCode::kInvalidArgument);
  auto nan = run_single_node("RoiAlign",
                             {f32(Shape{1, 1, 4, 4}, ramp4()),
                              f32(Shape{1, 4}, {0, 0, std::nanf(""), 2}), i64(Shape{1}, {0})},
                             {{DType::kFloat32, Shape{1, 1, 1, 1}}},
                             roi_attributes(1, 1, 0, "half_pixel"));
  REQUIRE_FALSE(nan.has_value());
  CHECK(nan.status().code() == StatusCode::kInvalidArgument);
}

// X [1, 1, 2, 2] = [5, 6, 7, 8] at flat indices [0, 3, 9, 15] of a [1, 1, 4, 4] output
// (kernel 2, stride 2: (2 - 1) * 2 + 2 = 4): zeros elsewhere.
TEST_CASE("MaxUnpool scatters by flat index into the default shape") {
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr({2, 2}));
  attributes.set("strides", ints_attr({2, 2}));
  auto result = run_single_node(
      "MaxUnpool", {f32(Shape{1, 1, 2, 2}, {5, 6, 7, 8}), i64(Shape{1, 1, 2, 2}, {0, 3, 9, 15})},
      {{DType::kFloat32, Shape{1, 1, 4, 4}}}, attributes);
  REQUIRE(result.has_value());
  std::vector<float> expected(16, 0.0f);
  expected[0] = 5;
  expected[3] = 6;
  expected[9] = 7;
  expected[15] = 8;
  CHECK(values_of<float>(result.value()[0]) == expected);

  auto bad_index = run_single_node(
      "MaxUnpool", {f32(Shape{1, 1, 2, 2}, {5, 6, 7, 8}), i64(Shape{1, 1, 2, 2}, {0, 3, 9, 16})},
      {{DType::kFloat32, Shape{1, 1, 4, 4}}}, attributes);
  REQUIRE_FALSE(bad_index.has_value());
  CHECK(bad_index.status().code() == StatusCode::kOutOfRange);

  auto bad_shape = run_single_node(
      "MaxUnpool", {f32(Shape{1, 1, 2, 2}, {5, 6, 7, 8}), i64(Shape{1, 1, 2, 2}, {0, 3, 9, 15})},
      {{DType::kFloat32, Shape{1, 1, 5, 5}}}, attributes);
  REQUIRE_FALSE(bad_shape.has_value());
  CHECK(bad_shape.status().code() == StatusCode::kInvalidModel);
}

// With an output_shape input (runtime) the output may be larger than the unpooled [1, 1, 4, 4]:
// an index keeps its 4x4 coordinates (as the ONNX test data has it): 5 = (1, 1) → 6 in 5x5,
// 7 = (1, 3) → 8, 13 = (3, 1) → 16, 15 = (3, 3) → 18. A value that disagrees with the planned
// shape is an error at run time.
TEST_CASE("MaxUnpool with output_shape keeps coordinates") {
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr({2, 2}));
  attributes.set("strides", ints_attr({2, 2}));
  auto result =
      run_single_node("MaxUnpool",
                      {f32(Shape{1, 1, 2, 2}, {5, 6, 7, 8}), i64(Shape{1, 1, 2, 2}, {5, 7, 13, 15}),
                       i64(Shape{4}, {1, 1, 5, 5})},
                      {{DType::kFloat32, Shape{1, 1, 5, 5}}}, attributes);
  REQUIRE(result.has_value());
  std::vector<float> expected(25, 0.0f);
  expected[6] = 5;
  expected[8] = 6;
  expected[16] = 7;
  expected[18] = 8;
  CHECK(values_of<float>(result.value()[0]) == expected);
  auto mismatch =
      run_single_node("MaxUnpool",
                      {f32(Shape{1, 1, 2, 2}, {5, 6, 7, 8}), i64(Shape{1, 1, 2, 2}, {0, 3, 9, 15}),
                       i64(Shape{4}, {1, 1, 4, 4})},
                      {{DType::kFloat32, Shape{1, 1, 5, 5}}}, attributes);
  REQUIRE_FALSE(mismatch.has_value());
  CHECK(mismatch.status().code() == StatusCode::kInvalidArgument);
}
