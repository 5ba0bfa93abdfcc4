// Placeholder: the elementwise kernel family registers nothing yet.
#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_elementwise_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace onepool::cpu
