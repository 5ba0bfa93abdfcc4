// Kernel factories of the shape family (registered by shape.cc) and the tensor data-movement
// family (registered by tensor.cc). Each prepares one node: parameters read from attributes or
// constant inputs, index maps and strides precomputed; the kernels never allocate at run time.
// Everything of these two families lives in onepool::cpu::data so that helper names (TransposePlan,
// normalize_axis, ...) never collide with other kernel families.
#pragma once

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

// shape_copy.cc: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (byte copies).
Expected<PreparedKernel> make_copy_kernel(const NodeContext& node);
// shape_info.cc
Expected<PreparedKernel> make_shape_kernel(const NodeContext& node);
Expected<PreparedKernel> make_size_kernel(const NodeContext& node);
// shape_generate.cc
Expected<PreparedKernel> make_constant_of_shape_kernel(const NodeContext& node);
Expected<PreparedKernel> make_range_kernel(const NodeContext& node);
Expected<PreparedKernel> make_eye_like_kernel(const NodeContext& node);

// transpose_kernel.cc
Expected<PreparedKernel> make_transpose_kernel(const NodeContext& node);
Expected<PreparedKernel> make_depth_to_space_kernel(const NodeContext& node);
Expected<PreparedKernel> make_space_to_depth_kernel(const NodeContext& node);
// concat_split.cc
Expected<PreparedKernel> make_concat_kernel(const NodeContext& node);
Expected<PreparedKernel> make_split_kernel(const NodeContext& node);
// slice.cc
Expected<PreparedKernel> make_slice_kernel(const NodeContext& node);
// gather.cc
Expected<PreparedKernel> make_gather_kernel(const NodeContext& node);
Expected<PreparedKernel> make_gather_elements_kernel(const NodeContext& node);
// pad.cc
Expected<PreparedKernel> make_pad_kernel(const NodeContext& node);
// shape_expand_tile.cc
Expected<PreparedKernel> make_expand_kernel(const NodeContext& node);
Expected<PreparedKernel> make_tile_kernel(const NodeContext& node);
// resize.cc: Resize (opset 10-18) and Upsample (opset 7-9).
Expected<PreparedKernel> make_resize_kernel(const NodeContext& node);

}  // namespace onepool::cpu::data
