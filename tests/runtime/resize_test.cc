// Resize / Upsample CPU kernel: nearest (every nearest_mode), linear (every coordinate mode),
// cubic and tf_crop_and_resize, hand-computed small cases plus ONNX node tests converted inline,
// and the linear fast path (resize_linear_2d) held to the generic path's bits.
#include "runtime/cpu/kernels/resize.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

void check_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
}

AttributeMap resize_attributes(const std::string& mode, const std::string& coordinates,
                               const std::string& nearest = "round_prefer_floor") {
  AttributeMap attributes;
  attributes.set("mode", string_attr(mode));
  attributes.set("coordinate_transformation_mode", string_attr(coordinates));
  attributes.set("nearest_mode", string_attr(nearest));
  return attributes;
}

// Resizes [1,1,1,W] `row` by scales [1,1,1,s] (constant scales input) to width `out_w`.
std::vector<float> resize_row(const std::vector<float>& row, float s, int64_t out_w,
                              const AttributeMap& attributes) {
  const auto w = static_cast<int64_t>(row.size());
  auto result = run_single_node(
      "Resize", {f32({1, 1, 1, w}, row), std::nullopt, f32({4}, {1.0f, 1.0f, 1.0f, s}, true)},
      {{DType::kFloat32, {1, 1, 1, out_w}}}, attributes);
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

}  // namespace

// Nearest, asymmetric, [10, 20] scaled x4: x_original = o / 4 = 0, .25, .5, .75, 1, 1.25, 1.5,
// 1.75. The four nearest modes differ on the ties (.5, 1.5) and the fractions:
//   round_prefer_floor -> 0,0,0,1,1,1,1,2(->1); round_prefer_ceil -> 0,0,1,1,1,1,2,2 (clamped);
//   floor -> 0,0,0,0,1,1,1,1;                 ceil -> 0,1,1,1,1,2,2,2 (clamped to 1).
TEST_CASE("Resize nearest: each nearest_mode") {
  const std::vector<float> row = {10.0f, 20.0f};
  CHECK(
      resize_row(row, 4.0f, 8, resize_attributes("nearest", "asymmetric", "round_prefer_floor")) ==
      std::vector<float>{10, 10, 10, 20, 20, 20, 20, 20});
  CHECK(resize_row(row, 4.0f, 8, resize_attributes("nearest", "asymmetric", "round_prefer_ceil")) ==
        std::vector<float>{10, 10, 20, 20, 20, 20, 20, 20});
  CHECK(resize_row(row, 4.0f, 8, resize_attributes("nearest", "asymmetric", "floor")) ==
        std::vector<float>{10, 10, 10, 10, 20, 20, 20, 20});
  CHECK(resize_row(row, 4.0f, 8, resize_attributes("nearest", "asymmetric", "ceil")) ==
        std::vector<float>{10, 20, 20, 20, 20, 20, 20, 20});
}

// Nearest x2 with half_pixel: x_original = (o + .5) / 2 - .5 = -.25, .25, .75, 1.25 -> indices
// 0, 0, 1, 1 (round_prefer_floor, clamped): [1, 2] -> [1, 1, 2, 2].
TEST_CASE("Resize nearest: half_pixel x2") {
  CHECK(resize_row({1.0f, 2.0f}, 2.0f, 4, resize_attributes("nearest", "half_pixel")) ==
        std::vector<float>{1, 1, 2, 2});
}

// Linear on [0, 4] scaled x2 to width 4:
//   half_pixel / pytorch_half_pixel: x = -.25, .25, .75, 1.25 -> 0, 1, 3, 4 (edges clamp)
//   align_corners: x = o * 1/3 -> 0, 4/3, 8/3, 4;   asymmetric: x = o / 2 -> 0, 2, 4, 4.
TEST_CASE("Resize linear: coordinate modes in 1-D") {
  const std::vector<float> row = {0.0f, 4.0f};
  check_close(resize_row(row, 2.0f, 4, resize_attributes("linear", "half_pixel")), {0, 1, 3, 4});
  check_close(resize_row(row, 2.0f, 4, resize_attributes("linear", "pytorch_half_pixel")),
              {0, 1, 3, 4});
  check_close(resize_row(row, 2.0f, 4, resize_attributes("linear", "align_corners")),
              {0, 4.0f / 3, 8.0f / 3, 4});
  check_close(resize_row(row, 2.0f, 4, resize_attributes("linear", "asymmetric")), {0, 2, 4, 4});
}

