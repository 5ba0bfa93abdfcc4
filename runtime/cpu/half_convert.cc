// Array conversions between the half types and float32. With F16C (any -march that has AVX2)
// eight elements convert per instruction; the scalar tail and other builds use half_convert.h's
// element functions, which round the same way (nearest even): values never depend on the ISA
// (only the payload bits of a NaN may).
#include "runtime/cpu/half_convert.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace onepool::cpu {

void half_to_float_array(const uint16_t* source, float* destination, size_t count) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i));
    _mm256_storeu_ps(destination + i, _mm256_cvtph_ps(half));
  }
#endif
  for (; i < count; ++i) destination[i] = half_bits_to_float(source[i]);
}

void float_to_half_array(const float* source, uint16_t* destination, size_t count) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= count; i += 8) {
    const __m128i half =
        _mm256_cvtps_ph(_mm256_loadu_ps(source + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(destination + i), half);
  }
#endif
  for (; i < count; ++i) destination[i] = float_to_half_bits(source[i]);
}

void bfloat_to_float_array(const uint16_t* source, float* destination, size_t count) {
  for (size_t i = 0; i < count; ++i) destination[i] = bfloat_bits_to_float(source[i]);
}

void float_to_bfloat_array(const float* source, uint16_t* destination, size_t count) {
  for (size_t i = 0; i < count; ++i) destination[i] = float_to_bfloat_bits(source[i]);
}

}  // namespace onepool::cpu
