// LRN and MeanVarianceNormalization against naive references (the ONNX formulas written as
// direct loops in double), plus hand-computed small cases and the errors.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap lrn_attributes(int64_t size, float alpha, float beta, float bias) {
  AttributeMap attributes;
  attributes.set("size", int_attr(size));
  attributes.set("alpha", float_attr(alpha));
  attributes.set("beta", float_attr(beta));
  attributes.set("bias", float_attr(bias));
  return attributes;
}

// The ONNX reference loop: square_sum over [c - floor((size-1)/2), c + ceil((size-1)/2)].
std::vector<double> naive_lrn(const std::vector<float>& x, int64_t N, int64_t C, int64_t S,
                              int64_t size, double alpha, double beta, double bias) {
  std::vector<double> y(x.size());
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t s = 0; s < S; ++s) {
        double square_sum = 0.0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(C - 1, c + after); ++k) {
          const double v = x[static_cast<size_t>((n * C + k) * S + s)];
          square_sum += v * v;
        }
        const size_t at = static_cast<size_t>((n * C + c) * S + s);
        y[at] = x[at] / std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
      }
    }
  }
  return y;
}

}  // namespace

// x = [1, 2, 3] on 3 channels (1x3x1x1), size 3, alpha 3, beta 1, bias 1:
// square sums [1+4, 1+4+9, 4+9] = [5, 14, 13]; y = x / (1 + 1 * sums) = [1/6, 2/15, 3/14].
TEST_CASE("LRN hand-computed") {
  auto result =
      run_single_node("LRN", {f32(Shape{1, 3, 1, 1}, {1, 2, 3})},
                      {{DType::kFloat32, Shape{1, 3, 1, 1}}}, lrn_attributes(3, 3.0f, 1.0f, 1.0f));
  REQUIRE(result.has_value());
  const std::vector<float> y = values_of<float>(result.value()[0]);
  CHECK(y[0] == doctest::Approx(1.0 / 6.0));
  CHECK(y[1] == doctest::Approx(2.0 / 15.0));
  CHECK(y[2] == doctest::Approx(3.0 / 14.0));
}

// [2, 7, 3, 4] random, sizes 1..8 (even sizes have an asymmetric window), against the loop.
TEST_CASE("LRN matches the naive loop for every window size") {
  const int64_t N = 2, C = 7, S = 12;
  const std::vector<float> x = random_values(N * C * S, 5);
  for (int64_t size = 1; size <= 8; ++size) {
    INFO("size ", size);
    auto result =
        run_single_node("LRN", {f32(Shape{N, C, 3, 4}, x)}, {{DType::kFloat32, Shape{N, C, 3, 4}}},
                        lrn_attributes(size, 0.5f, 0.75f, 2.0f));
    REQUIRE(result.has_value());
    const std::vector<float> actual = values_of<float>(result.value()[0]);
    const std::vector<double> expected = naive_lrn(x, N, C, S, size, 0.5, 0.75, 2.0);
    for (size_t i = 0; i < actual.size(); ++i) {
      CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5));
    }
  }
}

TEST_CASE("LRN requires size >= 1 and rank >= 3") {
  auto no_size =
      run_single_node("LRN", {f32(Shape{1, 2, 1}, {1, 2})}, {{DType::kFloat32, Shape{1, 2, 1}}});
  REQUIRE_FALSE(no_size.has_value());
  CHECK(no_size.status().code() == StatusCode::kInvalidModel);
  auto rank2 = run_single_node("LRN", {f32(Shape{1, 2}, {1, 2})}, {{DType::kFloat32, Shape{1, 2}}},
                               lrn_attributes(1, 1, 1, 1));
  REQUIRE_FALSE(rank2.has_value());
  CHECK(rank2.status().code() == StatusCode::kInvalidModel);
}

// x = [1, 3] per channel over one channel, axes default [0, 2, 3] on [2, 1, 1, 1]:
// mean 2, std 1 → y = [-1, 1] (up to the 1e-9 in the denominator).
TEST_CASE("MeanVarianceNormalization hand-computed") {
  auto result = run_single_node("MeanVarianceNormalization", {f32(Shape{2, 1, 1, 1}, {1, 3})},
                                {{DType::kFloat32, Shape{2, 1, 1, 1}}});
  REQUIRE(result.has_value());
  const std::vector<float> y = values_of<float>(result.value()[0]);
  CHECK(y[0] == doctest::Approx(-1.0));
  CHECK(y[1] == doctest::Approx(1.0));
}

// [3, 4, 5] random with axes {1} and {0, 2}: each kept group has mean 0 and population
// variance 1 after normalization, and y = (x - mean) / std element by element.
TEST_CASE("MeanVarianceNormalization over arbitrary axes matches the definition") {
  const std::vector<int64_t> dims = {3, 4, 5};
  const std::vector<float> x = random_values(60, 9);
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0, -1}}) {
    AttributeMap attributes;
    attributes.set("axes", ints_attr(axes));
    auto result = run_single_node("MeanVarianceNormalization", {f32(Shape{3, 4, 5}, x)},
                                  {{DType::kFloat32, Shape{3, 4, 5}}}, attributes);
    REQUIRE(result.has_value());
    const std::vector<float> y = values_of<float>(result.value()[0]);
    // Group key: the coordinates on the kept axes.
    auto key = [&](int64_t i) {
      const int64_t c[3] = {i / 20, (i / 5) % 4, i % 5};
      return axes.size() == 1 ? c[0] * 5 + c[2] : c[1];
    };
    std::vector<double> sum(20, 0.0), squares(20, 0.0), count(20, 0.0);
    for (int64_t i = 0; i < 60; ++i) {
      sum[static_cast<size_t>(key(i))] += x[static_cast<size_t>(i)];
      count[static_cast<size_t>(key(i))] += 1.0;
    }
    for (int64_t i = 0; i < 60; ++i) {
      const auto k = static_cast<size_t>(key(i));
      const double d = x[static_cast<size_t>(i)] - sum[k] / count[k];
      squares[k] += d * d;
    }
    for (int64_t i = 0; i < 60; ++i) {
      const auto k = static_cast<size_t>(key(i));
      const double expected = (x[static_cast<size_t>(i)] - sum[k] / count[k]) /
                              (std::sqrt(squares[k] / count[k]) + 1e-9);
      CHECK(y[static_cast<size_t>(i)] == doctest::Approx(expected).epsilon(1e-5));
    }
  }
}

TEST_CASE("MeanVarianceNormalization rejects an axis out of range") {
  AttributeMap attributes;
  attributes.set("axes", ints_attr({3}));
  auto result =
      run_single_node("MeanVarianceNormalization", {f32(Shape{2, 2, 2}, random_values(8, 1))},
                      {{DType::kFloat32, Shape{2, 2, 2}}}, attributes);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
}