// Downsampling [0, 4] to one element (sizes [1,1,1,1]): half_pixel reads x = .5 / .5 - .5 = .5
// -> 2; pytorch_half_pixel uses x = -.5 for a length-1 output -> 0 (clamped to the edge).
TEST_CASE("Resize linear: pytorch_half_pixel differs for a length-1 output") {
  const std::pair<const char*, float> cases[] = {{"half_pixel", 2.0f},
                                                 {"pytorch_half_pixel", 0.0f}};
  for (const auto& [mode, expected] : cases) {
    auto result = run_single_node(
        "Resize",
        {f32({1, 1, 1, 2}, {0.0f, 4.0f}), std::nullopt, std::nullopt, i64({4}, {1, 1, 1, 1}, true)},
        {{DType::kFloat32, {1, 1, 1, 1}}}, resize_attributes("linear", mode));
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0])[0] == doctest::Approx(expected));
  }
}

// Bilinear half_pixel [[0,4],[8,12]] x2 -> rows are [0,1,3,4] and [8,9,11,12] blended with
// weights 1, .75/.25, .25/.75, 1: [[0,1,3,4],[2,3,5,6],[6,7,9,10],[8,9,11,12]], per channel
// (the second channel is the first + 100).
TEST_CASE("Resize linear: bilinear 2-D on two channels") {
  auto result =
      run_single_node("Resize",
                      {f32({1, 2, 2, 2}, {0, 4, 8, 12, 100, 104, 108, 112}), std::nullopt,
                       f32({4}, {1, 1, 2, 2}, true)},
                      {{DType::kFloat32, {1, 2, 4, 4}}}, resize_attributes("linear", "half_pixel"));
  REQUIRE(result.has_value());
  std::vector<float> expected = {0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12};
  for (size_t i = 0; i < 16; ++i) expected.push_back(expected[i] + 100.0f);
  check_close(values_of<float>(result.value()[0]), expected);
}

// PaddleOCR-style nearest x4 (asymmetric, floor) on int64: every input element becomes a 4x4
// block, e.g. output (row 5, col 2) = input (1, 0) = 3 and (row 7, col 7) = input (1, 1) = 4.
TEST_CASE("Resize nearest: x4 upsampling of int64") {
  auto result = run_single_node(
      "Resize", {i64({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, f32({4}, {1, 1, 4, 4}, true)},
      {{DType::kInt64, {1, 1, 8, 8}}}, resize_attributes("nearest", "asymmetric", "floor"));
  REQUIRE(result.has_value());
  const auto out = values_of<int64_t>(result.value()[0]);
  REQUIRE(out.size() == 64);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) CHECK(out[y * 8 + x] == 1 + (y / 4) * 2 + x / 4);
  }
}

// Scales as a runtime (non-constant) input: the scale comes from the static output shape (x2),
// so nearest half_pixel on [1, 2] still gives [1, 1, 2, 2].
TEST_CASE("Resize: runtime scales use the static output shape") {
  auto result = run_single_node(
      "Resize", {f32({1, 1, 1, 2}, {1, 2}), std::nullopt, f32({4}, {1, 1, 1, 2}, false)},
      {{DType::kFloat32, {1, 1, 1, 4}}}, resize_attributes("nearest", "half_pixel"));
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 1, 2, 2});
}

// Linear resize of the channel axis (2 -> 4) is not implemented: kUnsupported, naming the axis.
TEST_CASE("Resize linear: resizing a leading axis is unsupported") {
  auto result = run_single_node(
      "Resize", {f32({1, 2, 1, 1}, {1, 2}), std::nullopt, f32({4}, {1, 2, 1, 1}, true)},
      {{DType::kFloat32, {1, 4, 1, 1}}}, resize_attributes("linear", "half_pixel"));
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kUnsupported);
  CHECK(result.status().message().find("axis 1") != std::string::npos);
}

