// Backend selection: the device the user asked for, or an error. Never a silent fallback.
#include "runtime/backend.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cuda_module_loader.h"

namespace onepool {

Expected<std::unique_ptr<Backend>> create_backend(const SessionOptions& options) {
  if (options.device.kind == DeviceKind::kCpu) {
    return cpu::create_cpu_backend(options.threads, options.cpu_isa, options.thread_pool);
  }
#ifdef ONEPOOL_HAVE_CUDA
  // The CUDA backend is a separate library, loaded only now: a CPU Session never maps CUDA.
  return load_cuda_backend(options);
#else
  return make_status(StatusCode::kUnsupported, "device ", options.device.to_string(),
                     " requested, but this OnePool was built without the CUDA backend "
                     "(configure with -DONEPOOL_CUDA=ON where nvcc is available)");
#endif
}

}  // namespace onepool
