// ScatterND, GatherND, ScatterElements and Scatter: the ONNX documentation examples written
// inline, every reduction, negative indices, in-place runs, and out-of-range indices (an error
// naming the index, never a write outside the output).
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput i32(Shape shape, const std::vector<int32_t>& values, bool constant = false) {
  return {make_host_tensor(DType::kInt32, shape, values), constant};
}

AttributeMap reduction(const std::string& name) {
  AttributeMap attributes;
  attributes.set("reduction", string_attr(name));
  return attributes;
}

}  // namespace

// data = 1..8, indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]
// → [1, 11, 3, 10, 9, 6, 7, 12] (the spec's first example).
TEST_CASE("ScatterND 1-D example") {
  auto result = run_single_node("ScatterND",
                                {f32(Shape{8}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                 i64(Shape{4, 1}, {4, 3, 1, 7}), f32(Shape{4}, {9, 10, 11, 12})},
                                {{DType::kFloat32, Shape{8}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12});
}

// data [2, 2, 2] = 1..8; indices [[1], [-2]] (int32; -2 is 0) replace whole [2, 2] slices:
// slice 1 ← 10..13, slice 0 ← 20..23 → [20, 21, 22, 23, 10, 11, 12, 13].
TEST_CASE("ScatterND slices, negative index, int32 indices") {
  const std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8};
  auto result = run_single_node("ScatterND",
                                {f32(Shape{2, 2, 2}, data), i32(Shape{2, 1}, {1, -2}),
                                 f32(Shape{2, 2, 2}, {10, 11, 12, 13, 20, 21, 22, 23})},
                                {{DType::kFloat32, Shape{2, 2, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{20, 21, 22, 23, 10, 11, 12, 13});
}

// data = [1, 2, 3, 4]; indices [[0], [0], [3]]; updates [5, 6, 7]:
// add → [12, 2, 3, 11]; mul → [30, 2, 3, 28]; max → [6, 2, 3, 7]; min → [1, 2, 3, 4].
TEST_CASE("ScatterND reductions accumulate duplicates") {
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {{"add", {12, 2, 3, 11}},
                                                                         {"mul", {30, 2, 3, 28}},
                                                                         {"max", {6, 2, 3, 7}},
                                                                         {"min", {1, 2, 3, 4}}};
  for (const auto& [name, expected] : cases) {
    const std::string reduction_name = name;
    INFO("reduction ", reduction_name);
    auto result = run_single_node(
        "ScatterND",
        {f32(Shape{4}, {1, 2, 3, 4}), i64(Shape{3, 1}, {0, 0, 3}), f32(Shape{3}, {5, 6, 7})},
        {{DType::kFloat32, Shape{4}}}, reduction(name));
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0]) == expected);
  }
}

TEST_CASE("ScatterND in place overwrites data's own buffer") {
  auto result = run_single_node_in_place(
      "ScatterND", {i64(Shape{4}, {1, 2, 3, 4}), i64(Shape{1, 1}, {2}), i64(Shape{1}, {30})},
      {DType::kInt64, Shape{4}});
  REQUIRE(result.has_value());
  CHECK(values_of<int64_t>(result->output) == std::vector<int64_t>{1, 2, 30, 4});
  CHECK(result->in_place_inputs == cpu::kInPlaceInput0);
}

TEST_CASE("ScatterND out-of-range index is an error naming it") {
  for (int64_t bad : {4, -5, 1000000}) {
    auto result = run_single_node(
        "ScatterND",
        {f32(Shape{4}, {1, 2, 3, 4}), i64(Shape{2, 1}, {0, bad}), f32(Shape{2}, {5, 6})},
        {{DType::kFloat32, Shape{4}}});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.status().code() == StatusCode::kOutOfRange);
    CHECK(result.status().message().find(std::to_string(bad)) != std::string::npos);
  }
}

