// Elementwise kernels: one broadcasting binary kernel per element type (the op is a run-time
// switch, so there is one instantiation per type), Where, unary ops, Cast and the bias +
// activation epilogue shared by Conv / ConvTranspose / Gemm / MatMul. float16 and bfloat16
// binary and unary ops run natively: float32 registers, the narrow type in memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <type_traits>

#include "runtime/cuda/kernels/device_util.cuh"
#include "runtime/cuda/kernels/half_util.cuh"
#include "runtime/cuda/kernels/scalar_ops.h"

namespace onepool::cuda {

namespace {

// Offsets of output element `i` in operands 0..operands-1.
template <int kOperands>
__device__ inline void broadcast_offsets(const BroadcastShape& s, int64_t i, int64_t* offsets) {
  for (int k = 0; k < kOperands; ++k) offsets[k] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t index = i % s.dims[d];
    i /= s.dims[d];
    for (int k = 0; k < kOperands; ++k) offsets[k] += index * s.strides[k][d];
  }
}

template <class T>
__device__ inline T binary_value(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return b == T(0) && !std::is_floating_point<T>::value ? T(0) : a / b;
    case BinaryOp::kPow:
      return static_cast<T>(pow(static_cast<double>(a), static_cast<double>(b)));
    case BinaryOp::kMax:
      return a > b ? a : b;
    case BinaryOp::kMin:
      return a < b ? a : b;
    case BinaryOp::kPRelu:
      return a < T(0) ? a * b : a;
    // Mod (fmod = 0, integers): the divisor's sign; Fmod (fmod = 1): the dividend's sign.
    case BinaryOp::kMod:
      if constexpr (std::is_floating_point<T>::value) {
        return T(0);  // refused at prepare: ONNX requires fmod = 1 for floats
      } else {
        return mod_floored<T>(a, b);
      }
    case BinaryOp::kFmod:
      return mod_truncated<T>(a, b);
    default:
      return T(0);
  }
}

template <class T>
__device__ inline bool compare_value(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::kEqual:
      return a == b;
    case BinaryOp::kLess:
      return a < b;
    case BinaryOp::kGreater:
      return a > b;
    case BinaryOp::kLessOrEqual:
      return a <= b;
    case BinaryOp::kGreaterOrEqual:
      return a >= b;
    case BinaryOp::kAnd:
      return static_cast<bool>(a) && static_cast<bool>(b);
    case BinaryOp::kOr:
      return static_cast<bool>(a) || static_cast<bool>(b);
    case BinaryOp::kXor:
      return static_cast<bool>(a) != static_cast<bool>(b);
    default:
      return false;
  }
}

template <class T>
__global__ void binary_kernel(BinaryOp op, BroadcastShape s, const T* a, const T* b, void* out) {
  const bool to_bool = op >= BinaryOp::kEqual;
  ONEPOOL_GRID_LOOP(i, s.count) {
    int64_t offsets[2];
    broadcast_offsets<2>(s, i, offsets);
    const T x = a[offsets[0]];
    const T y = b[offsets[1]];
    if (to_bool) {
      static_cast<bool*>(out)[i] = compare_value<T>(op, x, y);
    } else {
      static_cast<T*>(out)[i] = binary_value<T>(op, x, y);
    }
  }
}

template <class T>
__global__ void where_kernel(BroadcastShape s, const bool* cond, const T* x, const T* y, T* out) {
  ONEPOOL_GRID_LOOP(i, s.count) {
    int64_t offsets[3];
    broadcast_offsets<3>(s, i, offsets);
    out[i] = cond[offsets[0]] ? x[offsets[1]] : y[offsets[2]];
  }
}

__global__ void unary_float_kernel(UnaryParams p, const float* x, float* y, int64_t count) {
  ONEPOOL_GRID_LOOP(i, count) { y[i] = apply_unary(p, x[i]); }
}

__global__ void unary_int64_kernel(UnaryOp op, const int64_t* x, int64_t* y, int64_t count) {
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t v = x[i];
    switch (op) {
      case UnaryOp::kRelu:
        y[i] = v > 0 ? v : 0;
        break;
      case UnaryOp::kNeg:
        y[i] = -v;
        break;
      case UnaryOp::kAbs:
        y[i] = v < 0 ? -v : v;
        break;
      case UnaryOp::kSign:
        y[i] = v > 0 ? 1 : (v < 0 ? -1 : 0);
        break;
      default:
        y[i] = v;
        break;
    }
  }
}

__global__ void not_kernel(const bool* x, bool* y, int64_t count) {
  ONEPOOL_GRID_LOOP(i, count) { y[i] = !x[i]; }
}