// Upsample (opset 7 form, scales attribute) nearest [1, 2] x3 -> [1, 1, 1, 2, 2, 2].
TEST_CASE("Upsample: scales attribute") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("nearest"));
  attributes.set("scales", floats_attr({1, 1, 1, 3}));
  auto result = run_single_node("Upsample", {f32({1, 1, 1, 2}, {1, 2})},
                                {{DType::kFloat32, {1, 1, 1, 6}}}, attributes);
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 1, 1, 2, 2, 2});
}

// Official ONNX node tests (onnx 1.12 data), converted to inline values.
// ONNX node test test_resize_upsample_scales_nearest (opset 13).
TEST_CASE("official test_resize_upsample_scales_nearest") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("nearest"));
  auto result = run_single_node("Resize",
                                {f32({1, 1, 2, 2}, {1.0f, 2.0f, 3.0f, 4.0f}), std::nullopt,
                                 f32({4}, {1.0f, 1.0f, 2.0f, 3.0f}, true)},
                                {{DType::kFloat32, {1, 1, 4, 6}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 2.0f, 1.0f, 1.0f,
                                       1.0f, 2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 3.0f, 4.0f,
                                       4.0f, 4.0f, 3.0f, 3.0f, 3.0f, 4.0f, 4.0f, 4.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_downsample_scales_nearest (opset 13).
TEST_CASE("official test_resize_downsample_scales_nearest") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("nearest"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 2, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 0.600000024f, 0.600000024f}, true)},
                      {{DType::kFloat32, {1, 1, 1, 2}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 3.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_sizes_nearest_ceil_half_pixel (opset 13).
TEST_CASE("official test_resize_upsample_sizes_nearest_ceil_half_pixel") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("half_pixel"));
  attributes.set("mode", string_attr("nearest"));
  attributes.set("nearest_mode", string_attr("ceil"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, std::nullopt, i64({4}, {1, 1, 8, 8}, true)},
                      {{DType::kFloat32, {1, 1, 8, 8}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      1.0f,  2.0f,  2.0f,  3.0f,  3.0f,  4.0f,  4.0f,  4.0f,  5.0f,  6.0f,  6.0f,  7.0f,  7.0f,
      8.0f,  8.0f,  8.0f,  5.0f,  6.0f,  6.0f,  7.0f,  7.0f,  8.0f,  8.0f,  8.0f,  9.0f,  10.0f,
      10.0f, 11.0f, 11.0f, 12.0f, 12.0f, 12.0f, 9.0f,  10.0f, 10.0f, 11.0f, 11.0f, 12.0f, 12.0f,
      12.0f, 13.0f, 14.0f, 14.0f, 15.0f, 15.0f, 16.0f, 16.0f, 16.0f, 13.0f, 14.0f, 14.0f, 15.0f,
      15.0f, 16.0f, 16.0f, 16.0f, 13.0f, 14.0f, 14.0f, 15.0f, 15.0f, 16.0f, 16.0f, 16.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_sizes_nearest_floor_align_corners (opset 13).
TEST_CASE("official test_resize_upsample_sizes_nearest_floor_align_corners") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("align_corners"));
  attributes.set("mode", string_attr("nearest"));
  attributes.set("nearest_mode", string_attr("floor"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, std::nullopt, i64({4}, {1, 1, 8, 8}, true)},
                      {{DType::kFloat32, {1, 1, 8, 8}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      1.0f,  1.0f,  1.0f,  2.0f,  2.0f,  3.0f,  3.0f,  4.0f,  1.0f,  1.0f,  1.0f,  2.0f, 2.0f,
      3.0f,  3.0f,  4.0f,  1.0f,  1.0f,  1.0f,  2.0f,  2.0f,  3.0f,  3.0f,  4.0f,  5.0f, 5.0f,
      5.0f,  6.0f,  6.0f,  7.0f,  7.0f,  8.0f,  5.0f,  5.0f,  5.0f,  6.0f,  6.0f,  7.0f, 7.0f,
      8.0f,  9.0f,  9.0f,  9.0f,  10.0f, 10.0f, 11.0f, 11.0f, 12.0f, 9.0f,  9.0f,  9.0f, 10.0f,
      10.0f, 11.0f, 11.0f, 12.0f, 13.0f, 13.0f, 13.0f, 14.0f, 14.0f, 15.0f, 15.0f, 16.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric (opset 13).
TEST_CASE("official test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("asymmetric"));
  attributes.set("mode", string_attr("nearest"));
  attributes.set("nearest_mode", string_attr("round_prefer_ceil"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, std::nullopt, i64({4}, {1, 1, 8, 8}, true)},
                      {{DType::kFloat32, {1, 1, 8, 8}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      1.0f,  2.0f,  2.0f,  3.0f,  3.0f,  4.0f,  4.0f,  4.0f,  5.0f,  6.0f,  6.0f,  7.0f,  7.0f,
      8.0f,  8.0f,  8.0f,  5.0f,  6.0f,  6.0f,  7.0f,  7.0f,  8.0f,  8.0f,  8.0f,  9.0f,  10.0f,
      10.0f, 11.0f, 11.0f, 12.0f, 12.0f, 12.0f, 9.0f,  10.0f, 10.0f, 11.0f, 11.0f, 12.0f, 12.0f,
      12.0f, 13.0f, 14.0f, 14.0f, 15.0f, 15.0f, 16.0f, 16.0f, 16.0f, 13.0f, 14.0f, 14.0f, 15.0f,
      15.0f, 16.0f, 16.0f, 16.0f, 13.0f, 14.0f, 14.0f, 15.0f, 15.0f, 16.0f, 16.0f, 16.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_scales_linear (opset 13).
TEST_CASE("official test_resize_upsample_scales_linear") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("linear"));
  auto result = run_single_node("Resize",
                                {f32({1, 1, 2, 2}, {1.0f, 2.0f, 3.0f, 4.0f}), std::nullopt,
                                 f32({4}, {1.0f, 1.0f, 2.0f, 2.0f}, true)},
                                {{DType::kFloat32, {1, 1, 4, 4}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,
                                       2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_downsample_scales_linear (opset 13).
TEST_CASE("official test_resize_downsample_scales_linear") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("linear"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 2, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 0.600000024f, 0.600000024f}, true)},
                      {{DType::kFloat32, {1, 1, 1, 2}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {2.66666651f, 4.33333302f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_downsample_scales_linear_align_corners (opset 13).
TEST_CASE("official test_resize_downsample_scales_linear_align_corners") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("align_corners"));
  attributes.set("mode", string_attr("linear"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 2, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 0.600000024f, 0.600000024f}, true)},
                      {{DType::kFloat32, {1, 1, 1, 2}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 3.14285707f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_downsample_sizes_linear_pytorch_half_pixel (opset 13).
TEST_CASE("official test_resize_downsample_sizes_linear_pytorch_half_pixel") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("pytorch_half_pixel"));
  attributes.set("mode", string_attr("linear"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, std::nullopt, i64({4}, {1, 1, 3, 1}, true)},
                      {{DType::kFloat32, {1, 1, 3, 1}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.66666663f, 7.0f, 12.333333f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_scales_cubic (opset 13).
TEST_CASE("official test_resize_upsample_scales_cubic") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("cubic"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 2.0f, 2.0f}, true)},
                      {{DType::kFloat32, {1, 1, 8, 8}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      0.47265625f, 0.76953125f, 1.24609375f, 1.875f,      2.28125f,    2.91015625f, 3.38671875f,
      3.68359375f, 1.66015625f, 1.95703125f, 2.43359375f, 3.0625f,     3.46875f,    4.09765625f,
      4.57421875f, 4.87109375f, 3.56640625f, 3.86328125f, 4.33984375f, 4.96875f,    5.375f,
      6.00390625f, 6.48046875f, 6.77734375f, 6.08203125f, 6.37890625f, 6.85546875f, 7.484375f,
      7.890625f,   8.51953125f, 8.99609375f, 9.29296875f, 7.70703125f, 8.00390625f, 8.48046875f,
      9.109375f,   9.515625f,   10.1445312f, 10.6210938f, 10.9179688f, 10.2226562f, 10.5195312f,
      10.9960938f, 11.625f,     12.03125f,   12.6601562f, 13.1367188f, 13.4335938f, 12.1289062f,
      12.4257812f, 12.9023438f, 13.53125f,   13.9375f,    14.5664062f, 15.0429688f, 15.3398438f,
      13.3164062f, 13.6132812f, 14.0898438f, 14.71875f,   15.125f,     15.7539062f, 16.2304688f,
      16.5273438f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_downsample_scales_cubic_A_n0p5_exclude_outside (opset 13).
TEST_CASE("official test_resize_downsample_scales_cubic_A_n0p5_exclude_outside") {
  AttributeMap attributes;
  attributes.set("cubic_coeff_a", float_attr(-0.5f));
  attributes.set("exclude_outside", int_attr(1));
  attributes.set("mode", string_attr("cubic"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 0.800000012f, 0.800000012f}, true)},
                      {{DType::kFloat32, {1, 1, 3, 3}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.36812675f, 2.6695013f, 4.01333666f, 6.57362509f, 7.875f,
                                       9.21883488f, 11.948966f, 13.2503414f, 14.5941763f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_scales_cubic_align_corners (opset 13).
TEST_CASE("official test_resize_upsample_scales_cubic_align_corners") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("align_corners"));
  attributes.set("mode", string_attr("cubic"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 2.0f, 2.0f}, true)},
                      {{DType::kFloat32, {1, 1, 8, 8}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      1.0f,        1.34110785f, 1.80029154f, 2.32944608f, 2.67055392f, 3.19970846f, 3.65889215f,
      4.0f,        2.36443138f, 2.70553946f, 3.16472292f, 3.69387746f, 4.03498554f, 4.56413984f,
      5.02332354f, 5.36443138f, 4.20116615f, 4.542274f,   5.00145769f, 5.53061247f, 5.87172031f,
      6.40087461f, 6.86005831f, 7.20116615f, 6.31778431f, 6.65889215f, 7.11807585f, 7.64723015f,
      7.98833799f, 8.51749229f, 8.97667599f, 9.31778431f, 7.68221569f, 8.02332401f, 8.48250771f,
      9.01166153f, 9.35276985f, 9.88192463f, 10.3411083f, 10.6822157f, 9.79883385f, 10.1399412f,
      10.5991249f, 11.1282797f, 11.469388f,  11.9985418f, 12.4577255f, 12.7988338f, 11.6355686f,
      11.976676f,  12.4358597f, 12.9650145f, 13.3061228f, 13.8352766f, 14.2944603f, 14.6355686f,
      13.0f,       13.3411083f, 13.800292f,  14.3294458f, 14.6705542f, 15.199708f,  15.6588917f,
      16.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_upsample_scales_cubic_asymmetric (opset 13).
TEST_CASE("official test_resize_upsample_scales_cubic_asymmetric") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("asymmetric"));
  attributes.set("mode", string_attr("cubic"));
  auto result =
      run_single_node("Resize",
                      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f,
                                          10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}),
                       std::nullopt, f32({4}, {1.0f, 1.0f, 2.0f, 2.0f}, true)},
                      {{DType::kFloat32, {1, 1, 8, 8}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      1.0f,    1.40625f,  2.0f,    2.5f,    3.0f,    3.59375f,  4.0f,    4.09375f,
      2.625f,  3.03125f,  3.625f,  4.125f,  4.625f,  5.21875f,  5.625f,  5.71875f,
      5.0f,    5.40625f,  6.0f,    6.5f,    7.0f,    7.59375f,  8.0f,    8.09375f,
      7.0f,    7.40625f,  8.0f,    8.5f,    9.0f,    9.59375f,  10.0f,   10.09375f,
      9.0f,    9.40625f,  10.0f,   10.5f,   11.0f,   11.59375f, 12.0f,   12.09375f,
      11.375f, 11.78125f, 12.375f, 12.875f, 13.375f, 13.96875f, 14.375f, 14.46875f,
      13.0f,   13.40625f, 14.0f,   14.5f,   15.0f,   15.59375f, 16.0f,   16.09375f,
      13.375f, 13.78125f, 14.375f, 14.875f, 15.375f, 15.96875f, 16.375f, 16.46875f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_resize_tf_crop_and_resize (opset 13).
TEST_CASE("official test_resize_tf_crop_and_resize") {
  AttributeMap attributes;
  attributes.set("coordinate_transformation_mode", string_attr("tf_crop_and_resize"));
  attributes.set("extrapolation_value", float_attr(10.0f));
  attributes.set("mode", string_attr("linear"));
  auto result = run_single_node(
      "Resize",
      {f32({1, 1, 4, 4}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f,
                          13.0f, 14.0f, 15.0f, 16.0f}),
       f32({8}, {0.0f, 0.0f, 0.400000006f, 0.600000024f, 1.0f, 1.0f, 1.20000005f, 1.70000005f},
           true),
       std::nullopt, i64({4}, {1, 1, 3, 3}, true)},
      {{DType::kFloat32, {1, 1, 3, 3}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {7.60000038f, 10.0f, 10.0f, 12.4000006f, 10.0f,
                                       10.0f,       10.0f, 10.0f, 10.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_upsample_nearest (opset 9).
TEST_CASE("official test_upsample_nearest") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("nearest"));
  auto result = run_single_node(
      "Upsample",
      {f32({1, 1, 2, 2}, {1.0f, 2.0f, 3.0f, 4.0f}), f32({4}, {1.0f, 1.0f, 2.0f, 3.0f}, true)},
      {{DType::kFloat32, {1, 1, 4, 6}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 2.0f, 1.0f, 1.0f,
                                       1.0f, 2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 3.0f, 4.0f,
                                       4.0f, 4.0f, 3.0f, 3.0f, 3.0f, 4.0f, 4.0f, 4.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// The linear fast path (resize_linear_2d.cc) against the generic tap loop
// (make_resize_kernel_generic): the same bits for every output (NaN where it has NaN), over odd
// sizes, up- and downsampling, scale 1 on one axis, every coordinate mode but tf_crop_and_resize,
// NaN, +-Inf and +-0 in the input, and 1 to 3 threads (rows split mid-plane between threads).
namespace {

// Random values in [-1, 1) with NaN, +-Inf and +-0 sprinkled in; the corners are infinite so the
// edge taps, where clamping merges two taps into one, read them.
std::vector<float> awkward_values(int64_t count, uint32_t seed) {
  std::vector<float> values = random_values(count, seed);
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % 41 == 5) values[i] = std::numeric_limits<float>::quiet_NaN();
    if (i % 11 == 3) values[i] = (i % 2 == 0) ? 0.0f : -0.0f;
    if (i % 31 == 11) values[i] = -inf;
    if (i % 47 == 17) values[i] = inf;
  }
  values.front() = inf;
  values.back() = -inf;
  return values;
}

bool is_nan_bits(uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; }

// Equal bits, or both NaN: the sign and payload of a NaN are the hardware's choice (x86 keeps
// the first operand's NaN, and the compiler may order a commutative add's operands either way),
// as in every other kernel's fast-path test (pool_fast_path_test.cc).
bool same_value_bits(uint32_t a, uint32_t b) {
  return a == b || (is_nan_bits(a) && is_nan_bits(b));
}

struct ResizeRun {
  std::vector<uint32_t> bits;  // the output, bit for bit
  size_t workspace_bytes = 0;  // what the prepared kernel declared
};

// Resizes `x` to `out` (a constant sizes input) with the kernel `factory` prepares for `threads`
// threads, and runs it on that many.
ResizeRun run_resize_with(cpu::KernelFactory factory, const TestInput& x, const Shape& out,
                          const AttributeMap& attributes, int threads) {
  const std::vector<std::optional<TestInput>> inputs = {
      x, std::nullopt, std::nullopt,
      i64({out.rank()}, std::vector<int64_t>(out.dims().begin(), out.dims().end()), true)};
  const Graph graph = single_node_graph("Resize", inputs, {{DType::kFloat32, out}}, attributes);
  auto prepared = cpu::prepare_cpu_kernel(factory, graph, graph.nodes[0], threads);
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  HostTensor input = x.tensor;
  ResizeRun run;
  run.workspace_bytes = prepared.value().workspace_bytes;
  run.bits.assign(static_cast<size_t>(out.element_count()), 0xCDCDCDCDu);
  const TensorView in_view{input.data.data(), DType::kFloat32, input.shape, Device{}};
  const TensorView out_view{run.bits.data(), DType::kFloat32, out, Device{}};
  REQUIRE(run_prepared(prepared.value(), {in_view}, {out_view}, threads).is_ok());
  return run;
}

// Fast path (the registered factory) and generic path on the same input; the fast path must
// have been taken (it alone declares a workspace: its cached rows) and agree bit for bit.
void check_fast_path_matches(const Shape& in, const Shape& out, const std::string& coordinates,
                             bool exclude_outside = false) {
  AttributeMap attributes = resize_attributes("linear", coordinates);
  if (exclude_outside) attributes.set("exclude_outside", int_attr(1));
  const auto x = f32(in, awkward_values(in.element_count(), 7));
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  for (int threads = 1; threads <= 3; ++threads) {
    INFO(in.to_string(), " -> ", out.to_string(), " ", coordinates, ", threads ", threads);
    const ResizeRun fast = run_resize_with(registry.find("Resize"), x, out, attributes, threads);
    const ResizeRun generic =
        run_resize_with(&cpu::data::make_resize_kernel_generic, x, out, attributes, threads);
    CHECK(fast.workspace_bytes > 0);
    CHECK(generic.workspace_bytes == 0);
    REQUIRE(fast.bits.size() == generic.bits.size());
    size_t differing = 0, first = 0, nans = 0;
    for (size_t i = fast.bits.size(); i-- > 0;) {
      nans += is_nan_bits(generic.bits[i]) ? 1 : 0;
      if (same_value_bits(fast.bits[i], generic.bits[i])) continue;
      ++differing;
      first = i;
    }
    float fast_value = 0.0f, generic_value = 0.0f;
    std::memcpy(&fast_value, &fast.bits[first], sizeof(float));
    std::memcpy(&generic_value, &generic.bits[first], sizeof(float));
    INFO("first difference at ", first, ": fast ", fast_value, ", generic ", generic_value);
    CHECK(differing == 0);
    CHECK(nans > 0);  // the input's NaN and infinities reached the output
  }
}

// tf_half_pixel_for_nn moves even a scale-1 axis by half a pixel, so it takes rank-2 inputs.
const char* const kFastPathModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                      "asymmetric"};

}  // namespace

// Upsampling by 13/7 and 11/5 (taps at irregular positions, both edges clamped) on 2 x 3 planes.
TEST_CASE("Resize linear fast path: odd upsampling gives the generic path's bits") {
  for (const char* mode : kFastPathModes) {
    check_fast_path_matches(Shape{2, 3, 7, 5}, Shape{2, 3, 13, 11}, mode);
  }
  check_fast_path_matches(Shape{7, 5}, Shape{13, 11}, "tf_half_pixel_for_nn");
}

// Downsampling 9x9 -> 4x6: consecutive output rows share no input row, so every row misses the
// cache.
TEST_CASE("Resize linear fast path: downsampling gives the generic path's bits") {
  for (const char* mode : kFastPathModes) {
    check_fast_path_matches(Shape{1, 2, 9, 9}, Shape{1, 2, 4, 6}, mode);
  }
  check_fast_path_matches(Shape{9, 9}, Shape{4, 6}, "tf_half_pixel_for_nn");
}

// Scale 1 on one axis (that axis has one tap of weight 1 per output), on both (an identity
// resize), and exclude_outside (edge weights renormalized).
TEST_CASE("Resize linear fast path: scale 1 on an axis and exclude_outside") {
  check_fast_path_matches(Shape{1, 2, 6, 7}, Shape{1, 2, 6, 15}, "half_pixel");
  check_fast_path_matches(Shape{1, 2, 8, 5}, Shape{1, 2, 3, 5}, "align_corners");
  check_fast_path_matches(Shape{1, 2, 4, 3}, Shape{1, 2, 4, 3}, "asymmetric");
  check_fast_path_matches(Shape{1, 2, 5, 6}, Shape{1, 2, 11, 3}, "half_pixel", true);
}

// Other ranks: [C, H, W] and a rank-1 row (one plane of height 1).
TEST_CASE("Resize linear fast path: rank 3 and rank 1") {
  check_fast_path_matches(Shape{3, 5, 4}, Shape{3, 9, 10}, "pytorch_half_pixel");
  check_fast_path_matches(Shape{13}, Shape{29}, "half_pixel");
}

// M-LSD's x2 half_pixel upsampling, large enough (102,400 outputs) that 2 and 3 threads split
// the 1,280 output rows mid-plane (3 parts of 427 rows) and each part starts its own cache.
TEST_CASE("Resize linear fast path: x2 upsampling split over threads") {
  check_fast_path_matches(Shape{1, 16, 40, 40}, Shape{1, 16, 80, 80}, "half_pixel");
}
