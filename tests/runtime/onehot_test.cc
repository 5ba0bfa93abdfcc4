// OneHot: hand-computed outputs for the default and an inner axis, negative and out-of-range
// indices (a row of off_value, as the spec says), float indices, and a depth that disagrees
// with the output shape (an error, never a write past the output).
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap axis_attributes(int64_t axis) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  return attributes;
}

}  // namespace

// indices [0, 2, -1, 5], depth 4, values [off 1, on 7], axis -1:
// [[7,1,1,1], [1,1,7,1], [1,1,1,7] (-1 is 3), [1,1,1,1] (5 is out of range)].
TEST_CASE("OneHot on the last axis with negative and out-of-range indices") {
  auto result = run_single_node(
      "OneHot", {i64(Shape{4}, {0, 2, -1, 5}), i64(Shape{}, {4}), f32(Shape{2}, {1, 7})},
      {{DType::kFloat32, Shape{4, 4}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{7, 1, 1, 1, 1, 1, 7, 1, 1, 1, 1, 7, 1, 1, 1, 1});
}

// indices [[1, 0], [2, 1]] (float), depth 3 (float), axis 1 → output [2, 3, 2]:
// out[n, j, k] = on when indices[n, k] == j.
// n=0: j=0 [0, 1], j=1 [1, 0], j=2 [0, 0]; n=1: j=0 [0, 0], j=1 [0, 1], j=2 [1, 0].
TEST_CASE("OneHot on an inner axis with float indices and depth") {
  auto result = run_single_node(
      "OneHot", {f32(Shape{2, 2}, {1, 0, 2, 1}), f32(Shape{1}, {3}), i64(Shape{2}, {0, 1})},
      {{DType::kInt64, Shape{2, 3, 2}}}, axis_attributes(1));
  REQUIRE(result.has_value());
  CHECK(values_of<int64_t>(result.value()[0]) ==
        std::vector<int64_t>{0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0});
}

TEST_CASE("OneHot depth that disagrees with the output: runtime and constant") {
  auto runtime =
      run_single_node("OneHot", {i64(Shape{2}, {0, 1}), i64(Shape{}, {5}), f32(Shape{2}, {0, 1})},
                      {{DType::kFloat32, Shape{2, 3}}});
  REQUIRE_FALSE(runtime.has_value());
  CHECK(runtime.status().code() == StatusCode::kInvalidArgument);
  CHECK(runtime.status().message().find("depth 5") != std::string::npos);
  auto constant = run_single_node(
      "OneHot", {i64(Shape{2}, {0, 1}), i64(Shape{}, {5}, true), f32(Shape{2}, {0, 1})},
      {{DType::kFloat32, Shape{2, 3}}});
  REQUIRE_FALSE(constant.has_value());
  CHECK(constant.status().code() == StatusCode::kInvalidModel);
}

TEST_CASE("OneHot rejects values that are not [off, on]") {
  auto result = run_single_node(
      "OneHot", {i64(Shape{2}, {0, 1}), i64(Shape{}, {3}), f32(Shape{3}, {0, 1, 2})},
      {{DType::kFloat32, Shape{2, 3}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
}
