// PLACEHOLDER (being written)
#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_select_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace onepool::cpu
