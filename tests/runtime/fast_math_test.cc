// fast_exp, fast_sigmoid and fast_one_plus_erf (runtime/cpu/kernels/fast_math.h) against
// double-precision libm.
#include "runtime/cpu/kernels/fast_math.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace onepool::cpu {
namespace {

// Every float in [-110, 95] on a grid of 2^-10 plus ~1M floats stepped by raw bits: results in
// the normal range are within 2e-7 relative of exp in double (measured worst: 8.0e-8),
// denormal results within 2 denormal steps, and e^x overflows to inf exactly where the float
// result would (x > 88.7228).
TEST_CASE("fast_exp is within 2e-7 relative of exp over the whole float range") {
  std::vector<float> xs;
  for (int i = -110 * 1024; i <= 95 * 1024; ++i) xs.push_back(static_cast<float>(i) / 1024.0f);
  for (uint32_t bits = 0; bits < 0xffffffffu - 4096; bits += 4093) {
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    if (std::isfinite(x)) xs.push_back(x);
  }
  double worst = 0.0;
  for (float x : xs) {
    const double exact = std::exp(static_cast<double>(x));
    const float actual = fast_exp(x);
    CAPTURE(x);
    if (exact > std::numeric_limits<float>::max() * (1.0 + 1e-7)) {
      CHECK(std::isinf(actual));
      continue;
    }
    if (exact < std::numeric_limits<float>::min()) {
      CHECK(std::fabs(actual - exact) <= 2.0 * std::numeric_limits<float>::denorm_min());
      continue;
    }
    const double relative = std::fabs(actual - exact) / exact;
    worst = std::max(worst, relative);
    if (relative > 2e-7) CHECK(relative <= 2e-7);
  }
  MESSAGE("fast_exp worst relative error: ", worst);
  CHECK(worst <= 2e-7);
}

// inf -> inf, -inf -> 0, NaN -> NaN, 0 -> exactly 1, 1 -> e.
TEST_CASE("fast_exp special values") {
  CHECK(std::isinf(fast_exp(std::numeric_limits<float>::infinity())));
  CHECK(fast_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(fast_exp(0.0f) == 1.0f);
  CHECK(fast_exp(1.0f) == doctest::Approx(2.718281828).epsilon(2e-7));
  CHECK(fast_exp(-200.0f) == 0.0f);
  CHECK(std::isinf(fast_exp(200.0f)));
}

// Sigmoid over [-100, 100]: within 3e-7 relative of the double formula (measured: 1.3e-7); 0 ->
// 0.5; saturates to exactly 1 above ~17 and to tiny positives (then 0) far below.
TEST_CASE("fast_sigmoid matches the double formula") {
  double worst = 0.0;
  for (int i = -100 * 256; i <= 100 * 256; ++i) {
    const float x = static_cast<float>(i) / 256.0f;
    const double exact = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    const double actual = fast_sigmoid(x);
    if (exact < std::numeric_limits<float>::min()) continue;
    worst = std::max(worst, std::fabs(actual - exact) / exact);
  }
  MESSAGE("fast_sigmoid worst relative error: ", worst);
  CHECK(worst <= 3e-7);
  CHECK(fast_sigmoid(0.0f) == 0.5f);
  CHECK(fast_sigmoid(50.0f) == 1.0f);
  CHECK(std::isnan(fast_sigmoid(std::numeric_limits<float>::quiet_NaN())));
}

// 1 + erf(z) over z in [-9, 9] on a grid of 2^-12, against erfc(-z) in double: relative error
// within 1e-6 wherever the result is a normal float (measured worst: 6.4e-7 just below z = 0,
// where 1 + erf(z) nears 0.16; about 2.5e-7 down the tail, so Gelu's negative side keeps its
// digits), and the special values.
TEST_CASE("fast_one_plus_erf matches erfc(-z) in double") {
  double worst = 0.0;
  for (int i = -9 * 4096; i <= 9 * 4096; ++i) {
    const float z = static_cast<float>(i) / 4096.0f;
    const double exact = std::erfc(-static_cast<double>(z));
    if (exact < std::numeric_limits<float>::min()) continue;
    worst = std::max(worst, std::fabs(fast_one_plus_erf(z) - exact) / exact);
  }
  MESSAGE("fast_one_plus_erf worst relative error: ", worst);
  CHECK(worst <= 1e-6);
  CHECK(fast_one_plus_erf(0.0f) == 1.0f);
  CHECK(fast_one_plus_erf(std::numeric_limits<float>::infinity()) == 2.0f);
  CHECK(fast_one_plus_erf(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(fast_one_plus_erf(std::numeric_limits<float>::quiet_NaN())));
}

// The loop form the kernels use vectorizes and gives the same values as the scalar calls.
TEST_CASE("fast_exp in a loop equals the scalar calls") {
  std::vector<float> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.2f - 100.0f;
  for (size_t i = 0; i < x.size(); ++i) y[i] = fast_exp(x[i]);
  for (size_t i = 0; i < x.size(); ++i) CHECK(y[i] == fast_exp(x[i]));
}

}  // namespace
}  // namespace onepool::cpu
