// Registers the convolution and pooling kernels (conv.cc, conv_transpose.cc,
// conv_pointwise_depthwise.cc, pool_window.cc, pool_global.cc).
#include "planner/core/onepool_ops.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/conv_kernels.h"
#include "runtime/cpu/kernels/pool_kernels.h"

namespace onepool::cpu {

void register_conv_pool_kernels(KernelRegistry& registry) {
  registry.add("Conv", &nn::make_conv_kernel);
  registry.add("ConvTranspose", &nn::make_conv_transpose_kernel);
  registry.add(kernel_key(kOnePoolDomain, kPointwiseDepthwiseOp),
               &nn::make_pointwise_depthwise_kernel);
  registry.add("MaxPool", &nn::make_max_pool_kernel);
  registry.add("AveragePool", &nn::make_average_pool_kernel);
  registry.add("GlobalAveragePool", &nn::make_global_average_pool_kernel);
  registry.add("GlobalMaxPool", &nn::make_global_max_pool_kernel);
}

}  // namespace onepool::cpu
