// float16 and bfloat16 nodes on the CUDA backend, as on the CPU (runtime/cpu/half_compute.h):
// Cast and the kernels that only move bytes take the half types themselves; every other float
// operator runs its float32 kernel on float32 copies of the node's half inputs, converted on the
// stream into the node's planned workspace, and its half outputs are rounded back (nearest even)
// after it. Half weights are converted on every run too (the CUDA kernel interface has no
// upload step of its own), so a half model costs a float32 model's bandwidth plus conversions:
// correct everywhere. The binary, unary, GEMM and Conv kernels take the half types natively (they
// refuse only the nodes where that would round differently; Conv's GEMMs write float32 and its
// epilogue rounds once), so only the other operators (ConvTranspose included) come here.
#pragma once

#include "onepool/status.h"
#include "planner/core/graph.h"
#include "runtime/cuda/cuda_kernel.h"

namespace onepool::cuda {

/// Prepares `node` with `factory`; when the kernel refuses it as kUnsupported and the node reads
/// or writes a half type, prepares the float32 kernel of the same node inside the adapter.
Expected<CudaPreparedKernel> prepare_cuda_kernel(CudaKernelFactory factory, const Graph& graph,
                                                 const Node& node,
                                                 const CudaBackendOptions& options);

}  // namespace onepool::cuda
