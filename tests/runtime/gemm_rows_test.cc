// Gemm with several rows (gemm_kernel.cc: the packed-A GEMM for A, B or a constant B^T on AVX2 /
// AVX-512; CBLAS for transA and a B^T computed at run time) and MatMul with fewer rows than a
// micro-kernel panel (CBLAS): against a double-precision loop with alpha, beta and C broadcast,
// and the same bits at every thread count. OpenBLAS rounds a product split in two differently
// from the whole (its small-matrix kernels, and with OPENBLAS_CORETYPE=Haswell its tiles), so
// gemm_blas.h cuts products by their shape alone, never by the thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

struct ProductCase {
  int64_t m, n, k;
};

// Shapes OpenBLAS rounded differently when cut in halves (by rows or by columns).
const ProductCase kCases[] = {{160, 49, 320}, {16, 64, 1280}, {200, 200, 200}, {64, 1568, 64}};

AttributeMap transposes(int64_t trans_a, int64_t trans_b) {
  AttributeMap attributes;
  attributes.set("transA", int_attr(trans_a));
  attributes.set("transB", int_attr(trans_b));
  attributes.set("alpha", float_attr(0.75f));
  attributes.set("beta", float_attr(1.5f));
  return attributes;
}

std::vector<float> run_product(const std::string& op,
                               const std::vector<std::optional<TestInput>>& in, Shape out,
                               const AttributeMap& attributes, int threads) {
  auto result = run_single_node(op, in, {{DType::kFloat32, out}}, attributes, threads);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

void check_same_bits(const std::vector<float>& one, const std::vector<float>& other) {
  REQUIRE(one.size() == other.size());
  size_t differing = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    differing += std::memcmp(&one[i], &other[i], sizeof(float)) != 0 ? 1 : 0;
  }
  CHECK(differing == 0);
}

TEST_CASE("Gemm with several rows keeps its bits at every thread count") {
  for (const ProductCase& c : kCases) {
    for (const int64_t trans_a : {0, 1}) {
      for (const int64_t trans_b : {0, 1}) {
        CAPTURE(c.m);
        CAPTURE(c.n);
        CAPTURE(c.k);
        CAPTURE(trans_a);
        CAPTURE(trans_b);
        const Shape a_shape = trans_a != 0 ? Shape{c.k, c.m} : Shape{c.m, c.k};
        const Shape b_shape = trans_b != 0 ? Shape{c.n, c.k} : Shape{c.k, c.n};
        const std::vector<std::optional<TestInput>> inputs = {
            f32(a_shape, random_values(c.m * c.k, 1)), f32(b_shape, random_values(c.k * c.n, 2)),
            f32(Shape{c.n}, random_values(c.n, 3))};
        const auto attributes = transposes(trans_a, trans_b);
        const auto one = run_product("Gemm", inputs, {c.m, c.n}, attributes, 1);
        for (const int threads : {2, 3, 4}) {
          CAPTURE(threads);
          check_same_bits(one, run_product("Gemm", inputs, {c.m, c.n}, attributes, threads));
        }
      }
    }
  }
}

// Y = alpha * op(A) * op(B) + beta * C in double precision; C is [N], [M, 1] or [M, N].
std::vector<double> gemm_reference(const std::vector<float>& a, const std::vector<float>& b,
                                   const std::vector<float>& c, const Shape& c_shape,
                                   const ProductCase& s, bool trans_a, bool trans_b, float alpha,
                                   float beta) {
  std::vector<double> y(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < s.k; ++p) {
        const float a_ip = a[static_cast<size_t>(trans_a ? p * s.m + i : i * s.k + p)];
        const float b_pj = b[static_cast<size_t>(trans_b ? j * s.k + p : p * s.n + j)];
        sum += static_cast<double>(a_ip) * b_pj;
      }
      const int64_t c_index = c_shape.rank() == 1 ? j : c_shape[1] == 1 ? i : i * s.n + j;
      y[static_cast<size_t>(i * s.n + j)] =
          alpha * sum + static_cast<double>(beta) * c[static_cast<size_t>(c_index)];
    }
  }
  return y;
}

