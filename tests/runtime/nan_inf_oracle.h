// The NaN / Inf oracle of tests/runtime/nan_inf_node_tests_test.cc: "dependency by perturbation".
//
// One input element is replaced in turn by +1e30, -1e30, +Inf, -Inf, NaN, 0, 1 and -1, and each
// run's float outputs are compared element by element with the baseline run (same bits, or both
// NaN). An element is
//   - strongly dependent when +1e30 or -1e30 moves it. With NaN injected it must be NaN, as numpy
//     (the ONNX reference) computes it: a finite change that moves the result means the element
//     is arithmetic on the input, and NaN in arithmetic gives NaN.
//   - weakly dependent on a perturbation p when another value that is not NaN moves it. What +Inf,
//     -Inf or NaN moves must be weakly dependent on it: neither may leak into an element that no
//     other value at that position moves. Inf * 0 = NaN passes (the other Inf gives the same NaN);
//     fmod(x, NaN) passes thanks to fmod(x, 1), which 1e30 and Inf leave at x.
// Header-only and free of OnePool types other than DType, so the oracle has its own tests.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "onepool/tensor.h"

namespace onepool::testing {

/// One float output element: its bits, and whether it is NaN (every NaN equals every NaN).
struct FloatBits {
  uint64_t bits = 0;
  bool nan = false;
  double value = 0.0;  // for messages
};

inline bool same_value(FloatBits a, FloatBits b) {
  return a.nan ? b.nan : !b.nan && a.bits == b.bits;
}

/// True for the dtypes whose elements the oracle compares (float32, float64, float16, bfloat16).
inline bool is_float_dtype(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

/// An IEEE half's value (1 sign, 5 exponent, 10 mantissa bits).
inline double half_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const double mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1f)
    return mantissa != 0 ? std::nan("") : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024.0 + mantissa, exponent - 25);
}

/// Appends the `count` elements of a float tensor at `data` to `out`.
inline void append_float_bits(DType dtype, const std::byte* data, int64_t count,
                              std::vector<FloatBits>& out) {
  for (int64_t i = 0; i < count; ++i) {
    FloatBits element;
    if (dtype == DType::kFloat32) {
      float value;
      std::memcpy(&value, data + i * 4, 4);
      std::memcpy(&element.bits, &value, 4);
      element.nan = value != value;
      element.value = value;
    } else if (dtype == DType::kFloat64) {
      double value;
      std::memcpy(&value, data + i * 8, 8);
      std::memcpy(&element.bits, &value, 8);
      element.nan = value != value;
      element.value = value;
    } else {
      uint16_t half;
      std::memcpy(&half, data + i * 2, 2);
      element.bits = half;
      // float16: 5 exponent bits, 10 mantissa bits; bfloat16: 8 and 7.
      const uint16_t exponent = dtype == DType::kFloat16 ? 0x7c00 : 0x7f80;
      element.nan = (half & exponent) == exponent && (half & ~exponent & 0x7fff) != 0;
      if (dtype == DType::kFloat16) {
        element.value = half_value(half);
      } else {
        const uint32_t widened = static_cast<uint32_t>(half) << 16;
        float value;
        std::memcpy(&value, &widened, 4);
        element.value = value;
      }
    }
    out.push_back(element);
  }
}

/// The values injected at one input element, in the order of the oracle's arrays.
enum Perturbation : size_t {
  kPlusBig,
  kMinusBig,
  kPlusInf,
  kMinusInf,
  kNanValue,
  kZero,
  kOne,
  kMinusOne
};
constexpr size_t kPerturbationCount = 8;

inline float perturbation_value(size_t p) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr std::array<float, kPerturbationCount> kValues = {
      1e30f, -1e30f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), 0.0f, 1.0f, -1.0f};
  return kValues[p];
}

inline const char* perturbation_name(size_t p) {
  constexpr std::array<const char*, kPerturbationCount> kNames = {"+1e30", "-1e30", "+Inf", "-Inf",
                                                                  "NaN",   "0",     "1",    "-1"};
  return kNames[p];
}

/// One element that breaks the oracle: under `perturbation`, `element` (an index into the
/// flattened float outputs) either is not NaN though strongly dependent (dropped), or changed
/// though no other perturbation changes it (leaked).
struct OracleViolation {
  enum class Kind { kNanDropped, kLeaked };
  Kind kind = Kind::kLeaked;
  size_t perturbation = kNanValue;
  size_t element = 0;
};

/// What one injected position gave.
struct OracleVerdict {
  size_t strongly_dependent = 0;  ///< elements that ±1e30 moves
  std::vector<OracleViolation> violations;
};

/// Which rules apply (both, except for the documented exceptions of the test).
struct OracleRules {
  bool nan_propagates = true;     ///< every strongly dependent element is NaN under NaN
  bool nan_within_values = true;  ///< NaN moves only elements that a number or an Inf moves
};

/// Judges one position: `runs[p]` holds the flattened float outputs with perturbation p injected.
/// The Inf rules always apply. All vectors must have the baseline's length.
inline OracleVerdict judge_perturbations(
    const std::vector<FloatBits>& baseline,
    const std::array<std::vector<FloatBits>, kPerturbationCount>& runs, OracleRules rules = {}) {
  OracleVerdict verdict;
  for (size_t e = 0; e < baseline.size(); ++e) {
    std::array<bool, kPerturbationCount> moved{};
    for (size_t p = 0; p < kPerturbationCount; ++p) moved[p] = !same_value(runs[p][e], baseline[e]);
    const bool strong = moved[kPlusBig] || moved[kMinusBig];
    if (strong) ++verdict.strongly_dependent;
    if (strong && rules.nan_propagates && !runs[kNanValue][e].nan) {
      verdict.violations.push_back({OracleViolation::Kind::kNanDropped, kNanValue, e});
    }
    for (size_t p : {kPlusInf, kMinusInf, kNanValue}) {
      if (!moved[p] || (p == kNanValue && !rules.nan_within_values)) continue;
      bool covered = false;  // by another value that is not NaN
      for (size_t q = 0; q < kPerturbationCount; ++q) {
        covered = covered || (q != p && q != kNanValue && moved[q]);
      }
      if (!covered) verdict.violations.push_back({OracleViolation::Kind::kLeaked, p, e});
    }
  }
  return verdict;
}

}  // namespace onepool::testing