__device__ inline double load_as_double(ElemType type, const void* p, int64_t i) {
  switch (type) {
    case ElemType::kFloat32:
      return static_cast<const float*>(p)[i];
    case ElemType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case ElemType::kBool:
      return static_cast<const bool*>(p)[i] ? 1.0 : 0.0;
    case ElemType::kInt32:
      return static_cast<const int32_t*>(p)[i];
    case ElemType::kFloat16:
      return __half2float(__ushort_as_half(static_cast<const unsigned short*>(p)[i]));
    case ElemType::kBFloat16:
      return __bfloat162float(__ushort_as_bfloat16(static_cast<const unsigned short*>(p)[i]));
  }
  return 0.0;
}

__device__ inline int64_t load_as_int(ElemType type, const void* p, int64_t i) {
  switch (type) {
    case ElemType::kFloat32:
    case ElemType::kFloat16:
    case ElemType::kBFloat16: {
      const float v = static_cast<float>(load_as_double(type, p, i));
      if (!(v == v)) return 0;  // NaN: undefined in ONNX; pick 0 deterministically
      if (v >= 9.2233720368547758e18f) return INT64_MAX;
      if (v <= -9.2233720368547758e18f) return INT64_MIN;
      return static_cast<int64_t>(v);
    }
    case ElemType::kInt64:
      return static_cast<const int64_t*>(p)[i];
    case ElemType::kBool:
      return static_cast<const bool*>(p)[i] ? 1 : 0;
    case ElemType::kInt32:
      return static_cast<const int32_t*>(p)[i];
  }
  return 0;
}

__global__ void cast_kernel(ElemType from, ElemType to, const void* x, void* y, int64_t count) {
  ONEPOOL_GRID_LOOP(i, count) {
    switch (to) {
      case ElemType::kFloat32:
        static_cast<float*>(y)[i] = static_cast<float>(load_as_double(from, x, i));
        break;
      case ElemType::kInt64:
        static_cast<int64_t*>(y)[i] = load_as_int(from, x, i);
        break;
      case ElemType::kInt32:
        static_cast<int32_t*>(y)[i] = static_cast<int32_t>(load_as_int(from, x, i));
        break;
      case ElemType::kBool:
        static_cast<bool*>(y)[i] = load_as_double(from, x, i) != 0.0;
        break;
      case ElemType::kFloat16:  // through float32, rounding to nearest even, as the CPU does
        static_cast<unsigned short*>(y)[i] =
            __half_as_ushort(__float2half_rn(static_cast<float>(load_as_double(from, x, i))));
        break;
      case ElemType::kBFloat16:
        static_cast<unsigned short*>(y)[i] = __bfloat16_as_ushort(
            __float2bfloat16_rn(static_cast<float>(load_as_double(from, x, i))));
        break;
    }
  }
}

// Native half binary ops (half_to_float / float_to_half: half_util.cuh): float32 math on the
// widened operands, one rounding of the result (the same numbers as the float32 kernel on converted
// copies, without the copies).
template <ElemType kType>
__global__ void binary_half_kernel(BinaryOp op, BroadcastShape s, const unsigned short* a,
                                   const unsigned short* b, void* out) {
  const bool to_bool = op >= BinaryOp::kEqual;
  ONEPOOL_GRID_LOOP(i, s.count) {
    int64_t offsets[2];
    broadcast_offsets<2>(s, i, offsets);
    const float x = half_to_float<kType>(a[offsets[0]]);
    const float y = half_to_float<kType>(b[offsets[1]]);
    if (to_bool) {
      static_cast<bool*>(out)[i] = compare_value<float>(op, x, y);
    } else {
      static_cast<unsigned short*>(out)[i] = float_to_half<kType>(binary_value<float>(op, x, y));
    }
  }
}

template <ElemType kType>
__global__ void unary_half_kernel(UnaryParams p, const unsigned short* x, unsigned short* y,
                                  int64_t count) {
  ONEPOOL_GRID_LOOP(i, count) {
    y[i] = float_to_half<kType>(apply_unary(p, half_to_float<kType>(x[i])));
  }
}

__global__ void bias_activation_kernel(float* y, const float* bias, const float* residual,
                                       int64_t count, int64_t channels, int64_t inner,
                                       UnaryParams act) {
  ONEPOOL_GRID_LOOP(i, count) {
    float v = y[i];
    if (bias != nullptr) v += bias[(i / inner) % channels];
    if (residual != nullptr) v += residual[i];
    y[i] = apply_unary(act, v);
  }
}

}  // namespace

