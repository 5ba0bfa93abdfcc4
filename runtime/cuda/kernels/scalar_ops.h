// Scalar semantics of the device kernels that ONNX defines more precisely than C does: Mod with
// and without `fmod`, and ReduceMax / ReduceMin's NaN propagation. Plain inline functions that
// nvcc compiles for the device and g++ for the host, so host tests check the very arithmetic the
// kernels run (tests/gpu/op_expectations.h holds the expected values, shared with the CPU).
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define ONEPOOL_HOST_DEVICE __host__ __device__
#else
#define ONEPOOL_HOST_DEVICE
#endif

namespace onepool::cuda {

/// Mod with fmod = 1: the remainder takes the dividend's sign (C fmod and %). An integer
/// divisor of 0 gives 0, and -1 gives 0 (INT64_MIN % -1 would trap), as the CPU kernel does.
template <class T>
ONEPOOL_HOST_DEVICE inline T mod_truncated(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return fmodf(a, b);
  } else {
    if (b == T(0) || b == T(-1)) return T(0);
    return a % b;
  }
}

/// Mod with fmod = 0 (integers only; ONNX rejects it for floats): the remainder takes the
/// divisor's sign, as Python and numpy.
template <class T>
ONEPOOL_HOST_DEVICE inline T mod_floored(T a, T b) {
  T r = mod_truncated(a, b);
  if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
  return r;
}

/// Max that propagates NaN from either side (fmaxf drops it). Start from -infinity.
ONEPOOL_HOST_DEVICE inline float nan_propagating_max(float a, float b) {
  return (a != a || a > b) ? a : b;
}

/// Min that propagates NaN from either side (fminf drops it). Start from +infinity.
ONEPOOL_HOST_DEVICE inline float nan_propagating_min(float a, float b) {
  return (a != a || a < b) ? a : b;
}

}  // namespace onepool::cuda
