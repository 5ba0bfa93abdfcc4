// The CUDA backend: one stream and one cuBLAS handle per Session, one device pool (a single
// cudaMalloc of plan.pool_bytes, or caller device memory), the Model's weights uploaded once per
// Model and device and shared by its Sessions (see DeviceWeights), and execute() that
// replays the whole node sequence as one CUDA graph (Session::cuda_graph_stats says whether it
// did). Every call makes its device current and gives the caller's current device back.
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

}  // namespace onepool::cuda
