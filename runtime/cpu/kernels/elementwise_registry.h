// Registration functions of the elementwise kernel family, one per file (concept); called by
// register_elementwise_kernels in elementwise.cc.
#pragma once

#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_unary_kernels(KernelRegistry& registry);       // elementwise_unary.cc
void register_clip_kernel(KernelRegistry& registry);         // elementwise_clip.cc
void register_arithmetic_kernels(KernelRegistry& registry);  // elementwise_arithmetic.cc
void register_pow_kernel(KernelRegistry& registry);          // elementwise_pow.cc
void register_variadic_kernels(KernelRegistry& registry);    // elementwise_variadic.cc
void register_compare_kernels(KernelRegistry& registry);     // elementwise_compare.cc
void register_where_kernel(KernelRegistry& registry);        // elementwise_where.cc
void register_cast_kernel(KernelRegistry& registry);         // elementwise_cast.cc
void register_trig_kernels(KernelRegistry& registry);        // elementwise_trig.cc
void register_activation_kernels(KernelRegistry& registry);  // elementwise_activation.cc

}  // namespace onepool::cpu
