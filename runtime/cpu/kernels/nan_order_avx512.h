// nan_max (nan_order.h) on 16 float lanes, for the AVX-512 max pools.
#pragma once

#include <immintrin.h>

namespace onepool::cpu::nn {

/// b where it is larger than a or NaN, else a (which keeps a NaN already in a).
__attribute__((target("avx512f"), always_inline)) inline __m512 nan_max16(__m512 a, __m512 b) {
  const __mmask16 larger = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(static_cast<__mmask16>(larger | nan), a, b);
}

}  // namespace onepool::cpu::nn
