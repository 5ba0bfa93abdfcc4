// Gemm and MatMul with one row of A (gemm_vector.h): transB 0 and 1, alpha, beta and a broadcast C
// match a double-precision loop, the bits do not change with the thread count, and a NaN in A
// reaches every output while an Inf in B reaches only its column.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

AttributeMap gemm_attributes(float alpha, float beta, int64_t trans_b) {
  AttributeMap attributes;
  attributes.set("alpha", float_attr(alpha));
  attributes.set("beta", float_attr(beta));
  attributes.set("transB", int_attr(trans_b));
  return attributes;
}

std::vector<float> gemm_row(const std::vector<float>& a, const std::vector<float>& b,
                            const std::vector<float>& c, int64_t k, int64_t n, bool trans_b,
                            int threads) {
  const Shape b_shape = trans_b ? Shape{n, k} : Shape{k, n};
  auto result = run_single_node("Gemm", {f32(Shape{1, k}, a), f32(b_shape, b), f32(Shape{n}, c)},
                                {{DType::kFloat32, Shape{1, n}}},
                                gemm_attributes(0.5f, 2.0f, trans_b ? 1 : 0), threads);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

TEST_CASE("one-row Gemm matches a double loop at any thread count") {
  for (const bool trans_b : {false, true}) {
    for (const int64_t k : {1, 15, 16, 17, 1280}) {
      const int64_t n = 1000;
      CAPTURE(trans_b);
      CAPTURE(k);
      const auto a = random_values(k, 1);
      const auto b = random_values(k * n, 2);
      const auto c = random_values(n, 3);
      const auto one = gemm_row(a, b, c, k, n, trans_b, 1);
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(a[static_cast<size_t>(p)]) *
                 b[static_cast<size_t>(trans_b ? j * k + p : p * n + j)];
        }
        const double expected = 0.5 * sum + 2.0 * c[static_cast<size_t>(j)];
        CHECK(std::fabs(one[static_cast<size_t>(j)] - expected) <= 1e-5 * (1.0 + std::sqrt(k)));
      }
      for (const int threads : {2, 3}) {
        const auto other = gemm_row(a, b, c, k, n, trans_b, threads);
        CHECK(std::memcmp(one.data(), other.data(), one.size() * sizeof(float)) == 0);
      }
    }
  }
}

// The documented order of every output's sum: 16 lanes over k in order, the lanes in order, then
// the last k % 16 products. Columns run four at a time and singly (n = 7: one group and three
// left over, or at 3 threads groups cut differently), so each way must give these bits.
TEST_CASE("one-row Gemm sums each output in its documented order, four columns at once or one") {
  const int64_t n = 7;
  for (const int64_t k : {5, 16, 37, 1280}) {
    CAPTURE(k);
    const auto a = random_values(k, 11);
    const auto b = random_values(k * n, 12);
    const std::vector<float> c(static_cast<size_t>(n), 0.0f);
    for (const int threads : {1, 3}) {
      CAPTURE(threads);
      const auto y = gemm_row(a, b, c, k, n, /*trans_b=*/true, threads);
      for (int64_t j = 0; j < n; ++j) {
        float lanes[16] = {};
        int64_t p = 0;
        for (; p + 16 <= k; p += 16) {
          for (int64_t l = 0; l < 16; ++l) {
            const float product =
                a[static_cast<size_t>(p + l)] * b[static_cast<size_t>(j * k + p + l)];
            lanes[l] += product;
          }
        }
        float sum = 0.0f;
        for (const float lane : lanes) sum += lane;
        for (; p < k; ++p) {
          const float product = a[static_cast<size_t>(p)] * b[static_cast<size_t>(j * k + p)];
          sum += product;
        }
        const float expected = 0.5f * sum + 2.0f * 0.0f;
        CHECK(std::memcmp(&y[static_cast<size_t>(j)], &expected, sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("one-row Gemm carries NaN and Inf where they reach") {
  const int64_t k = 40, n = 300;
  for (const bool trans_b : {false, true}) {
    CAPTURE(trans_b);
    auto a = random_values(k, 4);
    auto b = random_values(k * n, 5);
    const auto c = random_values(n, 6);
    b[static_cast<size_t>(trans_b ? 7 * k + 3 : 3 * n + 7)] =
        std::numeric_limits<float>::infinity();  // column 7
    auto y = gemm_row(a, b, c, k, n, trans_b, 2);
    for (int64_t j = 0; j < n; ++j) {
      CAPTURE(j);
      CHECK(std::isinf(y[static_cast<size_t>(j)]) == (j == 7));
    }
    a[5] = std::numeric_limits<float>::quiet_NaN();
    y = gemm_row(a, b, c, k, n, trans_b, 2);
    for (const float v : y) CHECK(std::isnan(v));
  }
}

TEST_CASE("one-row MatMul sweeps B and keeps its bits at any thread count") {
  const int64_t k = 300, n = 700;
  const auto a = random_values(k, 7);
  const auto b = random_values(k * n, 8);
  std::vector<std::vector<float>> runs;
  for (const int threads : {1, 2, 3}) {
    auto result = run_single_node("MatMul", {f32(Shape{1, k}, a), f32(Shape{k, n}, b)},
                                  {{DType::kFloat32, Shape{1, n}}}, {}, threads);
    REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
    runs.push_back(values_of<float>((*result)[0]));
  }
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      sum += static_cast<double>(a[static_cast<size_t>(p)]) * b[static_cast<size_t>(p * n + j)];
    }
    CHECK(std::fabs(runs[0][static_cast<size_t>(j)] - sum) <= 1e-4);
  }
  CHECK(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(float)) == 0);
  CHECK(std::memcmp(runs[0].data(), runs[2].data(), runs[0].size() * sizeof(float)) == 0);
}

}  // namespace
}  // namespace onepool::testing
