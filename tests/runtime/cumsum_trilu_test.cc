// CumSum and Trilu: hand-computed cases, a naive reference for every (axis, exclusive, reverse)
// and every k on a small random tensor, runtime and constant parameters, and the errors.
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput i32(Shape shape, const std::vector<int32_t>& values, bool constant = false) {
  return {make_host_tensor(DType::kInt32, shape, values), constant};
}

AttributeMap cumsum_attributes(bool exclusive, bool reverse) {
  AttributeMap attributes;
  attributes.set("exclusive", int_attr(exclusive ? 1 : 0));
  attributes.set("reverse", int_attr(reverse ? 1 : 0));
  return attributes;
}

// The reference: y[o, i, n] = sum over j of x[o, j, n] for j in the window of i.
std::vector<float> naive_cumsum(const std::vector<float>& x, int64_t outer, int64_t dim,
                                int64_t inner, bool exclusive, bool reverse) {
  std::vector<float> y(x.size(), 0.0f);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < dim; ++i) {
      for (int64_t n = 0; n < inner; ++n) {
        double sum = 0.0;
        for (int64_t j = 0; j < dim; ++j) {
          const bool in = reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
          if (in) sum += x[static_cast<size_t>((o * dim + j) * inner + n)];
        }
        y[static_cast<size_t>((o * dim + i) * inner + n)] = static_cast<float>(sum);
      }
    }
  }
  return y;
}

std::vector<float> run_trilu(const std::vector<float>& x, Shape shape, std::optional<int64_t> k,
                             bool upper, bool constant_k = false) {
  AttributeMap attributes;
  attributes.set("upper", int_attr(upper ? 1 : 0));
  std::vector<std::optional<TestInput>> inputs = {f32(shape, x)};
  if (k) inputs.push_back(i64(Shape{}, {*k}, constant_k));
  auto result = run_single_node("Trilu", inputs, {{DType::kFloat32, shape}}, attributes);
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

}  // namespace

// x = [1, 2, 3, 4, 5]: inclusive [1, 3, 6, 10, 15]; exclusive [0, 1, 3, 6, 10];
// reverse [15, 14, 12, 9, 5]; reverse exclusive [14, 12, 9, 5, 0].
TEST_CASE("CumSum 1-D, the four modes") {
  const std::vector<float> x = {1, 2, 3, 4, 5};
  const std::vector<std::vector<float>> expected = {
      {1, 3, 6, 10, 15}, {0, 1, 3, 6, 10}, {15, 14, 12, 9, 5}, {14, 12, 9, 5, 0}};
  for (int mode = 0; mode < 4; ++mode) {
    const bool exclusive = (mode & 1) != 0, reverse = (mode & 2) != 0;
    auto result =
        run_single_node("CumSum", {f32(Shape{5}, x), i32(Shape{}, {0})},
                        {{DType::kFloat32, Shape{5}}}, cumsum_attributes(exclusive, reverse));
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0]) == expected[static_cast<size_t>(mode)]);
  }
}

// [3, 4, 5] random, every axis (as -3..2, runtime or constant), every mode, against the naive sum.
TEST_CASE("CumSum 3-D matches the naive reference on every axis and mode") {
  const Shape shape{3, 4, 5};
  const std::vector<float> x = random_values(60, 7);
  const int64_t dims[3] = {3, 4, 5};
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < a; ++k) outer *= dims[k];
    for (int64_t k = a + 1; k < 3; ++k) inner *= dims[k];
    for (int mode = 0; mode < 4; ++mode) {
      const bool exclusive = (mode & 1) != 0, reverse = (mode & 2) != 0;
      INFO("axis ", axis, " exclusive ", exclusive, " reverse ", reverse);
      auto result =
          run_single_node("CumSum", {f32(shape, x), i64(Shape{1}, {axis}, mode == 1)},
                          {{DType::kFloat32, shape}}, cumsum_attributes(exclusive, reverse));
      REQUIRE(result.has_value());
      const std::vector<float> actual = values_of<float>(result.value()[0]);
      const std::vector<float> expected =
          naive_cumsum(x, outer, dims[a], inner, exclusive, reverse);
      for (size_t i = 0; i < x.size(); ++i) CHECK(actual[i] == doctest::Approx(expected[i]));
    }
  }
}

