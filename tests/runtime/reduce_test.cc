// Reduce* and ArgMax/ArgMin CPU kernels: every loop path (inner, column, general, copy), axes as
// attribute and as constant input, keepdims, negative axes, empty reductions, and cases converted
// from the ONNX node tests (test_reduce_*_example, test_argmax_*_select_last_index).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 double epsilon = 1e-5) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(epsilon));
  }
}

AttributeMap reduce_attributes(std::vector<int64_t> axes, int64_t keepdims) {
  AttributeMap attributes;
  if (!axes.empty()) attributes.set("axes", ints_attr(std::move(axes)));
  attributes.set("keepdims", int_attr(keepdims));
  return attributes;
}

std::vector<float> run_f32(const std::string& op, const std::vector<std::optional<TestInput>>& in,
                           Shape out, const AttributeMap& attributes) {
  auto result = run_single_node(op, in, {{DType::kFloat32, out}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

std::vector<float> iota(size_t count, float first = 0.0f) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

// The ONNX examples' [3,2,2] inputs.
const std::vector<float> kOneToTwelve = iota(12, 1.0f);
const std::vector<float> kExample = {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2};

// test_reduce_mean_keepdims_example: axes [1] of [3,2,2] (the column path) -> [3,1,2].
TEST_CASE("ReduceMean onnx keepdims example") {
  check_close(
      run_f32("ReduceMean", {f32({3, 2, 2}, kExample)}, {3, 1, 2}, reduce_attributes({1}, 1)),
      {12.5f, 1.5f, 35.0f, 1.5f, 57.5f, 1.5f});
}

// test_reduce_sum_keepdims_example: axes as a constant input [1] -> [4,6,12,14,20,22].
TEST_CASE("ReduceSum axes as input") {
  check_close(run_f32("ReduceSum", {f32({3, 2, 2}, kOneToTwelve), i64({1}, {1}, true)}, {3, 1, 2},
                      reduce_attributes({}, 1)),
              {4, 6, 12, 14, 20, 22});
}

// test_reduce_sum_empty_axes_input_noop_example: empty axes + noop_with_empty_axes = identity.
// Without noop, empty axes reduce everything: 1+...+12 = 78, as a scalar when keepdims = 0.
TEST_CASE("ReduceSum empty axes: noop and reduce-all") {
  AttributeMap noop = reduce_attributes({}, 1);
  noop.set("noop_with_empty_axes", int_attr(1));
  check_close(
      run_f32("ReduceSum", {f32({3, 2, 2}, kOneToTwelve), i64({0}, {}, true)}, {3, 2, 2}, noop),
      kOneToTwelve);
  check_close(run_f32("ReduceSum", {f32({3, 2, 2}, kOneToTwelve), i64({0}, {}, true)}, {},
                      reduce_attributes({}, 0)),
              {78});
  check_close(
      run_f32("ReduceSum", {f32({3, 2, 2}, kOneToTwelve)}, {1, 1, 1}, reduce_attributes({}, 1)),
      {78});
}

// test_reduce_max_default_axes_keepdim_example: max of everything = 60, shape [1,1,1].
TEST_CASE("ReduceMax onnx default axes") {
  check_close(run_f32("ReduceMax", {f32({3, 2, 2}, kExample)}, {1, 1, 1}, reduce_attributes({}, 1)),
              {60});
}

// test_reduce_l2_do_not_keepdims_example: axes [2] (the inner path): sqrt(1+4) = 2.236068, ...
TEST_CASE("ReduceL2 onnx do_not_keepdims example") {
  check_close(
      run_f32("ReduceL2", {f32({3, 2, 2}, kOneToTwelve)}, {3, 2}, reduce_attributes({2}, 0)),
      {2.236068f, 5.0f, 7.81025f, 10.630146f, 13.453624f, 16.27882f});
}

// test_reduce_prod_negative_axes_keepdims_example: axes [-2] = axis 1: 1*3 = 3, 2*4 = 8, ...
TEST_CASE("ReduceProd onnx negative axes") {
  check_close(
      run_f32("ReduceProd", {f32({3, 2, 2}, kOneToTwelve)}, {3, 1, 2}, reduce_attributes({-2}, 1)),
      {3, 8, 35, 48, 99, 120});
}

// test_reduce_log_sum_exp_keepdims_example (float64): log(exp(5)+exp(20)) = 20.000000305902276.
// The float32 run of the same data must agree to float precision.
TEST_CASE("ReduceLogSumExp onnx keepdims example") {
  std::vector<double> input(kExample.begin(), kExample.end());
  auto result = run_single_node(
      "ReduceLogSumExp", {TestInput{make_host_tensor(DType::kFloat64, {3, 2, 2}, input), false}},
      {{DType::kFloat64, {3, 1, 2}}}, reduce_attributes({1}, 1));
  REQUIRE(result.has_value());
  const std::vector<double> expected = {20.000000305902276, 2.313261687518223, 40.00004539889922,
                                        2.313261687518223,  60.00671534848912, 2.313261687518223};
  const auto actual = values_of<double>((*result)[0]);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) CHECK(actual[i] == doctest::Approx(expected[i]));
  check_close(
      run_f32("ReduceLogSumExp", {f32({3, 2, 2}, kExample)}, {3, 1, 2}, reduce_attributes({1}, 1)),
      {20.0f, 2.3132617f, 40.000046f, 2.3132617f, 60.006714f, 2.3132617f});
}

// The general path: [2,3,4] holding 0..23 over axes {0,2}: output j sums i*12 + j*4 + k over
// i in {0,1}, k in 0..3 = 60 + 32j -> [60,92,124]; ReduceMin of the same is 4j -> [0,4,8].
TEST_CASE("Reduce over non-adjacent axes") {
  check_close(run_f32("ReduceSum", {f32({2, 3, 4}, iota(24))}, {3}, reduce_attributes({0, 2}, 0)),
              {60, 92, 124});
  check_close(
      run_f32("ReduceMin", {f32({2, 3, 4}, iota(24))}, {1, 3, 1}, reduce_attributes({2, 0}, 1)),
      {0, 4, 8});
}

// L1, SumSquare, LogSum over axis 1 of [[1,-2],[-3,4]]: |.| sums 3,7; squares 5,25; log(-1),
// log(1).
TEST_CASE("ReduceL1 ReduceSumSquare ReduceLogSum") {
  const auto input = f32({2, 2}, {1, -2, -3, 4});
  check_close(run_f32("ReduceL1", {input}, {2}, reduce_attributes({1}, 0)), {3, 7});
  check_close(run_f32("ReduceSumSquare", {input}, {2, 1}, reduce_attributes({1}, 1)), {5, 25});
  const auto log_sum = run_f32("ReduceLogSum", {input}, {2}, reduce_attributes({1}, 0));
  CHECK(std::isnan(log_sum[0]));
  CHECK(log_sum[1] == doctest::Approx(0.0f));
}

// Integer reductions: int64 [[1,5],[7,-3]]: Max over axis 0 = [7,5]; Sum over all = 10;
// int32 Prod over axis 1 = [5,-21].
TEST_CASE("Reduce integer dtypes") {
  const auto input = i64({2, 2}, {1, 5, 7, -3});
  auto max =
      run_single_node("ReduceMax", {input}, {{DType::kInt64, {2}}}, reduce_attributes({0}, 0));
  REQUIRE(max.has_value());
  CHECK(values_of<int64_t>((*max)[0]) == std::vector<int64_t>{7, 5});
  auto sum = run_single_node("ReduceSum", {input}, {{DType::kInt64, {}}}, reduce_attributes({}, 0));
  REQUIRE(sum.has_value());
  CHECK(values_of<int64_t>((*sum)[0]) == std::vector<int64_t>{10});
  const std::vector<int32_t> small = {1, 5, 7, -3};
  auto prod = run_single_node("ReduceProd",
                              {TestInput{make_host_tensor(DType::kInt32, {2, 2}, small), false}},
                              {{DType::kInt32, {2}}}, reduce_attributes({1}, 0));
  REQUIRE(prod.has_value());
  CHECK(values_of<int32_t>((*prod)[0]) == std::vector<int32_t>{5, -21});
}

// Reducing an empty axis gives the identity: Sum of [2,0] over axis 1 = [0,0], Max = [-inf,-inf].
TEST_CASE("Reduce over an empty axis") {
  check_close(run_f32("ReduceSum", {f32({2, 0}, {})}, {2}, reduce_attributes({1}, 0)), {0, 0});
  const auto max = run_f32("ReduceMax", {f32({2, 0}, {})}, {2}, reduce_attributes({1}, 0));
  CHECK(max == std::vector<float>{-std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity()});
}

// Larger inputs on 2 threads, against double-precision naive sums:
//  - LayerNorm-like mean over the last dim of [64,768] (inner path, split across threads);
//  - ReduceSum over axis 1 of [3,5,600] (column path, 3 column blocks per slice);
//  - mean of everything of [64,768] (one output).
TEST_CASE("Reduce larger inputs match naive sums") {
  std::vector<float> input(64 * 768);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  std::vector<float> row_means(64);
  double total = 0.0;
  for (int r = 0; r < 64; ++r) {
    double sum = 0.0;
    for (int c = 0; c < 768; ++c) sum += input[static_cast<size_t>(r * 768 + c)];
    row_means[static_cast<size_t>(r)] = static_cast<float>(sum / 768.0);
    total += sum;
  }
  check_close(run_f32("ReduceMean", {f32({64, 768}, input)}, {64, 1}, reduce_attributes({-1}, 1)),
              row_means, 1e-4);
  check_close(run_f32("ReduceMean", {f32({64, 768}, input)}, {}, reduce_attributes({}, 0)),
              {static_cast<float>(total / (64.0 * 768.0))}, 1e-3);

  const auto column_input = std::vector<float>(input.begin(), input.begin() + 3 * 5 * 600);
  std::vector<float> column_sums(3 * 600, 0.0f);
  for (int o = 0; o < 3; ++o) {
    for (int r = 0; r < 5; ++r) {
      for (int j = 0; j < 600; ++j) {
        column_sums[static_cast<size_t>(o * 600 + j)] +=
            column_input[static_cast<size_t>((o * 5 + r) * 600 + j)];
      }
    }
  }
  check_close(
      run_f32("ReduceSum", {f32({3, 5, 600}, column_input)}, {3, 600}, reduce_attributes({1}, 0)),
      column_sums);
}

// Errors: axis 3 of a rank-3 input, axis 1 listed twice (as 1 and -2), axes from a non-constant
// input, and a declared output shape that disagrees with keepdims.
TEST_CASE("Reduce errors") {
  const auto input = f32({3, 2, 2}, kOneToTwelve);
  auto range =
      run_single_node("ReduceSum", {input}, {{DType::kFloat32, {3, 2}}}, reduce_attributes({3}, 0));
  REQUIRE_FALSE(range.has_value());
  CHECK(range.status().message().find("axis 3 is out of range") != std::string::npos);
  auto twice = run_single_node("ReduceMean", {input}, {{DType::kFloat32, {3, 2}}},
                               reduce_attributes({1, -2}, 0));
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.status().message().find("listed twice") != std::string::npos);
  auto dynamic = run_single_node("ReduceSum", {input, i64({1}, {1}, false)},
                                 {{DType::kFloat32, {3, 2}}}, reduce_attributes({}, 0));
  REQUIRE_FALSE(dynamic.has_value());
  CHECK(dynamic.status().code() == StatusCode::kUnsupported);
  auto shape =
      run_single_node("ReduceSum", {input}, {{DType::kFloat32, {3, 2}}}, reduce_attributes({1}, 1));
  REQUIRE_FALSE(shape.has_value());
  CHECK(shape.status().message().find("expected shape [3,1,2]") != std::string::npos);
}

std::vector<int64_t> run_arg(const std::string& op, const TestInput& input, Shape out, int64_t axis,
                             int64_t keepdims, int64_t select_last) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  attributes.set("keepdims", int_attr(keepdims));
  attributes.set("select_last_index", int_attr(select_last));
  auto result = run_single_node(op, {input}, {{DType::kInt64, out}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<int64_t>((*result)[0]);
}

// test_argmax_keepdims_example_select_last_index: [[2,2],[3,10]] axis 1 -> [[1],[1]] (the tie
// 2,2 picks the last); without select_last_index the tie picks 0 -> [[0],[1]].
// test_argmin_no_keepdims_example_select_last_index: same input -> [1,0].
TEST_CASE("ArgMax ArgMin select_last_index") {
  const auto input = f32({2, 2}, {2, 2, 3, 10});
  CHECK(run_arg("ArgMax", input, {2, 1}, 1, 1, 1) == std::vector<int64_t>{1, 1});
  CHECK(run_arg("ArgMax", input, {2, 1}, 1, 1, 0) == std::vector<int64_t>{0, 1});
  CHECK(run_arg("ArgMin", input, {2}, 1, 0, 1) == std::vector<int64_t>{1, 0});
  CHECK(run_arg("ArgMin", input, {2}, 1, 0, 0) == std::vector<int64_t>{0, 0});
}

// A strided axis: [2,3,2] holding 0..11 with element 11 set to 0; ArgMax over axis -2 (axis 1):
// slice 0 columns [0,2,4],[1,3,5] -> 2,2; slice 1 columns [6,8,10],[7,9,0] -> 2,1.
// int64 ArgMin over axis 0 of [[3,1],[2,4]] -> [1,0].
TEST_CASE("ArgMax strided axis and int64 input") {
  auto values = iota(12);
  values[11] = 0.0f;
  CHECK(run_arg("ArgMax", f32({2, 3, 2}, values), {2, 2}, -2, 0, 0) ==
        std::vector<int64_t>{2, 2, 2, 1});
  CHECK(run_arg("ArgMin", i64({2, 2}, {3, 1, 2, 4}), {1, 2}, 0, 1, 0) ==
        std::vector<int64_t>{1, 0});
}

}  // namespace
}  // namespace onepool::testing
