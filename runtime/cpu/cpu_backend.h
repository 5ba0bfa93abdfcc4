// The CPU reference backend: one aligned host allocation for the pool, weights used in place
// from the Model's packed region, kernels from the CPU kernel registry.
#pragma once

#include <memory>

#include "planner/core/graph.h"
#include "runtime/backend.h"

namespace onepool::cpu {

/// `threads` = 0 means all hardware threads. `isa`: SessionOptions::cpu_isa; one this CPU lacks
/// is kUnsupported. `shared_pool` (SessionOptions::thread_pool): run on those threads instead of
/// starting any; `threads` must then be 0 or the pool's count (kInvalidArgument otherwise).
Expected<std::unique_ptr<Backend>> create_cpu_backend(
    int threads, CpuIsa isa = CpuIsa::kAuto, std::shared_ptr<CpuThreadPool> shared_pool = nullptr);

class ThreadPool;
/// A backend for a nested graph (an If branch) that starts no threads: its kernels run on the
/// pool `*shared_threads` points at when execute() runs (the enclosing Session's; its own
/// single-threaded one while that is null). `threads` sizes per-thread scratch as above; `isa`
/// is the enclosing Session's (already checked).
std::unique_ptr<Backend> create_nested_cpu_backend(int threads, CpuIsa isa,
                                                   ThreadPool* const* shared_threads);

/// What the planner needs from the CPU kernels, per node of `graph`: workspace bytes and the
/// storage sharing each kernel honours (the same facts the backend's prepare() reports). A node
/// without a CPU kernel needs nothing; `unsupported`, when given, counts those nodes. `threads`
/// as for create_cpu_backend (per-thread scratch, e.g. Conv's column tiles, scales with it).
NodeMemoryNeeds memory_needs(const Graph& graph, int* unsupported = nullptr, int threads = 0);

}  // namespace onepool::cpu
