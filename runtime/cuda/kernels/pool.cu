// MaxPool and AveragePool over 1-D / 2-D windows: one thread per output element.
#include <cfloat>

#include "runtime/cuda/kernels/device_util.cuh"
#include "runtime/cuda/kernels/scalar_ops.h"

namespace onepool::cuda {

namespace {

__global__ void pool_kernel(PoolParams p, const float* x, float* y) {
  const int64_t count = p.planes * p.out_h * p.out_w;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t ow = i % p.out_w;
    const int64_t oh = (i / p.out_w) % p.out_h;
    const float* plane = x + (i / (p.out_w * p.out_h)) * p.in_h * p.in_w;
    // Max starts from -FLT_MAX (a window of padding only gives it, as the CPU) and keeps NaN.
    float acc = p.is_max ? -FLT_MAX : 0.0f;
    int64_t valid = 0;
    int64_t padded = 0;  // window cells inside the padded input (count_include_pad divisor)
    for (int kh = 0; kh < p.k_h; ++kh) {
      const int64_t ih = oh * p.s_h - p.p_h + kh * p.d_h;
      for (int kw = 0; kw < p.k_w; ++kw) {
        const int64_t iw = ow * p.s_w - p.p_w + kw * p.d_w;
        if (ih < p.in_h + p.end_h && iw < p.in_w + p.end_w) ++padded;
        if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
        const float v = plane[ih * p.in_w + iw];
        acc = p.is_max ? nan_propagating_max(acc, v) : acc + v;
        ++valid;
      }
    }
    if (!p.is_max) {
      const int64_t divisor = p.count_include_pad ? padded : valid;
      acc = divisor > 0 ? acc / static_cast<float>(divisor) : 0.0f;
    }
    y[i] = acc;
  }
}

}  // namespace

cudaError_t launch_pool(const PoolParams& params, const float* x, float* y, cudaStream_t stream) {
  const int64_t count = params.planes * params.out_h * params.out_w;
  if (count == 0) return cudaSuccess;
  pool_kernel<<<grid_for(count), kBlock, 0, stream>>>(params, x, y);
  return cudaGetLastError();
}

}  // namespace onepool::cuda
