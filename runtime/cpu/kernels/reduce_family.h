// Registration of the reduction-like kernels that live beside Reduce*: ArgMax/ArgMin
// (reduce_arg.cc) and Softmax/LogSoftmax/Hardmax (softmax.cc). register_reduce_kernels calls both.
#pragma once

#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_arg_kernels(KernelRegistry& registry);
void register_softmax_kernels(KernelRegistry& registry);

}  // namespace onepool::cpu