TEST_CASE("ScatterND rejects updates of the wrong shape at prepare") {
  auto result = run_single_node(
      "ScatterND",
      {f32(Shape{4}, {1, 2, 3, 4}), i64(Shape{2, 1}, {0, 1}), f32(Shape{3}, {5, 6, 7})},
      {{DType::kFloat32, Shape{4}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
}

// data [[0, 1], [2, 3]]: indices [[0, 0], [1, 1]] → [0, 3]; indices [[1], [0]] → rows swapped;
// batch_dims 1, data [2, 2, 2] = 0..7, indices [[1], [0]] → [[2, 3], [4, 5]].
TEST_CASE("GatherND examples, with and without batch_dims") {
  auto elements =
      run_single_node("GatherND", {f32(Shape{2, 2}, {0, 1, 2, 3}), i64(Shape{2, 2}, {0, 0, 1, 1})},
                      {{DType::kFloat32, Shape{2}}});
  REQUIRE(elements.has_value());
  CHECK(values_of<float>(elements.value()[0]) == std::vector<float>{0, 3});

  auto rows =
      run_single_node("GatherND", {f32(Shape{2, 2}, {0, 1, 2, 3}), i64(Shape{2, 1}, {1, -2})},
                      {{DType::kFloat32, Shape{2, 2}}});
  REQUIRE(rows.has_value());
  CHECK(values_of<float>(rows.value()[0]) == std::vector<float>{2, 3, 0, 1});

  AttributeMap batch;
  batch.set("batch_dims", int_attr(1));
  auto batched = run_single_node(
      "GatherND", {f32(Shape{2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), i64(Shape{2, 1}, {1, 0})},
      {{DType::kFloat32, Shape{2, 2}}}, batch);
  REQUIRE(batched.has_value());
  CHECK(values_of<float>(batched.value()[0]) == std::vector<float>{2, 3, 4, 5});
}

TEST_CASE("GatherND out-of-range index and bad output shape") {
  auto bad_index =
      run_single_node("GatherND", {f32(Shape{2, 2}, {0, 1, 2, 3}), i64(Shape{1, 2}, {0, 2})},
                      {{DType::kFloat32, Shape{1}}});
  REQUIRE_FALSE(bad_index.has_value());
  CHECK(bad_index.status().code() == StatusCode::kOutOfRange);
  auto bad_shape =
      run_single_node("GatherND", {f32(Shape{2, 2}, {0, 1, 2, 3}), i64(Shape{1, 2}, {0, 1})},
                      {{DType::kFloat32, Shape{2}}});
  REQUIRE_FALSE(bad_shape.has_value());
  CHECK(bad_shape.status().code() == StatusCode::kInvalidModel);
}

// The spec's examples. axis 0: data 3x3 zeros, indices [[1, 0, 2], [0, 2, 1]],
// updates [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]; out[indices[i][j]][j] = updates[i][j]
// → [[2.0, 1.1, 0], [1.0, 0, 2.2], [0, 2.1, 1.2]].
// axis 1: data [[1, 2, 3, 4, 5]], indices [[1, 3]], updates [[1.1, 2.1]] → [[1, 1.1, 3, 2.1, 5]].
TEST_CASE("ScatterElements and Scatter: spec examples") {
  AttributeMap axis0;
  axis0.set("axis", int_attr(0));
  for (const char* op : {"ScatterElements", "Scatter"}) {
    INFO(op);
    auto result = run_single_node(
        op,
        {f32(Shape{3, 3}, std::vector<float>(9, 0.0f)), i64(Shape{2, 3}, {1, 0, 2, 0, 2, 1}),
         f32(Shape{2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})},
        {{DType::kFloat32, Shape{3, 3}}}, axis0);
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0]) ==
          std::vector<float>{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f});
  }
  AttributeMap axis1;
  axis1.set("axis", int_attr(1));
  auto result = run_single_node("ScatterElements",
                                {f32(Shape{1, 5}, {1, 2, 3, 4, 5}), i64(Shape{1, 2}, {1, -2}),
                                 f32(Shape{1, 2}, {1.1f, 2.1f})},
                                {{DType::kFloat32, Shape{1, 5}}}, axis1);
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 1.1f, 3, 2.1f, 5});
}

// data [1, 2, 3, 4, 5], indices [1, 1], updates [1.1, 2.1]: add → [1, 5.2, 3, 4, 5];
// none keeps the last duplicate → [1, 2.1, 3, 4, 5].
TEST_CASE("ScatterElements duplicates: add accumulates, none keeps the last") {
  const auto run = [](const std::string& name) {
    auto result = run_single_node("ScatterElements",
                                  {f32(Shape{1, 5}, {1, 2, 3, 4, 5}), i64(Shape{1, 2}, {1, 1}),
                                   f32(Shape{1, 2}, {1.1f, 2.1f})},
                                  {{DType::kFloat32, Shape{1, 5}}}, [&] {
                                    AttributeMap attributes = reduction(name);
                                    attributes.set("axis", int_attr(1));
                                    return attributes;
                                  }());
    REQUIRE(result.has_value());
    return values_of<float>(result.value()[0]);
  };
  const std::vector<float> added = run("add");
  CHECK(added[1] == doctest::Approx(5.2f));
  CHECK(run("none") == std::vector<float>{1, 2.1f, 3, 4, 5});
}

TEST_CASE("ScatterElements out-of-range index and bad reduction") {
  auto bad_index = run_single_node(
      "ScatterElements", {f32(Shape{3}, {1, 2, 3}), i64(Shape{1}, {3}), f32(Shape{1}, {9})},
      {{DType::kFloat32, Shape{3}}});
  REQUIRE_FALSE(bad_index.has_value());
  CHECK(bad_index.status().code() == StatusCode::kOutOfRange);
  auto bad_reduction = run_single_node(
      "ScatterElements", {f32(Shape{3}, {1, 2, 3}), i64(Shape{1}, {0}), f32(Shape{1}, {9})},
      {{DType::kFloat32, Shape{3}}}, reduction("mean"));
  REQUIRE_FALSE(bad_reduction.has_value());
  CHECK(bad_reduction.status().code() == StatusCode::kInvalidModel);
}
