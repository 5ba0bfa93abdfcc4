// cuBLAS SGEMM / GemmEx calls in OnePool's row-major world, on the node's planned cuBLAS workspace.
//
// cuBLAS is column-major: a row-major [r, c] matrix is a column-major [c, r] one (its transpose).
// So the row-major C[M, N] = A[M, K] · B[K, N] is issued as the column-major
// Cᵀ = Bᵀ · Aᵀ with m = N, n = M, and B passed first. Callers fill GemmCall in those column-major
// terms.
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>

#include "onepool/status.h"
#include "runtime/cuda/cuda_kernel.h"

namespace onepool::cuda {

struct GemmCall {
  cublasOperation_t op_a = CUBLAS_OP_N;  // first operand (column-major terms)
  cublasOperation_t op_b = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  long long stride_a = 0, stride_b = 0, stride_c = 0;  // elements; used when batch > 1
  int batch = 1;
  float alpha = 1.0f;
  float beta = 0.0f;
};

/// The row-major product C[M, N] = A[M, K] · B[K, N] (optionally batched with element strides)
/// as a column-major GemmCall. Fails when a dim or leading dimension exceeds int32.
Expected<GemmCall> row_major_gemm(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                                  int64_t batch, int64_t stride_a, int64_t stride_b,
                                  int64_t stride_c);

/// Binds the node's workspace (the first `cublas_bytes` of it) and issues the call on the
/// handle's stream: cublasSgemm, or cublasSgemmStridedBatched when call.batch > 1.
Status run_gemm(const CudaRunContext& c, const GemmCall& call, const float* a, const float* b,
                float* out, size_t cublas_bytes);

/// run_gemm with float16 or bfloat16 operands and output (`type`: CUDA_R_16F or CUDA_R_16BF):
/// cublasGemmEx / cublasGemmStridedBatchedEx accumulating in float32 (CUBLAS_COMPUTE_32F: tensor
/// cores where the device has them), alpha and beta in float32, the result rounded once to `type`
/// (out = alpha * A·B + beta * out, as the float32 path on widened copies computes it).
Status run_gemm_half(const CudaRunContext& c, const GemmCall& call, cudaDataType_t type,
                     const void* a, const void* b, void* out, size_t cublas_bytes);

/// run_gemm_half with a float32 output: float16 or bfloat16 operands (`type`), `out` float32
/// (CUDA_R_32F, element strides as the operands'), accumulating in float32 (CUBLAS_COMPUTE_32F).
/// For callers that finish the result themselves (a half Conv's bias + activation epilogue
/// rounds each output once).
Status run_gemm_mixed(const CudaRunContext& c, const GemmCall& call, cudaDataType_t type,
                      const void* a, const void* b, float* out, size_t cublas_bytes);

}  // namespace onepool::cuda
