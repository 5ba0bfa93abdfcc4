#include "runtime/cuda/kernels/gemm.h"

#include <limits>

#include "runtime/cuda/cuda_check.h"

namespace onepool::cuda {

namespace {
bool fits_int(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }
}  // namespace

Expected<GemmCall> row_major_gemm(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                                  int64_t batch, int64_t stride_a, int64_t stride_b,
                                  int64_t stride_c) {
  // Column-major Cᵀ[N, M] = op(B)ᵀ[N, K] · op(A)ᵀ[K, M]: the first operand is B.
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(batch)) {
    return make_status(StatusCode::kUnsupported, "GEMM dims [", m, ", ", n, ", ", k, "] x ", batch,
                       " exceed cuBLAS's int32 range");
  }
  GemmCall call;
  call.m = static_cast<int>(n);
  call.n = static_cast<int>(m);
  call.k = static_cast<int>(k);
  call.op_a = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // B stored [N, K] when transposed
  call.lda = static_cast<int>(trans_b ? k : n);
  call.op_b = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // A stored [K, M] when transposed
  call.ldb = static_cast<int>(trans_a ? m : k);
  call.ldc = static_cast<int>(n);
  call.stride_a = stride_b;
  call.stride_b = stride_a;
  call.stride_c = stride_c;
  call.batch = static_cast<int>(batch);
  if (call.lda == 0) call.lda = 1;
  if (call.ldb == 0) call.ldb = 1;
  if (call.ldc == 0) call.ldc = 1;
  return call;
}

Status run_gemm(const CudaRunContext& c, const GemmCall& call, const float* a, const float* b,
                float* out, size_t cublas_bytes) {
  if (call.m == 0 || call.n == 0 || call.batch == 0) return Status::ok();
  ONEPOOL_CUBLAS_RETURN_IF_ERROR(cublasSetWorkspace(c.cublas, c.workspace, cublas_bytes));
  // Row-major A·B is column-major Bᵀ·Aᵀ: `b` is cuBLAS's first operand.
  if (call.batch == 1) {
    return ONEPOOL_CUBLAS_STATUS(cublasSgemm(c.cublas, call.op_a, call.op_b, call.m, call.n, call.k,
                                             &call.alpha, b, call.lda, a, call.ldb, &call.beta, out,
                                             call.ldc));
  }
  return ONEPOOL_CUBLAS_STATUS(
      cublasSgemmStridedBatched(c.cublas, call.op_a, call.op_b, call.m, call.n, call.k, &call.alpha,
                                b, call.lda, call.stride_a, a, call.ldb, call.stride_b, &call.beta,
                                out, call.ldc, call.stride_c, call.batch));
}

namespace {

// cublasGemmEx / cublasGemmStridedBatchedEx with operands of `ab_type` and an output of
// `out_type`, accumulating in float32 (alpha and beta float32).
Status run_gemm_ex(const CudaRunContext& c, const GemmCall& call, cudaDataType_t ab_type,
                   cudaDataType_t out_type, const void* a, const void* b, void* out,
                   size_t cublas_bytes) {
  if (call.m == 0 || call.n == 0 || call.batch == 0) return Status::ok();
  ONEPOOL_CUBLAS_RETURN_IF_ERROR(cublasSetWorkspace(c.cublas, c.workspace, cublas_bytes));
  // As in run_gemm: `b` is cuBLAS's first operand.
  if (call.batch == 1) {
    return ONEPOOL_CUBLAS_STATUS(cublasGemmEx(c.cublas, call.op_a, call.op_b, call.m, call.n,
                                              call.k, &call.alpha, b, ab_type, call.lda, a, ab_type,
                                              call.ldb, &call.beta, out, out_type, call.ldc,
                                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  return ONEPOOL_CUBLAS_STATUS(cublasGemmStridedBatchedEx(
      c.cublas, call.op_a, call.op_b, call.m, call.n, call.k, &call.alpha, b, ab_type, call.lda,
      call.stride_a, a, ab_type, call.ldb, call.stride_b, &call.beta, out, out_type, call.ldc,
      call.stride_c, call.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

Status run_gemm_half(const CudaRunContext& c, const GemmCall& call, cudaDataType_t type,
                     const void* a, const void* b, void* out, size_t cublas_bytes) {
  return run_gemm_ex(c, call, type, type, a, b, out, cublas_bytes);
}

Status run_gemm_mixed(const CudaRunContext& c, const GemmCall& call, cudaDataType_t type,
                      const void* a, const void* b, float* out, size_t cublas_bytes) {
  return run_gemm_ex(c, call, type, CUDA_R_32F, a, b, out, cublas_bytes);
}

}  // namespace onepool::cuda
