// float16 / bfloat16 values (bits in unsigned short) as float32 and back, shared by the native
// half kernels: float32 math in registers, the narrow type in memory, one rounding to nearest
// even on store (as the CPU's conversions).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "runtime/cuda/kernels/launch.h"

namespace onepool::cuda {

/// A half value's bits (kType: kFloat16 or kBFloat16) widened to float32 (exact).
template <ElemType kType>
__device__ inline float half_to_float(unsigned short bits) {
  if constexpr (kType == ElemType::kFloat16) return __half2float(__ushort_as_half(bits));
  return __bfloat162float(__ushort_as_bfloat16(bits));
}

/// A float32 value rounded to nearest even as kType's bits.
template <ElemType kType>
__device__ inline unsigned short float_to_half(float value) {
  if constexpr (kType == ElemType::kFloat16) return __half_as_ushort(__float2half_rn(value));
  return __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

/// Host side: calls `launch(tag)` with tag a std::integral_constant<ElemType, kFloat16 or
/// kBFloat16> matching `type` (the launch instantiates its kernel on decltype(tag)::value) and
/// returns the launch's error; cudaErrorInvalidValue for any other type.
template <class Launch>
cudaError_t launch_for_half_type(ElemType type, Launch launch) {
  if (type == ElemType::kFloat16) {
    launch(std::integral_constant<ElemType, ElemType::kFloat16>{});
  } else if (type == ElemType::kBFloat16) {
    launch(std::integral_constant<ElemType, ElemType::kBFloat16>{});
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace onepool::cuda
