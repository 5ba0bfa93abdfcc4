// (op type) → CUDA kernel factory: every family's registration (kernels/cuda_ops.h), built per
// Session, no global state.
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"

namespace onepool::cuda {

CudaKernelRegistry CudaKernelRegistry::with_all_kernels() {
  CudaKernelRegistry registry;
  register_elementwise_kernels(registry);
  register_tensor_kernels(registry);
  register_normalization_kernels(registry);
  register_reduce_kernels(registry);
  register_conv_pool_kernels(registry);
  register_matmul_kernels(registry);
  register_recurrent_kernels(registry);
  return registry;
}

}  // namespace onepool::cuda
