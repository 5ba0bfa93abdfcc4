// The tensor data-movement family: transposes, concatenation, slicing, gathers, padding,
// broadcasting copies and resizing.
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/shape_ops.h"

namespace onepool::cpu {

void register_tensor_kernels(KernelRegistry& registry) {
  registry.add("Transpose", &data::make_transpose_kernel);
  registry.add("DepthToSpace", &data::make_depth_to_space_kernel);
  registry.add("SpaceToDepth", &data::make_space_to_depth_kernel);
  registry.add("Concat", &data::make_concat_kernel);
  registry.add("Split", &data::make_split_kernel);
  registry.add("Slice", &data::make_slice_kernel);
  registry.add("Gather", &data::make_gather_kernel);
  registry.add("GatherElements", &data::make_gather_elements_kernel);
  registry.add("Pad", &data::make_pad_kernel);
  registry.add("Expand", &data::make_expand_kernel);
  registry.add("Tile", &data::make_tile_kernel);
  registry.add("Resize", &data::make_resize_kernel);
  registry.add("Upsample", &data::make_resize_kernel);
}

}  // namespace onepool::cpu
