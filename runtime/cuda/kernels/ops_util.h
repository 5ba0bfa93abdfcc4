// Host-side helpers shared by the CUDA op families: dtype mapping, broadcast and strided-copy
// shapes (dims collapsed where possible), axis normalization, fused-activation parsing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/core/graph.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels/launch.h"

namespace onepool::cuda {

/// The device element type of `dtype`; false when the kernels do not know it.
bool elem_type_of(DType dtype, ElemType& type);

/// Row-major element strides of `shape`.
std::vector<int64_t> contiguous_strides(const Shape& shape);

/// Broadcast of up to 3 operands against `out` (ONNX / numpy rules, aligned on the right),
/// with adjacent dims merged when every operand is contiguous across them. Fails when an
/// operand does not broadcast or the collapsed rank exceeds kMaxDims.
Expected<BroadcastShape> make_broadcast(const Shape& out, std::span<const Shape> operands);

/// Index space `dims` with source and destination strides; adjacent dims merged when both are
/// contiguous across them, size-1 dims dropped. Fails when the rank exceeds kMaxDims.
Expected<CopyShape> make_copy_shape(std::span<const int64_t> dims,
                                    std::span<const int64_t> src_strides,
                                    std::span<const int64_t> dst_strides);

/// Axis in [-rank, rank) → [0, rank); kInvalidModel otherwise.
Expected<int> normalize_axis(int64_t axis, int rank);

/// The onepool_activation attributes the optimizer adds to Conv / Gemm / MatMul (`prefix` +
/// "activation" / "alpha" / "beta"; "onepool_pointwise_" for a PointwiseDepthwiseConv's first).
Expected<UnaryParams> parse_activation(const AttributeMap& attributes,
                                       const std::string& prefix = "onepool_");

/// Product of dims [begin, end) of `shape`.
int64_t dims_product(const Shape& shape, int begin, int end);

}  // namespace onepool::cuda
