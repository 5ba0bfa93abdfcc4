// Factories of the pooling CPU kernels (registered by conv_pool.cc): MaxPool (with the optional
// Indices output), AveragePool, GlobalAveragePool and GlobalMaxPool. float32 only.
#pragma once

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::nn {

Expected<PreparedKernel> make_max_pool_kernel(const NodeContext& node);
Expected<PreparedKernel> make_average_pool_kernel(const NodeContext& node);
Expected<PreparedKernel> make_global_average_pool_kernel(const NodeContext& node);
Expected<PreparedKernel> make_global_max_pool_kernel(const NodeContext& node);

}  // namespace onepool::cpu::nn