TEST_CASE("Gemm with several rows matches a double loop: constant or run-time B, C broadcast") {
  const ProductCase s{37, 50, 70};  // rows past whole panels, columns past whole tiles
  const float alpha = -1.25f;
  const float beta = 0.5f;
  for (const bool constant_b : {false, true}) {
    for (const bool trans_a : {false, true}) {
      for (const bool trans_b : {false, true}) {
        for (const Shape& c_shape : {Shape{s.n}, Shape{s.m, 1}, Shape{s.m, s.n}}) {
          CAPTURE(constant_b);
          CAPTURE(trans_a);
          CAPTURE(trans_b);
          CAPTURE(c_shape.to_string());
          const auto a = random_values(s.m * s.k, 7);
          const auto b = random_values(s.k * s.n, 8);
          const auto c = random_values(c_shape.element_count(), 9);
          AttributeMap attributes;
          attributes.set("transA", int_attr(trans_a ? 1 : 0));
          attributes.set("transB", int_attr(trans_b ? 1 : 0));
          attributes.set("alpha", float_attr(alpha));
          attributes.set("beta", float_attr(beta));
          const std::vector<std::optional<TestInput>> inputs = {
              f32(trans_a ? Shape{s.k, s.m} : Shape{s.m, s.k}, a),
              f32(trans_b ? Shape{s.n, s.k} : Shape{s.k, s.n}, b, constant_b), f32(c_shape, c)};
          const auto y = run_product("Gemm", inputs, {s.m, s.n}, attributes, 2);
          const auto expected = gemm_reference(a, b, c, c_shape, s, trans_a, trans_b, alpha, beta);
          for (size_t i = 0; i < y.size(); ++i) {
            CAPTURE(i);
            CHECK(std::fabs(y[i] - expected[i]) <= 1e-5 * (1.0 + std::fabs(expected[i])));
          }
        }
      }
    }
  }
}

TEST_CASE("Gemm with several rows carries a NaN in A to its row and an Inf in B to its column") {
  const ProductCase s{24, 40, 30};
  for (const bool constant_b : {false, true}) {
    CAPTURE(constant_b);
    auto a = random_values(s.m * s.k, 10);
    auto b = random_values(s.k * s.n, 11);
    a[static_cast<size_t>(5 * s.k + 3)] = std::nanf("");                           // row 5
    b[static_cast<size_t>(7 * s.n + 9)] = std::numeric_limits<float>::infinity();  // column 9
    const std::vector<std::optional<TestInput>> inputs = {f32(Shape{s.m, s.k}, a),
                                                          f32(Shape{s.k, s.n}, b, constant_b),
                                                          f32(Shape{s.n}, random_values(s.n, 12))};
    const auto y = run_product("Gemm", inputs, {s.m, s.n}, {}, 2);
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        const float v = y[static_cast<size_t>(i * s.n + j)];
        CHECK(std::isnan(v) == (i == 5));
        if (i != 5) CHECK(std::isinf(v) == (j == 9));
      }
    }
  }
}

TEST_CASE("MatMul with few rows (CBLAS) keeps its bits at every thread count") {
  for (const ProductCase& c :
       {ProductCase{4, 640, 1280}, ProductCase{8, 400, 200}, ProductCase{10, 300, 300}}) {
    CAPTURE(c.m);
    const std::vector<std::optional<TestInput>> inputs = {
        f32(Shape{c.m, c.k}, random_values(c.m * c.k, 4)),
        f32(Shape{c.k, c.n}, random_values(c.k * c.n, 5))};
    const auto one = run_product("MatMul", inputs, {c.m, c.n}, {}, 1);
    for (const int threads : {2, 3}) {
      CAPTURE(threads);
      check_same_bits(one, run_product("MatMul", inputs, {c.m, c.n}, {}, threads));
    }
  }
}

}  // namespace
}  // namespace onepool::testing