// int64 sums are exact: [1e12, 1e12, 1] → [1e12, 2e12, 2e12 + 1].
TEST_CASE("CumSum int64") {
  auto result = run_single_node(
      "CumSum", {i64(Shape{3}, {1000000000000, 1000000000000, 1}), i64(Shape{}, {0})},
      {{DType::kInt64, Shape{3}}});
  REQUIRE(result.has_value());
  CHECK(values_of<int64_t>(result.value()[0]) ==
        std::vector<int64_t>{1000000000000, 2000000000000, 2000000000001});
}

TEST_CASE("CumSum axis out of range: constant at prepare, runtime at run") {
  auto constant =
      run_single_node("CumSum", {f32(Shape{2, 2}, {1, 2, 3, 4}), i64(Shape{}, {2}, true)},
                      {{DType::kFloat32, Shape{2, 2}}});
  REQUIRE_FALSE(constant.has_value());
  CHECK(constant.status().code() == StatusCode::kInvalidModel);
  auto runtime = run_single_node("CumSum", {f32(Shape{2, 2}, {1, 2, 3, 4}), i64(Shape{}, {-3})},
                                 {{DType::kFloat32, Shape{2, 2}}});
  REQUIRE_FALSE(runtime.has_value());
  CHECK(runtime.status().code() == StatusCode::kInvalidArgument);
  CHECK(runtime.status().message().find("axis -3") != std::string::npos);
}

// x = 3x4 of 1..12.
// triu k=0: [1 2 3 4; 0 6 7 8; 0 0 11 12];   triu k=1: [0 2 3 4; 0 0 7 8; 0 0 0 12]
// tril k=0: [1 0 0 0; 5 6 0 0; 9 10 11 0];    tril k=-1: [0 0 0 0; 5 0 0 0; 9 10 0 0]
TEST_CASE("Trilu upper and lower, hand-computed") {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const Shape shape{3, 4};
  CHECK(run_trilu(x, shape, std::nullopt, true) ==
        std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  CHECK(run_trilu(x, shape, 1, true) == std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  CHECK(run_trilu(x, shape, std::nullopt, false) ==
        std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  CHECK(run_trilu(x, shape, -1, false, true) ==
        std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  // k far outside the matrix: upper k=10 keeps nothing, lower k=10 keeps everything, and huge
  // values do not overflow.
  CHECK(run_trilu(x, shape, 10, true) == std::vector<float>(12, 0.0f));
  CHECK(run_trilu(x, shape, 10, false) == x);
  CHECK(run_trilu(x, shape, INT64_MIN, false) == std::vector<float>(12, 0.0f));
  CHECK(run_trilu(x, shape, INT64_MAX, false) == x);
}

// Batched [2, 3, 3] with every k in [-4, 4]: each element kept iff j - i >= k (upper) or <= k.
TEST_CASE("Trilu batched matches the definition for every k") {
  const Shape shape{2, 3, 3};
  const std::vector<float> x = random_values(18, 3);
  for (int64_t k = -4; k <= 4; ++k) {
    for (bool upper : {true, false}) {
      const std::vector<float> y = run_trilu(x, shape, k, upper);
      for (int64_t m = 0; m < 2; ++m) {
        for (int64_t i = 0; i < 3; ++i) {
          for (int64_t j = 0; j < 3; ++j) {
            const size_t at = static_cast<size_t>((m * 3 + i) * 3 + j);
            const bool keep = upper ? j - i >= k : j - i <= k;
            CHECK(y[at] == (keep ? x[at] : 0.0f));
          }
        }
      }
    }
  }
}

TEST_CASE("Trilu in place and on int64") {
  AttributeMap attributes;
  auto result = run_single_node_in_place("Trilu", {i64(Shape{2, 2}, {1, 2, 3, 4})},
                                         {DType::kInt64, Shape{2, 2}}, attributes);
  REQUIRE(result.has_value());
  CHECK(values_of<int64_t>(result->output) == std::vector<int64_t>{1, 2, 0, 4});
  CHECK(result->in_place_inputs == cpu::kInPlaceInput0);
}

TEST_CASE("Trilu rejects rank 1") {
  auto result = run_single_node("Trilu", {f32(Shape{3}, {1, 2, 3})}, {{DType::kFloat32, Shape{3}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
}
