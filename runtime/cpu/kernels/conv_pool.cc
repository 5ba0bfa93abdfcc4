// Placeholder: the conv_pool kernel family registers nothing yet.
#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_conv_pool_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace onepool::cpu
