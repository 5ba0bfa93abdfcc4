// Conv on oneDNN (built with ONEPOOL_DNNL, see cmake/OnepoolDnnl.cmake): a direct blocked
// convolution (brgconv / jit) for the dense and grouped 1-D and 2-D convolutions that im2col +
// sgemm would run. Activations stay NCHW between nodes: the kernel reorders X into the
// primitive's blocked layout and Y back, in its workspace.
//
// Prepared once: the primitive, the two reorders and the weights reordered into the layout the
// primitive prefers (owned by the kernel). The workspace, planned in the pool, holds oneDNN's
// scratchpad (scratchpad_mode::user) and the blocked X and Y; run() binds the pool addresses
// with set_data_handle. Results do not depend on where the plan puts the workspace.
// Threads: oneDNN (Debian) runs on OpenMP; OpenMP's thread count is set to the Session's
// before the primitives are created and again before each run (set_dnnl_threads). Only
// single-threaded Sessions take this path for now (see make_dnnl_conv_kernel).
// Bias is the primitive's bias input; the fused activation runs afterwards with the same code
// as the unfused op (activation.h), so NaN passes through Relu / Clip unchanged.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"

namespace onepool::cpu::nn {

/// What the Conv factory has worked out for a node.
struct DnnlConvCase {
  WindowGeometry geometry;
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  Activation activation;
};

/// True when this build has oneDNN.
bool dnnl_available();

/// Sets oneDNN's (OpenMP's) thread count for the calling thread. The backend calls it before
/// preparing kernels, because a primitive fixes its work split at creation from this count,
/// and each kernel calls it again before it executes.
void set_dnnl_threads(int threads);

/// The oneDNN kernel for `conv`, or nullopt when oneDNN is not built in or does not take the
/// case (3-D, weights that are not constants, more than one thread, no direct oneDNN kernel);
/// the caller keeps its own path then.
std::optional<PreparedKernel> make_dnnl_conv_kernel(const NodeContext& node,
                                                    const DnnlConvCase& conv);

}  // namespace onepool::cpu::nn
