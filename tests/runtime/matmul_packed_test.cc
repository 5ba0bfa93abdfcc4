// Float MatMul on the packed-A GEMM (matmul_packed.h): products with at least one panel of rows
// match a double-precision loop, give the same bits at 1, 2 and 3 threads (each output is one
// multiply-add chain over k in order, however the columns are split), and carry NaN and Inf
// into exactly the rows and columns they reach.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

std::vector<float> matmul(const Shape& a_shape, const std::vector<float>& a, const Shape& b_shape,
                          const std::vector<float>& b, const Shape& y_shape, int threads,
                          bool constant_b = false) {
  auto result = run_single_node("MatMul", {f32(a_shape, a), f32(b_shape, b, constant_b)},
                                {{DType::kFloat32, y_shape}}, {}, threads);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

// batch x [m, k] times batch x [k, n] in double.
std::vector<double> reference(int64_t batch, int64_t m, int64_t k, int64_t n,
                              const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> y(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(a[static_cast<size_t>((t * m + i) * k + p)]) *
                 b[static_cast<size_t>((t * k + p) * n + j)];
        }
        y[static_cast<size_t>((t * m + i) * n + j)] = sum;
      }
  return y;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

struct Case {
  int64_t batch, m, k, n;
};

TEST_CASE("packed MatMul matches a double loop and keeps its bits at every thread count") {
  const Case cases[] = {
      {1, 13, 37, 45}, {1, 24, 128, 64}, {1, 50, 300, 33}, {3, 20, 17, 40}, {2, 12, 260, 97}};
  uint32_t seed = 3;
  for (const Case& c : cases) {
    CAPTURE(c.batch);
    CAPTURE(c.m);
    CAPTURE(c.k);
    CAPTURE(c.n);
    const Shape a_shape{c.batch, c.m, c.k}, b_shape{c.batch, c.k, c.n}, y_shape{c.batch, c.m, c.n};
    const auto a = random_values(c.batch * c.m * c.k, seed++);
    const auto b = random_values(c.batch * c.k * c.n, seed++);
    const auto one = matmul(a_shape, a, b_shape, b, y_shape, 1);
    const auto expected = reference(c.batch, c.m, c.k, c.n, a, b);
    for (size_t i = 0; i < one.size(); ++i) {
      CAPTURE(i);
      CHECK(std::fabs(one[i] - expected[i]) <= 1e-5 * static_cast<double>(c.k));
    }
    CHECK(same_bits(one, matmul(a_shape, a, b_shape, b, y_shape, 2)));
    CHECK(same_bits(one, matmul(a_shape, a, b_shape, b, y_shape, 3)));
  }
}

// A constant B is packed once at prepare time and read from its strips: the same chains, so
// the same bits as B read in place, whether A's batch folds into one product or B is shared by
// several.
TEST_CASE("packed MatMul with constant weights gives the bits of weights read in place") {
  const struct {
    Shape a, b, y;
  } cases[] = {{{2, 20, 300}, {300, 97}, {2, 20, 97}},
               {{1, 128, 256}, {256, 64}, {1, 128, 64}},
               {{3, 2, 14, 33}, {1, 33, 40}, {3, 2, 14, 40}},
               {{13, 129}, {129, 31}, {13, 31}}};
  uint32_t seed = 40;
  for (const auto& c : cases) {
    CAPTURE(c.a.to_string());
    CAPTURE(c.b.to_string());
    const auto a = random_values(c.a.element_count(), seed++);
    const auto b = random_values(c.b.element_count(), seed++);
    const auto in_place = matmul(c.a, a, c.b, b, c.y, 2);
    CHECK(same_bits(in_place, matmul(c.a, a, c.b, b, c.y, 1, true)));
    CHECK(same_bits(in_place, matmul(c.a, a, c.b, b, c.y, 2, true)));
    CHECK(same_bits(in_place, matmul(c.a, a, c.b, b, c.y, 3, true)));
  }
}

TEST_CASE("packed MatMul carries NaN and Inf to the outputs they reach") {
  const int64_t m = 16, k = 40, n = 35;
  auto a = random_values(m * k, 11);
  auto b = random_values(k * n, 12);
  a[static_cast<size_t>(5 * k + 7)] = std::numeric_limits<float>::quiet_NaN();  // row 5
  b[static_cast<size_t>(3 * n + 20)] = std::numeric_limits<float>::infinity();  // column 20
  for (const bool constant_b : {false, true}) {
    CAPTURE(constant_b);
    const auto y = matmul(Shape{m, k}, a, Shape{k, n}, b, Shape{m, n}, 2, constant_b);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        const float v = y[static_cast<size_t>(i * n + j)];
        if (i == 5) {
          CHECK(std::isnan(v));
        } else if (j == 20) {
          CHECK(std::isinf(v));  // a[i][3] * inf, never 0 * inf here
        } else {
          CHECK(std::isfinite(v));
        }
      }
    }
  }
}

}  // namespace
}  // namespace onepool::testing
