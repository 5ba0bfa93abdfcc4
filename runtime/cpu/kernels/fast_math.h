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
#include <cstddef>
#include <cstdint>
#include <iterator>

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

/// Horner's rule over coefficients from the highest power down.
template <size_t kCount>
inline float polynomial(float x, const float (&coefficients)[kCount]) {
  float result = coefficients[0];
  for (size_t i = 1; i < kCount; ++i) result = result * x + coefficients[i];
  return result;
}

/// e^(-c) for 0 <= c <= 1/8 by its Taylor series to c^5 (error below c^6 / 720 < 6e-9).
inline float exp_of_small_negative(float c) {
  float e = -1.0f / 120.0f;
  e = e * c + 1.0f / 24.0f;
  e = e * c - 1.0f / 6.0f;
  e = e * c + 0.5f;
  e = e * c - 1.0f;
  return e * c + 1.0f;
}

/// 1 + erf(z), within 7e-7 relative everywhere (2.5e-7 in the tail) (no cancellation for negative
/// z, where it is erfc(-z)), branch-free so loops over it vectorize. The approximations are
/// Cephes's erff / erfcf: erf(z) = z T(z^2) for |z| < 1; erfc(a) = e^(-a^2) / a * P(1/a^2) for 1 <=
/// a < 2 and R(1/a^2) from 2 on. NaN stays NaN; +inf gives 2, -inf 0.
///
/// Cost (Gelu runs it on every element): P and R share one Horner loop whose coefficients each
/// lane picks (R gets a leading 0, which leaves its value exactly as its own Horner gives it), and
/// e^(-a^2) is one fast_exp of -high^2 (exact) times a short series for the small rest.
inline float fast_one_plus_erf(float z) {
  static constexpr float kT[] = {
      7.853861353153693e-5f, -8.010193625184903e-4f, 5.188327685732524e-3f, -2.685381193529856e-2f,
      1.128358514861418e-1f, -3.761262582423300e-1f, 1.128379165726710e+0f};
  static constexpr float kP[] = {
      2.326819970068386e-2f,  -1.387039388740657e-1f, 3.687424674597105e-1f,
      -5.824733027278666e-1f, 6.210004621745983e-1f,  -4.944515323274145e-1f,
      3.404879937665872e-1f,  -2.741127028184656e-1f, 5.638259427386472e-1f};
  static constexpr float kR[] = {0.0f,
                                 -1.047766399936249e+1f,
                                 1.297719955372516e+1f,
                                 -7.495518717768503e+0f,
                                 2.921019019210786e+0f,
                                 -1.015265279202700e+0f,
                                 4.218463358204948e-1f,
                                 -2.820767439740514e-1f,
                                 5.641895067754075e-1f};
  static_assert(std::size(kP) == std::size(kR));
  const float a = z < 0.0f ? -z : z;
  const float small = 1.0f + z * polynomial(z * z, kT);
  const float inverse = 1.0f / a;
  const float inverse_squared = inverse * inverse;
  const bool near = a < 2.0f;
  float tail = near ? kP[0] : kR[0];
  for (size_t i = 1; i < std::size(kP); ++i) {
    tail = tail * inverse_squared + (near ? kP[i] : kR[i]);
  }
  // e^(-a^2) without a^2's rounding error (up to 2.4e-6 relative at a = 9): high keeps a's top
  // 12 significant bits, so high^2 is exact, and a^2 - high^2 = (high + a)(a - high) is below
  // a^2 / 1024, at most 1/8 while e^(-high^2) is not 0 (a < 10.2). Clamped there: beyond, and at
  // a = inf (where it is inf * NaN), the factor it feeds multiplies 0.
  const float high = std::bit_cast<float>(std::bit_cast<uint32_t>(a) & 0xFFFFF000u);
  const float correction = (high + a) * (a - high);
  const float bounded = correction < 0.125f ? correction : 0.125f;
  const float gaussian = fast_exp(-high * high) * exp_of_small_negative(bounded);
  const float erfc_a = gaussian * inverse * tail;  // erfc(|z|)
  const float large = z < 0.0f ? erfc_a : 2.0f - erfc_a;
  return a < 1.0f ? small : large;
}

}  // namespace onepool::cpu
