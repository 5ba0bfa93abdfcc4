// Placeholder: the normalization kernel family registers nothing yet.
#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

void register_normalization_kernels(KernelRegistry& registry) { (void)registry; }

}  // namespace onepool::cpu
