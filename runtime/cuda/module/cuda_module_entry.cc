// The two entry points of libonepool_cuda.so (see cuda_module_abi.h); every other symbol of the
// library is local (cuda_module.map).
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/module/cuda_module_abi.h"

extern "C" {

__attribute__((visibility("default"))) int onepool_cuda_module_abi() {
  return onepool::kCudaModuleAbiVersion;
}

__attribute__((visibility("default"))) void onepool_cuda_create_backend(
    const onepool::SessionOptions* options,
    onepool::Expected<std::unique_ptr<onepool::Backend>>* result) {
  onepool::cuda::CudaBackendOptions cuda_options;
  cuda_options.cuda_graph = options->cuda_graph;
  cuda_options.tf32 = options->tf32;
  *result = onepool::cuda::create_cuda_backend(*options, cuda_options);
}

}  // extern "C"
