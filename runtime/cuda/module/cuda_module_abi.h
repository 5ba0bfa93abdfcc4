// The contract between the runtime and the CUDA backend library (libonepool_cuda.so), which the
// runtime loads with dlopen only when a Session asks for a CUDA device: a CPU-only process never
// maps CUDA's libraries, and a binary built with CUDA starts on a machine without them.
//
// The library exports two C symbols. Both sides are built from the same sources by the same
// compiler, so C++ types cross the boundary; the ABI number guards against a library from another
// build (bump it whenever Backend, SessionOptions or Model change layout).
#pragma once

#include <memory>

#include "onepool/session.h"
#include "onepool/status.h"
#include "runtime/backend.h"

namespace onepool {

/// Bumped on any change to the types that cross the boundary.
inline constexpr int kCudaModuleAbiVersion = 1;

/// The library's file name; the loader looks for it beside the running binary or library, in
/// ../lib from it, in the build tree, then on the dynamic linker's search path.
inline constexpr const char* kCudaModuleFileName = "libonepool_cuda.so";

}  // namespace onepool

extern "C" {
/// Returns kCudaModuleAbiVersion as the library was built.
using OnepoolCudaModuleAbiFn = int (*)();
/// Creates the CUDA backend for options->device into *result (a backend or a Status).
using OnepoolCudaCreateBackendFn =
    void (*)(const onepool::SessionOptions* options,
             onepool::Expected<std::unique_ptr<onepool::Backend>>* result);
}
