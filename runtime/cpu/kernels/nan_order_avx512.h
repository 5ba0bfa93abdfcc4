// nan_max (nan_order.h) on 16 float lanes, for the AVX-512 max pools.
#pragma once

#include <immintrin.h>

namespace onepool::cpu::nn {

/// b where it is larger than a or NaN, else a (which keeps a NaN already in a). One compare and
/// one masked max: vmaxps(b, a) is "b > a ? b : a" (a when either is NaN, and a on a tie of
/// signed zeros), the lanes where b is NaN keep b. With a blend of two compares, the 3x3 max
/// pools spent a third more instructions on their folds.
__attribute__((target("avx512f"), always_inline)) inline __m512 nan_max16(__m512 a, __m512 b) {
  const __mmask16 ordered = _mm512_cmp_ps_mask(b, b, _CMP_ORD_Q);
  return _mm512_mask_max_ps(b, ordered, b, a);
}

}  // namespace onepool::cpu::nn
