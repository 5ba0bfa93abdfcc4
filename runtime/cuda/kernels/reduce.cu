// Reductions: one generic strided reduction (a block per output element, any set of axes),
// Softmax / LogSoftmax along any axis, and LayerNormalization over trailing dims.
#include <cfloat>

#include "runtime/cuda/kernels/device_util.cuh"
#include "runtime/cuda/kernels/scalar_ops.h"

namespace onepool::cuda {

namespace {

// Max / Min start from -inf / +inf (ReduceMax of all -inf is -inf, of nothing -inf as the CPU)
// and propagate NaN, which fmaxf / fminf would drop.
__device__ inline float reduce_init(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return -INFINITY;
    case ReduceOp::kMin:
      return INFINITY;
    case ReduceOp::kProd:
      return 1.0f;
    default:
      return 0.0f;
  }
}

__device__ inline float reduce_combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax:
      return nan_propagating_max(a, b);
    case ReduceOp::kMin:
      return nan_propagating_min(a, b);
    case ReduceOp::kProd:
      return a * b;
    default:
      return a + b;
  }
}

__device__ inline float reduce_map(ReduceOp op, float x) {
  switch (op) {
    case ReduceOp::kSumSquare:
    case ReduceOp::kL2:
      return x * x;
    case ReduceOp::kL1:
      return fabsf(x);
    default:
      return x;
  }
}

// Block-wide combine; every thread gets the result. `scratch` holds kBlock floats.
__device__ inline float block_reduce(ReduceOp op, float value, float* scratch) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      scratch[threadIdx.x] = reduce_combine(op, scratch[threadIdx.x], scratch[threadIdx.x + half]);
    }
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();
  return result;
}

__device__ inline int64_t strided_offset(int rank, const int64_t* dims, const int64_t* strides,
                                         int64_t i) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return offset;
}

__global__ void reduce_kernel(ReduceOp op, ReduceShape s, const float* x, float* y) {
  __shared__ float scratch[kBlock];
  for (int64_t o = blockIdx.x; o < s.outputs; o += gridDim.x) {
    const float* base = x + strided_offset(s.out_rank, s.out_dims, s.out_strides, o);
    float acc = reduce_init(op);
    for (int64_t r = threadIdx.x; r < s.reduce_count; r += blockDim.x) {
      const float v = base[strided_offset(s.reduce_rank, s.reduce_dims, s.reduce_strides, r)];
      acc = reduce_combine(op, acc, reduce_map(op, v));
    }
    acc = block_reduce(op, acc, scratch);
    if (threadIdx.x == 0) {
      if (op == ReduceOp::kMean) acc /= static_cast<float>(s.reduce_count);
      if (op == ReduceOp::kL2) acc = sqrtf(acc);
      y[o] = acc;
    }
  }
}

// One block per (outer, inner) pair; elements along the axis are `inner` apart.
__global__ void softmax_kernel(const float* x, float* y, int64_t outer, int64_t axis_dim,
                               int64_t inner, bool log) {
  __shared__ float scratch[kBlock];
  for (int64_t row = blockIdx.x; row < outer * inner; row += gridDim.x) {
    const int64_t base = (row / inner) * axis_dim * inner + row % inner;
    float max_value = -FLT_MAX;
    for (int64_t a = threadIdx.x; a < axis_dim; a += blockDim.x) {
      max_value = fmaxf(max_value, x[base + a * inner]);
    }
    max_value = block_reduce(ReduceOp::kMax, max_value, scratch);
    float sum = 0.0f;
    for (int64_t a = threadIdx.x; a < axis_dim; a += blockDim.x) {
      sum += expf(x[base + a * inner] - max_value);
    }
    sum = block_reduce(ReduceOp::kSum, sum, scratch);
    const float log_sum = logf(sum);
    for (int64_t a = threadIdx.x; a < axis_dim; a += blockDim.x) {
      const float shifted = x[base + a * inner] - max_value;
      y[base + a * inner] = log ? shifted - log_sum : expf(shifted) / sum;
    }
  }
}

__global__ void layer_norm_kernel(const float* x, const float* scale, const float* bias, float* y,
                                  int64_t rows, int64_t cols, float epsilon) {
  __shared__ float scratch[kBlock];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* in = x + row * cols;
    float* out = y + row * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
    const float mean = block_reduce(ReduceOp::kSum, sum, scratch) / static_cast<float>(cols);
    float square = 0.0f;  // two passes: exact enough in float, no cancellation
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = in[c] - mean;
      square += d * d;
    }
    const float variance = block_reduce(ReduceOp::kSum, square, scratch) / static_cast<float>(cols);
    const float inv = rsqrtf(variance + epsilon);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = (in[c] - mean) * inv * scale[c];
      out[c] = bias != nullptr ? v + bias[c] : v;
    }
  }
}

unsigned row_grid(int64_t rows) {
  return static_cast<unsigned>(rows < 1 ? 1 : (rows > 65535 * 16 ? 65535 * 16 : rows));
}

}  // namespace

cudaError_t launch_reduce(ReduceOp op, const ReduceShape& shape, const float* x, float* y,
                          cudaStream_t stream) {
  if (shape.outputs == 0) return cudaSuccess;
  reduce_kernel<<<row_grid(shape.outputs), kBlock, 0, stream>>>(op, shape, x, y);
  return cudaGetLastError();
}

cudaError_t launch_softmax(const float* x, float* y, int64_t outer, int64_t axis_dim, int64_t inner,
                           bool log, cudaStream_t stream) {
  if (outer * inner * axis_dim == 0) return cudaSuccess;
  softmax_kernel<<<row_grid(outer * inner), kBlock, 0, stream>>>(x, y, outer, axis_dim, inner, log);
  return cudaGetLastError();
}

cudaError_t launch_layer_norm(const float* x, const float* scale, const float* bias, float* y,
                              int64_t rows, int64_t cols, float epsilon, cudaStream_t stream) {
  if (rows * cols == 0) return cudaSuccess;
  layer_norm_kernel<<<row_grid(rows), kBlock, 0, stream>>>(x, scale, bias, y, rows, cols, epsilon);
  return cudaGetLastError();
}

}  // namespace onepool::cuda
