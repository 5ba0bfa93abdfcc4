// Checks shared by the float kernel tests that compare a kernel against a float64 definition
// written in the test (Winograd, ConvTranspose's tap GEMM).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace onepool::testing {

/// The fused activation a test names ("Relu"; "Clip" with the bounds -0.25 and 0.5 the tests set;
/// "" for none), as the kernels apply it.
inline float activate_named(const std::string& activation, float value) {
  if (activation == "Relu") return value < 0.0f ? 0.0f : value;
  if (activation == "Clip") return value < -0.25f ? -0.25f : (value > 0.5f ? 0.5f : value);
  return value;
}

/// Element by element: both NaN, both the same infinity, or within `tolerance` relative.
inline void check_matches(const std::vector<float>& actual, const std::vector<float>& expected,
                          float tolerance = 2e-5f) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    if (std::isnan(expected[i]) || std::isinf(expected[i])) {
      CHECK(std::isnan(actual[i]) == std::isnan(expected[i]));
      if (std::isinf(expected[i])) CHECK(actual[i] == expected[i]);
      continue;
    }
    CHECK(std::fabs(actual[i] - expected[i]) <= tolerance * (1.0f + std::fabs(expected[i])));
  }
}

}  // namespace onepool::testing
