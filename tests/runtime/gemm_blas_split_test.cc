// Products that run on CBLAS (gemm_blas.h: Gemm with more than one row, MatMul with fewer rows
// than a micro-kernel panel, the recurrent and transposed-convolution products) give the same
// bits at every thread count. OpenBLAS rounds a product split in two differently from the whole
// (its small-matrix kernels, and with OPENBLAS_CORETYPE=Haswell its tiles), so the split into
// blocks must follow the shape alone, never the thread count.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
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
