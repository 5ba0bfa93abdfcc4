// TopK (runtime/cpu/kernels/topk.cc): largest and smallest along the last and an inner axis,
// ties broken by the lower index, NaN ranked above every number, K from a constant, a runtime
// input and the opset-1 attribute, and K that disagrees with the output.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap topk_attributes(int64_t axis, int64_t largest) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  attributes.set("largest", int_attr(largest));
  return attributes;
}

}  // namespace

// x = [[0,1,2,3],[4,5,6,7],[8,9,10,11]], K = 3 along axis 1 (the ONNX test_top_k example):
// values [[3,2,1],[7,6,5],[11,10,9]], indices [[3,2,1]] in every row.
TEST_CASE("TopK: the three largest of each row") {
  auto result = run_single_node(
      "TopK", {f32(Shape{3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), i64(Shape{1}, {3}, true)},
      {{DType::kFloat32, Shape{3, 3}}, {DType::kInt64, Shape{3, 3}}}, topk_attributes(-1, 1));
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<float>((*result)[0]) == std::vector<float>{3, 2, 1, 7, 6, 5, 11, 10, 9});
  CHECK(values_of<int64_t>((*result)[1]) == std::vector<int64_t>{3, 2, 1, 3, 2, 1, 3, 2, 1});
}

// x = [3, 1, 3, 1, 2], K = 4: largest [3,3,2,1] at [0,2,4,1] (equal values: lower index first);
// smallest [1,1,2,3] at [1,3,4,0].
TEST_CASE("TopK: ties go to the lower index") {
  const std::vector<float> x{3, 1, 3, 1, 2};
  auto largest = run_single_node("TopK", {f32(Shape{5}, x), i64(Shape{1}, {4}, true)},
                                 {{DType::kFloat32, Shape{4}}, {DType::kInt64, Shape{4}}},
                                 topk_attributes(0, 1));
  REQUIRE(largest.has_value());
  CHECK(values_of<float>((*largest)[0]) == std::vector<float>{3, 3, 2, 1});
  CHECK(values_of<int64_t>((*largest)[1]) == std::vector<int64_t>{0, 2, 4, 1});
  auto smallest = run_single_node("TopK", {f32(Shape{5}, x), i64(Shape{1}, {4}, true)},
                                  {{DType::kFloat32, Shape{4}}, {DType::kInt64, Shape{4}}},
                                  topk_attributes(0, 0));
  REQUIRE(smallest.has_value());
  CHECK(values_of<float>((*smallest)[0]) == std::vector<float>{1, 1, 2, 3});
  CHECK(values_of<int64_t>((*smallest)[1]) == std::vector<int64_t>{1, 3, 4, 0});
}

// x = [1, NaN, 5, NaN], K = 3. NaN ranks above every number (ONNX Runtime; numpy sorts it last
// ascending): largest gives NaN (1), NaN (3), 5 (2); smallest gives 1 (0), 5 (2), NaN (1).
TEST_CASE("TopK: NaN ranks above every number") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{1, nan, 5, nan};
  auto largest = run_single_node("TopK", {f32(Shape{4}, x), i64(Shape{1}, {3}, true)},
                                 {{DType::kFloat32, Shape{3}}, {DType::kInt64, Shape{3}}},
                                 topk_attributes(0, 1));
  REQUIRE(largest.has_value());
  const auto values = values_of<float>((*largest)[0]);
  CHECK(std::isnan(values[0]));
  CHECK(std::isnan(values[1]));
  CHECK(values[2] == 5);
  CHECK(values_of<int64_t>((*largest)[1]) == std::vector<int64_t>{1, 3, 2});
  auto smallest = run_single_node("TopK", {f32(Shape{4}, x), i64(Shape{1}, {3}, true)},
                                  {{DType::kFloat32, Shape{3}}, {DType::kInt64, Shape{3}}},
                                  topk_attributes(0, 0));
  REQUIRE(smallest.has_value());
  CHECK(values_of<int64_t>((*smallest)[1]) == std::vector<int64_t>{0, 2, 1});
}

// x [2,3,2] int64 = 0..11, K = 2 along the inner axis 1, smallest: for each (outer, inner) the
// column x[o, :, i] = [6o+i, 6o+i+2, 6o+i+4] → values [[0,1],[2,3]] and [[6,7],[8,9]], indices
// [[0,0],[1,1]] twice.
TEST_CASE("TopK: an inner axis, int64 values") {
  std::vector<int64_t> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>(i);
  auto result = run_single_node("TopK", {i64(Shape{2, 3, 2}, x), i64(Shape{1}, {2}, true)},
                                {{DType::kInt64, Shape{2, 2, 2}}, {DType::kInt64, Shape{2, 2, 2}}},
                                topk_attributes(1, 0));
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<int64_t>((*result)[0]) == std::vector<int64_t>{0, 1, 2, 3, 6, 7, 8, 9});
  CHECK(values_of<int64_t>((*result)[1]) == std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1});
}

// K as a runtime input (not bound): read at run time and checked against the output's 2 along
// the axis; 2 works, 3 is an error naming K and both numbers. A constant K of 5 > 4 is a
// malformed model.
TEST_CASE("TopK: runtime K, and K that disagrees") {
  const std::vector<float> x{4, 1, 3, 2};
  auto runtime = run_single_node("TopK", {f32(Shape{4}, x), i64(Shape{1}, {2})},
                                 {{DType::kFloat32, Shape{2}}, {DType::kInt64, Shape{2}}},
                                 topk_attributes(0, 1));
  REQUIRE_MESSAGE(runtime.has_value(), runtime.status().to_string());
  CHECK(values_of<float>((*runtime)[0]) == std::vector<float>{4, 3});
  auto wrong = run_single_node("TopK", {f32(Shape{4}, x), i64(Shape{1}, {3})},
                               {{DType::kFloat32, Shape{2}}, {DType::kInt64, Shape{2}}},
                               topk_attributes(0, 1));
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.status().message().find("input 1 (K) is 3 at run time, the declared output has 2") !=
        std::string::npos);
  auto too_large = run_single_node("TopK", {f32(Shape{4}, x), i64(Shape{1}, {5}, true)},
                                   {{DType::kFloat32, Shape{5}}, {DType::kInt64, Shape{5}}},
                                   topk_attributes(0, 1));
  REQUIRE_FALSE(too_large.has_value());
  CHECK(too_large.status().code() == StatusCode::kInvalidModel);
  CHECK(too_large.status().message().find("K = 5 is outside [0, 4]") != std::string::npos);
}

// Opset 1 took K as the attribute k: k = 1 on [4,1,3,2] → 4 at index 0.
TEST_CASE("TopK: K from the opset-1 attribute") {
  AttributeMap attributes = topk_attributes(0, 1);
  attributes.set("k", int_attr(1));
  auto result =
      run_single_node("TopK", {f32(Shape{4}, {4, 1, 3, 2})},
                      {{DType::kFloat32, Shape{1}}, {DType::kInt64, Shape{1}}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<float>((*result)[0]) == std::vector<float>{4});
  CHECK(values_of<int64_t>((*result)[1]) == std::vector<int64_t>{0});
}
