// CUDA and cuBLAS calls turned into Status: the call, its error name and text, file and line.
//
//   ONEPOOL_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(...));
//   ONEPOOL_CUBLAS_RETURN_IF_ERROR(cublasSgemm(...));
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "onepool/status.h"

namespace onepool::cuda {

/// kDeviceError naming the call, the CUDA error, file and line; ok for cudaSuccess.
inline Status cuda_status(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return Status::ok();
  return make_status(StatusCode::kDeviceError, call, " failed: ", cudaGetErrorName(error), " (",
                     cudaGetErrorString(error), ") at ", file, ":", line);
}

/// Same for cuBLAS.
inline Status cublas_status(cublasStatus_t error, const char* call, const char* file, int line) {
  if (error == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return make_status(StatusCode::kDeviceError, call, " failed: ", cublasGetStatusName(error), " (",
                     cublasGetStatusString(error), ") at ", file, ":", line);
}

}  // namespace onepool::cuda

#define ONEPOOL_CUDA_STATUS(call) ::onepool::cuda::cuda_status((call), #call, __FILE__, __LINE__)
#define ONEPOOL_CUBLAS_STATUS(call) \
  ::onepool::cuda::cublas_status((call), #call, __FILE__, __LINE__)
#define ONEPOOL_CUDA_RETURN_IF_ERROR(call) ONEPOOL_RETURN_IF_ERROR(ONEPOOL_CUDA_STATUS(call))
#define ONEPOOL_CUBLAS_RETURN_IF_ERROR(call) ONEPOOL_RETURN_IF_ERROR(ONEPOOL_CUBLAS_STATUS(call))
/// For a kernel launcher that returns cudaGetLastError() after its launch.
#define ONEPOOL_LAUNCH_RETURN_IF_ERROR(call) ONEPOOL_CUDA_RETURN_IF_ERROR(call)
