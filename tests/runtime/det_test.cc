// Det: hand-computed determinants (2x2, 3x3 needing a row swap, singular, 1x1), a batch checked
// against cofactor expansion, and shape errors.
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

// Cofactor expansion along the first row (exact for small matrices; the independent reference).
double cofactor_det(const std::vector<double>& m, int64_t n) {
  if (n == 1) return m[0];
  double det = 0.0;
  for (int64_t col = 0; col < n; ++col) {
    std::vector<double> minor;
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (j != col) minor.push_back(m[static_cast<size_t>(i * n + j)]);
    const double sign = col % 2 == 0 ? 1.0 : -1.0;
    det += sign * m[static_cast<size_t>(col)] * cofactor_det(minor, n - 1);
  }
  return det;
}

}  // namespace

// [[1, 2], [3, 4]] → -2; [[0, 1, 2], [3, 4, 5], [6, 7, 9]] (zero pivot: needs a swap) → -3;
// [[1, 2], [2, 4]] → 0; [[5]] → 5.
TEST_CASE("Det hand-computed") {
  auto two = run_single_node("Det", {f32(Shape{2, 2}, {1, 2, 3, 4})}, {{DType::kFloat32, Shape{}}});
  REQUIRE(two.has_value());
  CHECK(values_of<float>(two.value()[0])[0] == doctest::Approx(-2.0));
  auto swap = run_single_node("Det", {f32(Shape{3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 9})},
                              {{DType::kFloat32, Shape{}}});
  REQUIRE(swap.has_value());
  CHECK(values_of<float>(swap.value()[0])[0] == doctest::Approx(-3.0));
  auto singular =
      run_single_node("Det", {f32(Shape{2, 2}, {1, 2, 2, 4})}, {{DType::kFloat32, Shape{}}});
  REQUIRE(singular.has_value());
  CHECK(values_of<float>(singular.value()[0])[0] == doctest::Approx(0.0));
  auto one = run_single_node("Det", {f32(Shape{1, 1}, {5})}, {{DType::kFloat32, Shape{}}});
  REQUIRE(one.has_value());
  CHECK(values_of<float>(one.value()[0])[0] == 5.0f);
}

// A [2, 3, 4, 4] batch of random matrices against cofactor expansion, matrix by matrix.
TEST_CASE("Det batched matches cofactor expansion") {
  const std::vector<float> x = random_values(2 * 3 * 16, 21);
  auto result =
      run_single_node("Det", {f32(Shape{2, 3, 4, 4}, x)}, {{DType::kFloat32, Shape{2, 3}}});
  REQUIRE(result.has_value());
  const std::vector<float> y = values_of<float>(result.value()[0]);
  for (size_t k = 0; k < 6; ++k) {
    const std::vector<double> m(x.begin() + static_cast<std::ptrdiff_t>(k * 16),
                                x.begin() + static_cast<std::ptrdiff_t>(k * 16 + 16));
    CHECK(y[k] == doctest::Approx(cofactor_det(m, 4)).epsilon(1e-4));
  }
}

TEST_CASE("Det rejects non-square input and a wrong output shape") {
  auto square =
      run_single_node("Det", {f32(Shape{2, 3}, random_values(6, 1))}, {{DType::kFloat32, Shape{}}});
  REQUIRE_FALSE(square.has_value());
  CHECK(square.status().code() == StatusCode::kInvalidModel);
  auto output = run_single_node("Det", {f32(Shape{2, 2, 2}, random_values(8, 1))},
                                {{DType::kFloat32, Shape{}}});
  REQUIRE_FALSE(output.has_value());
  CHECK(output.status().code() == StatusCode::kInvalidModel);
}
