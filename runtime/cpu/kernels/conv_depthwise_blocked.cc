#include "runtime/cpu/kernels/conv_depthwise_blocked.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/cpu/kernels/avx512_lanes.h"

// GCC 12's AVX-512 shuffle intrinsics start from _mm512_undefined_ps(), which the uninitialized
// warnings report wherever they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace onepool::cpu::nn {

// 16 channels a vector.
namespace avx512 {
namespace {

#define ONEPOOL_BLOCKED_TARGET __attribute__((target("avx512f")))
#define ONEPOOL_BLOCKED_INLINE __attribute__((target("avx512f"), always_inline)) inline

struct Lanes {
  using Vec = __m512;
  static constexpr int64_t kCount = 16;
  ONEPOOL_BLOCKED_INLINE static Vec zero() { return _mm512_setzero_ps(); }
  // Aligned: tile, output and tap rows sit at multiples of kCount floats.
  ONEPOOL_BLOCKED_INLINE static Vec load(const float* from) { return _mm512_load_ps(from); }
  ONEPOOL_BLOCKED_INLINE static void store(float* to, Vec v) { _mm512_store_ps(to, v); }
  // The first `count` lanes (all from kCount on); memory past them is never touched.
  ONEPOOL_BLOCKED_INLINE static Vec load_first(const float* from, int64_t count) {
    return _mm512_maskz_loadu_ps(first_lanes(count), from);
  }
  ONEPOOL_BLOCKED_INLINE static void store_first(float* to, int64_t count, Vec v) {
    _mm512_mask_storeu_ps(to, first_lanes(count), v);
  }
  ONEPOOL_BLOCKED_INLINE static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }

  // rows[i] lane j -> rows[j] lane i (inlined: the 16 rows stay in registers).
  ONEPOOL_BLOCKED_INLINE static void transpose(Vec rows[16]) {
    Vec pairs[16];
    for (int i = 0; i < 16; i += 2) {
      pairs[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
      pairs[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
    }
    // quads[4 g + m], 128-bit lane L: rows 4 g .. 4 g + 3 at column 4 L + m.
    Vec quads[16];
    for (int g = 0; g < 4; ++g) {
      const __m512d a = _mm512_castps_pd(pairs[4 * g]);
      const __m512d b = _mm512_castps_pd(pairs[4 * g + 1]);
      const __m512d c = _mm512_castps_pd(pairs[4 * g + 2]);
      const __m512d d = _mm512_castps_pd(pairs[4 * g + 3]);
      quads[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
      quads[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      quads[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
      quads[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int m = 0; m < 4; ++m) {
      const Vec even_low = _mm512_shuffle_f32x4(quads[m], quads[4 + m], 0x88);
      const Vec odd_low = _mm512_shuffle_f32x4(quads[m], quads[4 + m], 0xDD);
      const Vec even_high = _mm512_shuffle_f32x4(quads[8 + m], quads[12 + m], 0x88);
      const Vec odd_high = _mm512_shuffle_f32x4(quads[8 + m], quads[12 + m], 0xDD);
      rows[m] = _mm512_shuffle_f32x4(even_low, even_high, 0x88);
      rows[8 + m] = _mm512_shuffle_f32x4(even_low, even_high, 0xDD);
      rows[4 + m] = _mm512_shuffle_f32x4(odd_low, odd_high, 0x88);
      rows[12 + m] = _mm512_shuffle_f32x4(odd_low, odd_high, 0xDD);
    }
  }
};

#include "runtime/cpu/kernels/conv_depthwise_blocked_body.inc"

#undef ONEPOOL_BLOCKED_TARGET
#undef ONEPOOL_BLOCKED_INLINE

}  // namespace
}  // namespace avx512

// 8 channels a vector.
namespace avx2 {
namespace {

#define ONEPOOL_BLOCKED_TARGET __attribute__((target("avx2,fma")))
#define ONEPOOL_BLOCKED_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

struct Lanes {
  using Vec = __m256;
  static constexpr int64_t kCount = 8;
  ONEPOOL_BLOCKED_INLINE static Vec zero() { return _mm256_setzero_ps(); }
  ONEPOOL_BLOCKED_INLINE static Vec load(const float* from) { return _mm256_load_ps(from); }
  ONEPOOL_BLOCKED_INLINE static void store(float* to, Vec v) { _mm256_store_ps(to, v); }
  ONEPOOL_BLOCKED_INLINE static __m256i first_lanes(int64_t count) {
    const auto valid = static_cast<int>(std::clamp<int64_t>(count, 0, kCount));
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  ONEPOOL_BLOCKED_INLINE static Vec load_first(const float* from, int64_t count) {
    return _mm256_maskload_ps(from, first_lanes(count));
  }
  ONEPOOL_BLOCKED_INLINE static void store_first(float* to, int64_t count, Vec v) {
    _mm256_maskstore_ps(to, first_lanes(count), v);
  }
  ONEPOOL_BLOCKED_INLINE static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }

  // rows[i] lane j -> rows[j] lane i.
  ONEPOOL_BLOCKED_INLINE static void transpose(Vec rows[8]) {
    Vec pairs[8];
    for (int i = 0; i < 8; i += 2) {
      pairs[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
      pairs[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
    }
    // quads[4 g + m], 128-bit lane L: rows 4 g .. 4 g + 3 at column 4 L + m.
    Vec quads[8];
    for (int g = 0; g < 2; ++g) {
      const Vec* p = pairs + 4 * g;
      quads[4 * g] = _mm256_shuffle_ps(p[0], p[2], _MM_SHUFFLE(1, 0, 1, 0));
      quads[4 * g + 1] = _mm256_shuffle_ps(p[0], p[2], _MM_SHUFFLE(3, 2, 3, 2));
      quads[4 * g + 2] = _mm256_shuffle_ps(p[1], p[3], _MM_SHUFFLE(1, 0, 1, 0));
      quads[4 * g + 3] = _mm256_shuffle_ps(p[1], p[3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int m = 0; m < 4; ++m) {
      rows[m] = _mm256_permute2f128_ps(quads[m], quads[4 + m], 0x20);
      rows[4 + m] = _mm256_permute2f128_ps(quads[m], quads[4 + m], 0x31);
    }
  }
};

#include "runtime/cpu/kernels/conv_depthwise_blocked_body.inc"

#undef ONEPOOL_BLOCKED_TARGET
#undef ONEPOOL_BLOCKED_INLINE

}  // namespace
}  // namespace avx2

bool depthwise_blocked_fits(const WindowGeometry& g, int64_t multiplier, SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      return avx512::fits(g, multiplier);
    case SgemmIsa::kAvx2:
      return avx2::fits(g, multiplier);
    case SgemmIsa::kPortable:
      return false;
  }
  return false;
}

void depthwise_conv_blocked(const WindowGeometry& g, const DepthwiseConv& conv,
                            const Activation& activation, ThreadPool& threads, SgemmIsa isa) {
  if (isa == SgemmIsa::kAvx512) return avx512::run_blocked(g, conv, activation, threads);
  avx2::run_blocked(g, conv, activation, threads);
}

}  // namespace onepool::cpu::nn
