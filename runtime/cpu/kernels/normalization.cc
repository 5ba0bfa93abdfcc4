// Registers the normalization kernels (norm_batch.cc, norm_layer.cc, norm_instance.cc).
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/norm_kernels.h"

namespace onepool::cpu {

void register_normalization_kernels(KernelRegistry& registry) {
  registry.add("BatchNormalization", &nn::make_batch_norm_kernel);
  registry.add("LayerNormalization", &nn::make_layer_norm_kernel);
  registry.add("InstanceNormalization", &nn::make_instance_norm_kernel);
}

}  // namespace onepool::cpu
