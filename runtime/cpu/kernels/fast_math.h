// Branch-free float exp (and sigmoid on top of it) that GCC vectorizes inside plain loops over
// float arrays, where std::exp stays a scalar libm call.
//
// Algorithm (Cephes expf): n = round(x / ln 2) (to nearest), r = x - n ln 2 in two parts (C1 has 9
// significant bits, so n * C1 is exact), e^r by a degree-6 polynomial on |r| <= ln 2 / 2, then
// the result scaled by 2^n as two exact power-of-two factors so that gradual underflow to
// denormals and overflow to inf come out of the multiplications themselves. x is clamped to
// [-104, 89] first: below, e^x rounds to 0; above, to inf. NaN passes through.
// Accuracy: within 2e-7 relative of the exact e^x for normal results
// (tests/runtime/fast_math_test).
#pragma once

#include <bit>
#include <cstdint>

namespace onepool::cpu {

/// 2^n for n in [-126, 127], built from the exponent bits.
inline float exp2_int(int32_t n) {
  return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
}

/// e^x within 2e-7 relative for normal results; 0 below -103.98, inf above 88.73, NaN for NaN.
inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f;
  constexpr float kLn2Low = -2.12194440e-4f;
  // 1.5 * 2^23: adding it rounds to an integer, which then sits in the low mantissa bits. No
  // float-to-int conversion, which could trap and would keep GCC from vectorizing the loop.
  constexpr float kRoundMagic = 12582912.0f;
  constexpr int32_t kRoundMagicBits = 0x4b400000;
  const float low = x > -104.0f ? x : -104.0f;  // NaN becomes -104 here, restored at the end
  const float clamped = low < 89.0f ? low : 89.0f;
  const float rounded = clamped * kLog2e + kRoundMagic;
  const float n = rounded - kRoundMagic;
  const int32_t n_int = std::bit_cast<int32_t>(rounded) - kRoundMagicBits;
  float r = clamped - n * kLn2High;
  r = r - n * kLn2Low;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e_r = p * (r * r) + r + 1.0f;
  // n is in [-150, 128]: split it so that both factors are normal powers of two.
  const int32_t half = n_int >> 1;
  const float result = e_r * exp2_int(half) * exp2_int(n_int - half);
  return x != x ? x : result;
}

/// 1 / (1 + e^-x) with fast_exp.
inline float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

}  // namespace onepool::cpu
