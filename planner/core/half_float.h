// float16 / bfloat16 <-> float32, one element at a time, for every layer of the code (import,
// the float32 shadow of half nodes, Cast, fill values). Conversions to a narrow type round to
// nearest, ties to even, keep NaN a NaN (quiet) and overflow to +-Inf, as IEEE 754 and the ONNX
// Cast spec require.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace onepool {

/// IEEE binary16 bits -> float (exact).
inline float half_bits_to_float(uint16_t half) {
  // Branch-free after the FP16 library (M. Dukhan, MIT): scaling by powers of two makes the
  // float unit handle subnormals.
  const uint32_t w = static_cast<uint32_t>(half) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const float normalized = std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  const bool is_denormal = two_w < (1u << 27);
  return std::bit_cast<float>(sign |
                              std::bit_cast<uint32_t>(is_denormal ? denormalized : normalized));
}

/// float -> IEEE binary16 bits, round to nearest even.
inline uint16_t float_to_half_bits(float value) {
  float base = (std::fabs(value) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = std::bit_cast<uint32_t>(value);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = std::bit_cast<uint32_t>(base);
  const uint32_t nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

/// bfloat16 bits -> float (exact).
inline float bfloat_bits_to_float(uint16_t bfloat) {
  return std::bit_cast<float>(static_cast<uint32_t>(bfloat) << 16);
}

/// float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bfloat_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace onepool
