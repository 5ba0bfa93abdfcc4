// float16 and bfloat16 nodes on the CPU. Kernels that move bytes (Reshape, Transpose, Concat,
// Gather, Slice, Where, Cast, ...) take the half types themselves; every other float operator
// computes in float32 registers through one adapter: its float32 kernel runs on float32 copies of
// the node's half inputs, made in the node's planned workspace, and its half outputs are rounded
// back to the narrow type (nearest even) when it returns. Half tensors stay half in the pool at
// their own size; only the node running holds float32 copies, inside the plan. Half weights are
// widened once, at Session creation. ONNX Runtime's CPU provider computes these operators in
// float32 too (it inserts Casts around them); OnePool rounds after every node, as the model's
// dtypes say.
#pragma once

#include "onepool/status.h"
#include "planner/core/graph.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu {

/// Prepares `node` with `factory`; when the kernel refuses it as kUnsupported and the node reads
/// or writes a half type, prepares the float32 kernel of the same node inside the adapter instead.
/// Any other error is returned as the factory gave it.
/// `threads` and `isa`: the Session's CPU threads and instruction set (NodeContext);
/// `packed_weights`: the Model's cache of repacked weights when `graph` is the Model's graph
/// (the float32 adapter's shadow graph never uses it).
Expected<PreparedKernel> prepare_cpu_kernel(KernelFactory factory, const Graph& graph,
                                            const Node& node, int threads = 1,
                                            CpuIsa isa = CpuIsa::kAuto,
                                            PackedWeightCache* packed_weights = nullptr);

}  // namespace onepool::cpu
