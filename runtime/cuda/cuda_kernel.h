// The CUDA kernel interface, mirroring runtime/cpu/kernel.h: a kernel is prepared once per node
// at Session creation (attributes parsed, launch parameters precomputed, workspace declared) and
// then enqueued many times.
//
// Contract for CudaKernel::enqueue: enqueue work on `stream` only; no allocation (host or
// device), no synchronization, no exception, no global state. It may be captured into a CUDA
// graph, so it must not read device memory on the host or depend on anything but its views,
// which stay fixed for the Session's lifetime.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/core/graph.h"
#include "runtime/kernel_table.h"
#include "runtime/node_context.h"

namespace onepool::cuda {

/// cuBLAS's recommended workspace sizes (cublasSetWorkspace documentation).
constexpr size_t kCublasWorkspaceDefault = size_t{4} << 20;
constexpr size_t kCublasWorkspaceHopper = size_t{32} << 20;

/// Backend knobs. SessionOptions does not carry them yet (see cuda_backend.h).
struct CudaBackendOptions {
  bool cuda_graph = true;  ///< capture the node sequence once, replay it with cudaGraphLaunch
  bool tf32 = false;       ///< allow TF32 tensor-core math in cuBLAS (float32 is exact otherwise)
  /// cuBLAS workspace per GEMM node, planned in the pool (workspaces of different nodes share
  /// bytes). 0: what cuBLAS recommends for the device, resolved when the backend is created
  /// (kCublasWorkspaceHopper from compute capability 9.0 on, kCublasWorkspaceDefault before).
  size_t cublas_workspace_bytes = 0;
};

/// What a CUDA kernel factory may look at: the node (see runtime/node_context.h) and the backend
/// options.
class CudaNodeContext : public NodeContext {
 public:
  CudaNodeContext(const Graph& graph, const Node& node, const CudaBackendOptions& options)
      : NodeContext(graph, node), options_(options) {}

  const CudaBackendOptions& options() const { return options_; }
  /// kUnsupported naming the node, op and the dtype of input 0 (or "none").
  Status unsupported(const std::string& why) const;

 private:
  const CudaBackendOptions& options_;
};

/// What a kernel sees when it is enqueued. Omitted optional inputs have data == nullptr.
/// Every data pointer is device memory (pool or weights).
struct CudaRunContext {
  std::span<const TensorView> inputs;
  std::span<const TensorView> outputs;
  std::byte* workspace = nullptr;  ///< this node's planned pool slice (256-byte aligned)
  size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;  ///< bound to `stream`
};

class CudaKernel {
 public:
  virtual ~CudaKernel() = default;
  /// Enqueues the node's work. Must not allocate or synchronize.
  virtual Status enqueue(const CudaRunContext& context) = 0;
};

/// A prepared kernel and the pool scratch bytes it needs (im2col columns, cuBLAS workspace).
struct CudaPreparedKernel {
  std::unique_ptr<CudaKernel> kernel;
  size_t workspace_bytes = 0;
  /// Output 0 may share input 0's bytes: enqueue() skips its copy when the two coincide.
  bool output_is_view = false;
  /// Concat: enqueue() skips every input already at its slice of the output.
  bool concat_in_place = false;
};

using CudaKernelFactory = Expected<CudaPreparedKernel> (*)(const CudaNodeContext& node);

/// (op type) -> CUDA kernel factory, built per Session like the CPU's (runtime/kernel_table.h):
/// each op family's file registers its ops (kernels/cuda_ops.h).
class CudaKernelRegistry : public KernelTable<CudaKernelFactory> {
 public:
  /// A registry holding every CUDA kernel OnePool has (runtime/cuda/cuda_registry.cc).
  static CudaKernelRegistry with_all_kernels();
};

/// Wraps a callable `Status(const CudaRunContext&)` as a kernel (the prepared state lives in
/// the lambda's captures, so each op family writes only a factory).
template <class F>
class LambdaKernel final : public CudaKernel {
 public:
  explicit LambdaKernel(F body) : body_(std::move(body)) {}
  Status enqueue(const CudaRunContext& context) override { return body_(context); }

 private:
  F body_;
};

template <class F>
CudaPreparedKernel make_kernel(F body, size_t workspace_bytes = 0) {
  return CudaPreparedKernel{std::make_unique<LambdaKernel<F>>(std::move(body)), workspace_bytes};
}

/// Rounds up to the pool alignment (workspace sub-buffers stay 256-byte aligned).
constexpr size_t align_256(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace onepool::cuda
