// ReverseSequence: the spec's two examples (time-major and batch-major), a zero length, and
// lengths outside [0, max_len] (an error naming the batch entry).
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap axes(int64_t time_axis, int64_t batch_axis) {
  AttributeMap attributes;
  attributes.set("time_axis", int_attr(time_axis));
  attributes.set("batch_axis", int_attr(batch_axis));
  return attributes;
}

}  // namespace

// Time-major [4, 4]: column b is sequence b; lengths [4, 3, 2, 1].
// x = [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
// → [[3, 6, 9, 12], [2, 5, 8, 13], [1, 4, 10, 14], [0, 7, 11, 15]].
TEST_CASE("ReverseSequence time-major (spec example)") {
  auto result =
      run_single_node("ReverseSequence",
                      {f32(Shape{4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15}),
                       i64(Shape{4}, {4, 3, 2, 1})},
                      {{DType::kFloat32, Shape{4, 4}}}, axes(0, 1));
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15});
}

// Batch-major [4, 4]: row b is sequence b; lengths [1, 2, 3, 4].
// x = [[0..3], [4..7], [8..11], [12..15]] → [[0, 1, 2, 3], [5, 4, 6, 7], [10, 9, 8, 11],
// [15, 14, 13, 12]].
TEST_CASE("ReverseSequence batch-major (spec example)") {
  std::vector<float> x(16);
  for (size_t i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  auto result =
      run_single_node("ReverseSequence", {f32(Shape{4, 4}, x), i64(Shape{4}, {1, 2, 3, 4})},
                      {{DType::kFloat32, Shape{4, 4}}}, axes(1, 0));
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12});
}

// Inner dims move together: [3, 1, 2] time-major, length 3 → the time steps reversed whole;
// length 0 copies.
TEST_CASE("ReverseSequence moves inner blocks; length 0 copies") {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto reversed = run_single_node("ReverseSequence", {f32(Shape{3, 1, 2}, x), i64(Shape{1}, {3})},
                                  {{DType::kFloat32, Shape{3, 1, 2}}});
  REQUIRE(reversed.has_value());
  CHECK(values_of<float>(reversed.value()[0]) == std::vector<float>{5, 6, 3, 4, 1, 2});
  auto copied = run_single_node("ReverseSequence", {f32(Shape{3, 1, 2}, x), i64(Shape{1}, {0})},
                                {{DType::kFloat32, Shape{3, 1, 2}}});
  REQUIRE(copied.has_value());
  CHECK(values_of<float>(copied.value()[0]) == x);
}

TEST_CASE("ReverseSequence length out of range is an error") {
  for (int64_t bad : {5, -1}) {
    auto result = run_single_node("ReverseSequence",
                                  {f32(Shape{4, 2}, random_values(8, 1)), i64(Shape{2}, {1, bad})},
                                  {{DType::kFloat32, Shape{4, 2}}});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.status().code() == StatusCode::kOutOfRange);
    CHECK(result.status().message().find("sequence_lens[1]") != std::string::npos);
  }
}

TEST_CASE("ReverseSequence rejects bad axes and a lens shape that is not [batch]") {
  auto bad_axes =
      run_single_node("ReverseSequence", {f32(Shape{2, 2}, {1, 2, 3, 4}), i64(Shape{2}, {1, 1})},
                      {{DType::kFloat32, Shape{2, 2}}}, axes(0, 0));
  REQUIRE_FALSE(bad_axes.has_value());
  CHECK(bad_axes.status().code() == StatusCode::kInvalidModel);
  auto bad_lens =
      run_single_node("ReverseSequence", {f32(Shape{2, 2}, {1, 2, 3, 4}), i64(Shape{3}, {1, 1, 1})},
                      {{DType::kFloat32, Shape{2, 2}}});
  REQUIRE_FALSE(bad_lens.has_value());
  CHECK(bad_lens.status().code() == StatusCode::kInvalidModel);
}
