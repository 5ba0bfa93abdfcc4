// The CPU reference backend: one aligned host allocation for the pool, weights used in place
// from the Model's packed region, kernels from the CPU kernel registry.
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace onepool::cpu {

/// `threads` = 0 means all hardware threads.
std::unique_ptr<Backend> create_cpu_backend(int threads);

}  // namespace onepool::cpu
