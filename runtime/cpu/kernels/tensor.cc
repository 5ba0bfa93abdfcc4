// The tensor data-movement family: transposes, concatenation, slicing, gathers, padding,
// broadcasting copies and resizing.
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/shape_ops.h"

namespace onepool::cpu {

void register_tensor_kernels(KernelRegistry& registry) {
  registry.add("Transpose", &make_transpose_kernel);
  registry.add("DepthToSpace", &make_depth_to_space_kernel);
  registry.add("SpaceToDepth", &make_space_to_depth_kernel);
  registry.add("Concat", &make_concat_kernel);
  registry.add("Split", &make_split_kernel);
  registry.add("Slice", &make_slice_kernel);
  registry.add("Gather", &make_gather_kernel);
  registry.add("GatherElements", &make_gather_elements_kernel);
  registry.add("Pad", &make_pad_kernel);
  registry.add("Expand", &make_expand_kernel);
  registry.add("Tile", &make_tile_kernel);
  registry.add("Resize", &make_resize_kernel);
  registry.add("Upsample", &make_resize_kernel);
}

}  // namespace onepool::cpu
