// Lane masks for the AVX-512 kernels' partial vectors (16 floats a vector).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace onepool::cpu::nn {

/// The mask of the first `count` of a vector's 16 float lanes: none for count <= 0, all from 16
/// on. Plain integer code, so any AVX-512 function may inline it.
inline __mmask16 first_lanes(int64_t count) {
  if (count <= 0) return static_cast<__mmask16>(0);
  return count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << count) - 1);
}

}  // namespace onepool::cpu::nn
