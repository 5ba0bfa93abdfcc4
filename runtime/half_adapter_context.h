// The run context a half adapter hands its float32 kernel, for every backend (CPU RunContext,
// CUDA CudaRunContext): the node's own context with the float32 shadow views, and the workspace
// that follows the adapter's conversion buffers.
#pragma once

#include <cstddef>
#include <span>

#include "onepool/tensor.h"

namespace onepool {

template <class Context>
Context float32_kernel_context(const Context& node_context,
                               std::span<const TensorView> shadow_inputs,
                               std::span<const TensorView> shadow_outputs, std::byte* buffers,
                               size_t conversion_bytes) {
  Context inner = node_context;
  inner.inputs = shadow_inputs;
  inner.outputs = shadow_outputs;
  inner.workspace = buffers + conversion_bytes;
  inner.workspace_bytes = node_context.workspace_bytes - conversion_bytes;
  return inner;
}

}  // namespace onepool
