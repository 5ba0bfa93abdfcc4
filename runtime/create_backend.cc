// Backend selection: the device the user asked for, or an error. Never a silent fallback.
#include "runtime/backend.h"
#include "runtime/cpu/cpu_backend.h"

#ifdef ONEPOOL_HAVE_CUDA
#include "runtime/cuda/cuda_backend.h"
#endif

namespace onepool {

Expected<std::unique_ptr<Backend>> create_backend(const SessionOptions& options) {
  if (options.device.kind == DeviceKind::kCpu) return cpu::create_cpu_backend(options.threads);
#ifdef ONEPOOL_HAVE_CUDA
  cuda::CudaBackendOptions cuda_options;
  cuda_options.cuda_graph = options.cuda_graph;
  cuda_options.tf32 = options.tf32;
  return cuda::create_cuda_backend(options, cuda_options);
#else
  return make_status(StatusCode::kUnsupported, "device ", options.device.to_string(),
                     " requested, but this OnePool was built without the CUDA backend "
                     "(configure with -DONEPOOL_CUDA=ON where nvcc is available)");
#endif
}

}  // namespace onepool
