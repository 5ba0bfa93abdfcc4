// Shared device helpers: grid sizing, index decomposition and the unary op table.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda/kernels/launch.h"

namespace onepool::cuda {

constexpr int kBlock = 256;

/// Blocks for a grid-stride loop over `count` items (at least 1, capped: the loop covers the rest).
inline unsigned grid_for(int64_t count) {
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

#define ONEPOOL_GRID_LOOP(i, count)                                                          \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (count); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// x clamped to [low, high]; NaN fails both comparisons and passes through, as on the CPU (fminf /
// fmaxf would return the bound instead).
__device__ inline float clamp_keep_nan(float x, float low, float high) {
  // ONNX Clip is Min(high, Max(x, low)): high wins when low > high, and a NaN bound (like a NaN x)
  // gives NaN, as on the CPU (runtime/cpu/kernels/elementwise_clip.cc).
  if (isnan(low) || isnan(high)) return low + high;
  const float at_least_low = x < low ? low : x;
  return at_least_low > high ? high : at_least_low;
}

__device__ inline float apply_unary(const UnaryParams& p, float x) {
  switch (p.op) {
    case UnaryOp::kIdentity:
      return x;
    case UnaryOp::kRelu:
      return x < 0.0f ? 0.0f : x;  // NaN stays NaN
    case UnaryOp::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case UnaryOp::kTanh:
      return tanhf(x);
    case UnaryOp::kExp:
      return expf(x);
    case UnaryOp::kLog:
      return logf(x);
    case UnaryOp::kSqrt:
      return sqrtf(x);
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return fabsf(x);
    case UnaryOp::kErf:
      return erff(x);
    case UnaryOp::kLeakyRelu:
      return x < 0.0f ? p.alpha * x : x;
    case UnaryOp::kHardSigmoid:
      return clamp_keep_nan(p.alpha * x + p.beta, 0.0f, 1.0f);
    case UnaryOp::kHardSwish:
      return x * clamp_keep_nan(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
    case UnaryOp::kHardSigmoidMul:
      return x * clamp_keep_nan(p.alpha * x + p.beta, 0.0f, 1.0f);
    case UnaryOp::kClip:
      return clamp_keep_nan(x, p.alpha, p.beta);
    case UnaryOp::kReciprocal:
      return 1.0f / x;
    case UnaryOp::kFloor:
      return floorf(x);
    case UnaryOp::kCeil:
      return ceilf(x);
    case UnaryOp::kSoftplus:
      return x > 20.0f ? x : log1pf(expf(x));
    case UnaryOp::kElu:
      return x >= 0.0f ? x : p.alpha * (expf(x) - 1.0f);
    case UnaryOp::kSin:
      return sinf(x);
    case UnaryOp::kCos:
      return cosf(x);
    case UnaryOp::kRound:
      return rintf(x);
    case UnaryOp::kSign:
      return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case UnaryOp::kSelu:
      return x > 0.0f ? p.beta * x : p.beta * p.alpha * (expf(x) - 1.0f);
    case UnaryOp::kScale:
      return p.alpha * x;
    // 1 + erf(z) = erfc(-z), without the cancellation for large negative x (as the CPU kernel).
    case UnaryOp::kGelu:
      return 0.5f * x * erfcf(-0.70710678118654752f * x);
    case UnaryOp::kGeluTanh:
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  }
  return x;
}

}  // namespace onepool::cuda
