// Checks shared by the MatMul and Gemm kernel factories.
#pragma once

#include <initializer_list>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/activation.h"

namespace onepool::cpu {

/// Fails (kInvalidModel) unless inputs 0..required-1 and output 0 are present.
Status check_arity(const NodeContext& node, size_t required);

/// The element type shared by every present input and output 0. kInvalidModel when they differ
/// ("input 'B': expected float32 like input 'A', got int64"); kUnsupported when it is not one of
/// `allowed` (float32, float64, int32, int64 in any subset).
Expected<DType> common_dtype(const NodeContext& node, std::initializer_list<DType> allowed);

/// The fused activation epilogue of the node (kNone when there is none). kUnsupported when the
/// onepool_activation name is unknown, or when the dtype is not float32 (the epilogue is float).
Expected<Activation> read_fused_activation(const NodeContext& node, DType dtype);

/// The factories of this family, registered by register_matmul_kernels.
Expected<PreparedKernel> make_matmul_kernel(const NodeContext& node);
Expected<PreparedKernel> make_gemm_kernel(const NodeContext& node);

}  // namespace onepool::cpu
