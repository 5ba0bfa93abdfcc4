// Loads the CUDA backend library (libonepool_cuda.so) on demand; see
// runtime/cuda/module/cuda_module_abi.h for the contract.
#pragma once

#include <memory>

#include "onepool/session.h"
#include "onepool/status.h"
#include "runtime/backend.h"

namespace onepool {

/// The CUDA backend for options.device, created by libonepool_cuda.so. The library is opened on
/// the first call in a process and stays loaded (its code backs every CUDA backend created; the
/// CUDA runtime does not support being unloaded under live contexts). kUnsupported naming the
/// library, the places searched and the dynamic linker's reason (e.g. a missing libcublas) when
/// it cannot be loaded, or when it comes from another build (ABI mismatch).
Expected<std::unique_ptr<Backend>> load_cuda_backend(const SessionOptions& options);

}  // namespace onepool
