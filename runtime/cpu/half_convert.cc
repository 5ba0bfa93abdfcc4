// Array conversions between the half types and float32. Where the CPU has F16C (checked at
// run time, so a baseline x86-64 build uses it too) eight elements convert per instruction; the
// tail and CPUs without it use half_convert.h's element functions, which round the same way
// (nearest even): values never depend on the CPU (only the payload bits of a NaN may).
#include "runtime/cpu/half_convert.h"

#include <cpuid.h>
#include <immintrin.h>

namespace onepool::cpu {
namespace {

// CPUID leaf 1 says F16C and AVX, and the OS saves the AVX registers (XCR0 bits 1 and 2).
// Read directly: clang's __builtin_cpu_supports knows no "f16c".
bool detect_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const unsigned needed = bit_F16C | bit_AVX | bit_OSXSAVE;
  if ((ecx & needed) != needed) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & 0x6u) == 0x6u;
}

// A fact of the hardware, read once: CPUID leaves a virtual machine on every call, and the
// conversions run for every half node of every run.
bool has_f16c() {
  static const bool kHasF16c = detect_f16c();
  return kHasF16c;
}

// The whole blocks of eight; returns how many elements it converted.
__attribute__((target("avx,f16c"))) size_t half_to_float_f16c(const uint16_t* source,
                                                              float* destination, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i));
    _mm256_storeu_ps(destination + i, _mm256_cvtph_ps(half));
  }
  return i;
}

__attribute__((target("avx,f16c"))) size_t float_to_half_f16c(const float* source,
                                                              uint16_t* destination, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half =
        _mm256_cvtps_ph(_mm256_loadu_ps(source + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(destination + i), half);
  }
  return i;
}

}  // namespace

void half_to_float_array(const uint16_t* source, float* destination, size_t count) {
  size_t i = has_f16c() ? half_to_float_f16c(source, destination, count) : 0;
  for (; i < count; ++i) destination[i] = half_bits_to_float(source[i]);
}

void float_to_half_array(const float* source, uint16_t* destination, size_t count) {
  size_t i = has_f16c() ? float_to_half_f16c(source, destination, count) : 0;
  for (; i < count; ++i) destination[i] = float_to_half_bits(source[i]);
}

void bfloat_to_float_array(const uint16_t* source, float* destination, size_t count) {
  for (size_t i = 0; i < count; ++i) destination[i] = bfloat_bits_to_float(source[i]);
}

void float_to_bfloat_array(const float* source, uint16_t* destination, size_t count) {
  for (size_t i = 0; i < count; ++i) destination[i] = float_to_bfloat_bits(source[i]);
}

}  // namespace onepool::cpu