cudaError_t launch_binary(BinaryOp op, ElemType type, const BroadcastShape& shape, const void* a,
                          const void* b, void* out, cudaStream_t stream) {
  const unsigned grid = grid_for(shape.count);
  switch (type) {
    case ElemType::kFloat32:
      binary_kernel<float><<<grid, kBlock, 0, stream>>>(op, shape, static_cast<const float*>(a),
                                                        static_cast<const float*>(b), out);
      break;
    case ElemType::kInt64:
      binary_kernel<int64_t><<<grid, kBlock, 0, stream>>>(op, shape, static_cast<const int64_t*>(a),
                                                          static_cast<const int64_t*>(b), out);
      break;
    case ElemType::kBool:
      binary_kernel<bool><<<grid, kBlock, 0, stream>>>(op, shape, static_cast<const bool*>(a),
                                                       static_cast<const bool*>(b), out);
      break;
    case ElemType::kFloat16:
      binary_half_kernel<ElemType::kFloat16>
          <<<grid, kBlock, 0, stream>>>(op, shape, static_cast<const unsigned short*>(a),
                                        static_cast<const unsigned short*>(b), out);
      break;
    case ElemType::kBFloat16:
      binary_half_kernel<ElemType::kBFloat16>
          <<<grid, kBlock, 0, stream>>>(op, shape, static_cast<const unsigned short*>(a),
                                        static_cast<const unsigned short*>(b), out);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_where(const BroadcastShape& shape, size_t elem_bytes, const bool* cond,
                         const void* x, const void* y, void* out, cudaStream_t stream) {
  const unsigned grid = grid_for(shape.count);
  switch (elem_bytes) {
    case 1:
      where_kernel<uint8_t>
          <<<grid, kBlock, 0, stream>>>(shape, cond, static_cast<const uint8_t*>(x),
                                        static_cast<const uint8_t*>(y), static_cast<uint8_t*>(out));
      break;
    case 2:
      where_kernel<uint16_t><<<grid, kBlock, 0, stream>>>(
          shape, cond, static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(y),
          static_cast<uint16_t*>(out));
      break;
    case 4:
      where_kernel<uint32_t><<<grid, kBlock, 0, stream>>>(
          shape, cond, static_cast<const uint32_t*>(x), static_cast<const uint32_t*>(y),
          static_cast<uint32_t*>(out));
      break;
    case 8:
      where_kernel<uint64_t><<<grid, kBlock, 0, stream>>>(
          shape, cond, static_cast<const uint64_t*>(x), static_cast<const uint64_t*>(y),
          static_cast<uint64_t*>(out));
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_unary_float(const UnaryParams& op, const float* x, float* y, int64_t count,
                               cudaStream_t stream) {
  unary_float_kernel<<<grid_for(count), kBlock, 0, stream>>>(op, x, y, count);
  return cudaGetLastError();
}

cudaError_t launch_unary_half(const UnaryParams& op, ElemType type, const void* x, void* y,
                              int64_t count, cudaStream_t stream) {
  const auto* in = static_cast<const unsigned short*>(x);
  auto* out = static_cast<unsigned short*>(y);
  if (type == ElemType::kFloat16) {
    unary_half_kernel<ElemType::kFloat16>
        <<<grid_for(count), kBlock, 0, stream>>>(op, in, out, count);
  } else if (type == ElemType::kBFloat16) {
    unary_half_kernel<ElemType::kBFloat16>
        <<<grid_for(count), kBlock, 0, stream>>>(op, in, out, count);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_unary_int(UnaryOp op, ElemType type, const void* x, void* y, int64_t count,
                             cudaStream_t stream) {
  if (type == ElemType::kBool) {
    not_kernel<<<grid_for(count), kBlock, 0, stream>>>(static_cast<const bool*>(x),
                                                       static_cast<bool*>(y), count);
  } else if (type == ElemType::kInt64) {
    unary_int64_kernel<<<grid_for(count), kBlock, 0, stream>>>(op, static_cast<const int64_t*>(x),
                                                               static_cast<int64_t*>(y), count);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_cast(ElemType from, ElemType to, const void* x, void* y, int64_t count,
                        cudaStream_t stream) {
  cast_kernel<<<grid_for(count), kBlock, 0, stream>>>(from, to, x, y, count);
  return cudaGetLastError();
}

cudaError_t launch_bias_activation(float* y, const float* bias, int64_t outer, int64_t channels,
                                   int64_t inner, const UnaryParams& act, cudaStream_t stream,
                                   const float* residual) {
  const int64_t count = outer * channels * inner;
  if (count == 0 || (bias == nullptr && residual == nullptr && act.op == UnaryOp::kIdentity)) {
    return cudaSuccess;
  }
  bias_activation_kernel<<<grid_for(count), kBlock, 0, stream>>>(y, bias, residual, count, channels,
                                                                 inner < 1 ? 1 : inner, act);
  return cudaGetLastError();
}

}  // namespace onepool::cuda
