// PLACEHOLDER (being written)
#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_unique_kernel(KernelRegistry& registry) { (void)registry; }

}  // namespace onepool::cpu
