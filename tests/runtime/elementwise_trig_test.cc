// Trigonometric / hyperbolic functions and the activations Celu, Softsign, Shrink,
// ThresholdedRelu, Mish: each kernel against its formula evaluated in double, on values that
// include the edges of each domain (NaN out of domain, ±Inf at the poles); and CastLike.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> run_unary(const std::string& op, const std::vector<float>& x,
                             const AttributeMap& attributes = {}) {
  const Shape shape{static_cast<int64_t>(x.size())};
  auto result = run_single_node(op, {f32(shape, x)}, {{DType::kFloat32, shape}}, attributes);
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

// Compares element by element with `reference` (NaN must give NaN, Inf the same Inf).
void check_against(const std::string& op, const std::vector<float>& x,
                   const std::function<double(double)>& reference,
                   const AttributeMap& attributes = {}) {
  const std::vector<float> actual = run_unary(op, x, attributes);
  REQUIRE(actual.size() == x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO(op, "(", x[i], ")");
    const double expected = reference(x[i]);
    if (std::isnan(expected)) {
      CHECK(std::isnan(actual[i]));
    } else if (std::isinf(expected)) {
      CHECK(actual[i] == static_cast<float>(expected));
    } else {
      CHECK(actual[i] == doctest::Approx(expected).epsilon(1e-6));
    }
  }
}

}  // namespace

// The inverse functions are NaN outside their domain (asin(2), acos(-1.5), acosh(0.5),
// atanh(2)); atanh(±1) = ±Inf; every one passes NaN through.
TEST_CASE("trigonometric and hyperbolic functions match <cmath> in double") {
  const std::vector<float> x = {-2.0f, -1.0f, -0.5f, 0.0f, 0.25f, 1.0f, 1.5f, 3.0f, kNaN};
  check_against("Tan", x, [](double v) { return std::tan(v); });
  check_against("Asin", x, [](double v) { return std::asin(v); });
  check_against("Acos", x, [](double v) { return std::acos(v); });
  check_against("Atan", x, [](double v) { return std::atan(v); });
  check_against("Sinh", x, [](double v) { return std::sinh(v); });
  check_against("Cosh", x, [](double v) { return std::cosh(v); });
  check_against("Asinh", x, [](double v) { return std::asinh(v); });
  check_against("Acosh", x, [](double v) { return std::acosh(v); });
  check_against("Atanh", x, [](double v) { return std::atanh(v); });
}

// Hand values: asin(1) = pi/2, acos(-1) = pi, atan(1) = pi/4, cosh(0) = 1, atanh(1) = +Inf.
TEST_CASE("trigonometric functions: hand-computed values") {
  CHECK(run_unary("Asin", {1.0f})[0] == doctest::Approx(1.5707963));
  CHECK(run_unary("Acos", {-1.0f})[0] == doctest::Approx(3.1415927));
  CHECK(run_unary("Atan", {1.0f})[0] == doctest::Approx(0.7853982));
  CHECK(run_unary("Cosh", {0.0f})[0] == 1.0f);
  CHECK(run_unary("Atanh", {1.0f})[0] == kInf);
  CHECK(run_unary("Atanh", {-1.0f})[0] == -kInf);
  CHECK(std::isnan(run_unary("Asin", {2.0f})[0]));
}

// Celu with alpha 2: x > 0 → x; else 2 * (exp(x / 2) - 1): Celu(-2) = 2 * (e^-1 - 1) = -1.2642411.
TEST_CASE("Celu") {
  AttributeMap attributes;
  attributes.set("alpha", float_attr(2.0f));
  const std::vector<float> y = run_unary("Celu", {-2.0f, 0.0f, 3.0f}, attributes);
  CHECK(y[0] == doctest::Approx(-1.2642411));
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 3.0f);
  check_against("Celu", {-5.0f, -0.1f, 0.5f, kNaN},
                [](double v) { return v > 0 ? v : std::expm1(v); });  // alpha defaults to 1
}

// Softsign: x / (1 + |x|): -3 → -0.75, 1 → 0.5, ±Inf → ±1.
TEST_CASE("Softsign") {
  const std::vector<float> y = run_unary("Softsign", {-3.0f, 0.0f, 1.0f, kInf});
  CHECK(y[0] == -0.75f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 0.5f);
  CHECK(std::isnan(y[3]));  // Inf / Inf, as the formula gives
}

// Shrink lambd 1.5, bias 1: x < -1.5 → x + 1; x > 1.5 → x - 1; else 0. NaN stays NaN.
TEST_CASE("Shrink soft and hard") {
  AttributeMap soft;
  soft.set("lambd", float_attr(1.5f));
  soft.set("bias", float_attr(1.0f));
  const std::vector<float> y = run_unary("Shrink", {-2.0f, -1.5f, 0.0f, 1.5f, 2.0f, kNaN}, soft);
  CHECK(y[0] == -1.0f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 0.0f);
  CHECK(y[3] == 0.0f);
  CHECK(y[4] == 1.0f);
  CHECK(std::isnan(y[5]));
  // Defaults: lambd 0.5, bias 0 (hard shrink).
  CHECK(run_unary("Shrink", {-0.75f, 0.25f, 0.75f}) == std::vector<float>{-0.75f, 0.0f, 0.75f});
}

// ThresholdedRelu alpha 2: x > 2 → x, else 0 (2 itself is 0).
TEST_CASE("ThresholdedRelu") {
  AttributeMap attributes;
  attributes.set("alpha", float_attr(2.0f));
  const std::vector<float> y = run_unary("ThresholdedRelu", {1.0f, 2.0f, 2.5f, -3.0f}, attributes);
  CHECK(y == std::vector<float>{0.0f, 0.0f, 2.5f, 0.0f});
  CHECK(run_unary("ThresholdedRelu", {1.0f, 1.5f}) == std::vector<float>{0.0f, 1.5f});
}

// Mish(x) = x * tanh(log(1 + e^x)); large x gives x, large negative x gives -0.
TEST_CASE("Mish") {
  check_against("Mish", {-30.0f, -2.0f, -0.5f, 0.0f, 0.5f, 2.0f, 30.0f, 100.0f},
                [](double v) { return v * std::tanh(std::log1p(std::exp(v))); });
}

TEST_CASE("trigonometric functions reject integer inputs") {
  auto result = run_single_node("Tan", {i64(Shape{2}, {1, 2})}, {{DType::kInt64, Shape{2}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kUnsupported);
}

// CastLike casts to input 1's dtype: float [1.5, -2.25] → double [1.5, -2.25]; a `target_type`
// whose dtype differs from the output's is a malformed node.
TEST_CASE("CastLike takes the dtype of its second input") {
  const TestInput like = {make_host_tensor(DType::kFloat64, Shape{1}, std::vector<double>{0.0})};
  auto result = run_single_node("CastLike", {f32(Shape{2}, {1.5f, -2.25f}), like},
                                {{DType::kFloat64, Shape{2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<double>(result.value()[0]) == std::vector<double>{1.5, -2.25});
  auto mismatch = run_single_node("CastLike", {f32(Shape{2}, {1.5f, -2.25f}), like},
                                  {{DType::kInt64, Shape{2}}});
  REQUIRE_FALSE(mismatch.has_value());
  CHECK(mismatch.status().code() == StatusCode::kInvalidModel);
}
