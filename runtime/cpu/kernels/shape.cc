// The shape family: ops that copy bytes unchanged or produce shape-derived tensors.
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/shape_ops.h"

namespace onepool::cpu {

void register_shape_kernels(KernelRegistry& registry) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    registry.add(op, &data::make_copy_kernel);
  }
  registry.add("Shape", &data::make_shape_kernel);
  registry.add("Size", &data::make_size_kernel);
  registry.add("ConstantOfShape", &data::make_constant_of_shape_kernel);
  registry.add("Range", &data::make_range_kernel);
  registry.add("EyeLike", &data::make_eye_like_kernel);
}

}  // namespace onepool::cpu
