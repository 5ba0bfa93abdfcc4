// GridSample: hand-computed samples of a 2x2 image for each mode and padding, invariants of the
// cubic kernel (a constant image stays constant; centres and midpoints of a ramp are exact), a
// NaN coordinate, and shape errors.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap grid_attributes(const std::string& mode, const std::string& padding, bool align) {
  AttributeMap attributes;
  attributes.set("mode", string_attr(mode));
  attributes.set("padding_mode", string_attr(padding));
  attributes.set("align_corners", int_attr(align ? 1 : 0));
  return attributes;
}

// Samples `image` [1, 1, h, w] at the (x, y) points given, as a [1, 1, 1, points] output.
std::vector<float> sample(const std::vector<float>& image, int64_t h, int64_t w,
                          const std::vector<float>& points, const AttributeMap& attributes) {
  const auto count = static_cast<int64_t>(points.size() / 2);
  auto result = run_single_node("GridSample",
                                {f32(Shape{1, 1, h, w}, image), f32(Shape{1, 1, count, 2}, points)},
                                {{DType::kFloat32, Shape{1, 1, 1, count}}}, attributes);
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

}  // namespace

// Image [[1, 2], [3, 4]] with align_corners: (-1, -1) is pixel (0, 0) = 1, (1, 1) is 4, (0, 0)
// the centre: bilinear 2.5; (0, -1) halfway along the top row: 1.5.
TEST_CASE("GridSample bilinear with align_corners") {
  const std::vector<float> y = sample({1, 2, 3, 4}, 2, 2, {-1, -1, 1, 1, 0, 0, 0, -1},
                                      grid_attributes("bilinear", "zeros", true));
  CHECK(y == std::vector<float>{1, 4, 2.5f, 1.5f});
}

// Without align_corners the corners of the grid are the image's outer edges: (-1, -1) maps to
// (-0.5, -0.5). Zeros padding: bilinear of 1 with three zero taps, each weight 0.25 → 0.25.
// Border padding clamps the coordinate to (0, 0) → 1. Reflection reflects it to (0, 0) → 1.
TEST_CASE("GridSample padding modes at the image corner") {
  const std::vector<float> image = {1, 2, 3, 4};
  CHECK(sample(image, 2, 2, {-1, -1}, grid_attributes("bilinear", "zeros", false))[0] ==
        doctest::Approx(0.25));
  CHECK(sample(image, 2, 2, {-1, -1}, grid_attributes("bilinear", "border", false))[0] ==
        doctest::Approx(1.0));
  CHECK(sample(image, 2, 2, {-1, -1}, grid_attributes("bilinear", "reflection", false))[0] ==
        doctest::Approx(1.0));
  // Far outside (x = 3 → column 3.5, y = 0 → row 0.5): zeros 0; border clamps to column 1,
  // (2 + 4) / 2 = 3; reflection folds 3.5 over [-0.5, 1.5] twice to -0.5, whose taps (columns
  // -1 and 0) both reflect to column 0: (1 + 3) / 2 = 2.
  CHECK(sample(image, 2, 2, {3, 0}, grid_attributes("bilinear", "zeros", false))[0] == 0.0f);
  CHECK(sample(image, 2, 2, {3, 0}, grid_attributes("bilinear", "border", false))[0] ==
        doctest::Approx(3.0));
  CHECK(sample(image, 2, 2, {3, 0}, grid_attributes("bilinear", "reflection", false))[0] ==
        doctest::Approx(2.0));
}

// Nearest rounds half to even: with align_corners on a 1x4 row [10, 20, 30, 40], x = -1/3 maps
// to 1.0 → 20; x = 0 maps to 1.5 → 2 → 30; x = -1 maps to 0 → 10.
TEST_CASE("GridSample nearest rounds half to even") {
  const std::vector<float> y = sample({10, 20, 30, 40}, 1, 4, {-1.0f / 3, 0, 0, 0, -1, 0},
                                      grid_attributes("nearest", "zeros", true));
  CHECK(y == std::vector<float>{20, 30, 10});
}

// Bicubic: the Keys weights sum to 1, so a constant image samples to the constant anywhere
// (border padding). On a horizontal ramp v = column (8x8, align_corners: column = (x + 1) * 3.5)
// a pixel centre returns the pixel (weights 0, 1, 0, 0) and a midpoint between two centres the
// mean of the two (the weights are symmetric there): column 3 → 3, 3.5 → 3.5, 4.5 → 4.5.
TEST_CASE("GridSample bicubic invariants") {
  const std::vector<float> constant(25, 7.0f);
  const std::vector<float> points = {-0.9f, 0.3f, 0.1f, -0.2f, 0.77f, 0.5f, 1.3f, -1.4f};
  for (float v : sample(constant, 5, 5, points, grid_attributes("bicubic", "border", true))) {
    CHECK(v == doctest::Approx(7.0));
  }
  std::vector<float> ramp(8 * 8);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i % 8);
  const std::vector<double> columns = {3.0, 3.5, 4.5};
  std::vector<float> at;
  for (double column : columns) {
    at.push_back(static_cast<float>(column / 3.5 - 1));
    at.push_back(0.0f);
  }
  const std::vector<float> y = sample(ramp, 8, 8, at, grid_attributes("bicubic", "zeros", true));
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(columns[i]).epsilon(1e-5));
}

TEST_CASE("GridSample: NaN coordinate samples nothing, bad shapes and modes are errors") {
  const float nan = std::nanf("");
  CHECK(std::isnan(
      sample({1, 2, 3, 4}, 2, 2, {nan, 0}, grid_attributes("bilinear", "border", false))[0]));
  CHECK(sample({1, 2, 3, 4}, 2, 2, {1e30f, 0}, grid_attributes("bilinear", "zeros", false))[0] ==
        0.0f);
  auto grid_shape = run_single_node(
      "GridSample", {f32(Shape{1, 1, 2, 2}, {1, 2, 3, 4}), f32(Shape{1, 1, 1, 3}, {0, 0, 0})},
      {{DType::kFloat32, Shape{1, 1, 1, 1}}});
  REQUIRE_FALSE(grid_shape.has_value());
  CHECK(grid_shape.status().code() == StatusCode::kInvalidModel);
  auto mode = run_single_node(
      "GridSample", {f32(Shape{1, 1, 2, 2}, {1, 2, 3, 4}), f32(Shape{1, 1, 1, 2}, {0, 0})},
      {{DType::kFloat32, Shape{1, 1, 1, 1}}}, grid_attributes("area", "zeros", false));
  REQUIRE_FALSE(mode.has_value());
  CHECK(mode.status().code() == StatusCode::kInvalidModel);
  auto rank = run_single_node("GridSample", {f32(Shape{1, 1, 2}, {1, 2}), f32(Shape{1, 1, 1}, {0})},
                              {{DType::kFloat32, Shape{1, 1, 1}}});
  REQUIRE_FALSE(rank.has_value());
  CHECK(rank.status().code() == StatusCode::kUnsupported);
}
