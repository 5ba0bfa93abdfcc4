// The CUDA backend: one stream and one cuBLAS handle per Session, one device pool (a single
// cudaMalloc of plan.pool_bytes, or caller device memory), the Model's weights uploaded once,
// and execute() that replays the whole node sequence as one CUDA graph.
//
// Never falls back to the CPU: a missing driver or device is a kDeviceError naming the CUDA
// runtime version, the driver's answer and the device requested. Thread-compatible, like the
// Session that owns it.
#pragma once

#include <memory>
#include <string>

#include "onepool/session.h"
#include "onepool/status.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda_kernel.h"

namespace onepool::cuda {

/// The backend for options.device (cuda:N) with default CudaBackendOptions.
Expected<std::unique_ptr<Backend>> create_cuda_backend(const SessionOptions& options);
/// Same with explicit backend knobs (CUDA graph on/off, TF32, cuBLAS workspace size).
Expected<std::unique_ptr<Backend>> create_cuda_backend(const SessionOptions& options,
                                                       const CudaBackendOptions& cuda_options);

/// What the backend decided at run time, for a CLI to print. Empty reason: nothing to say.
struct CudaRunNotes {
  bool graph_enabled = false;   ///< CudaBackendOptions::cuda_graph
  bool graph_captured = false;  ///< execute() replays a CUDA graph
  std::string graph_fallback_reason;  ///< why capture failed (direct launches are used instead)
};

/// The notes of `backend` when it is a CUDA backend, else nullptr.
const CudaRunNotes* cuda_run_notes(const Backend& backend);

}  // namespace onepool::cuda
