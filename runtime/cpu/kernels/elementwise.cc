// The CPU elementwise kernel family: unary math and activations, Clip, broadcasting arithmetic,
// Pow, variadic Sum/Max/Min/Mean, comparisons and logic, Where, Cast. See broadcast.h for how
// broadcasting is planned and elementwise_kernel.h for the shared kernel templates.
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {

void register_elementwise_kernels(KernelRegistry& registry) {
  register_unary_kernels(registry);
  register_clip_kernel(registry);
  register_arithmetic_kernels(registry);
  register_pow_kernel(registry);
  register_variadic_kernels(registry);
  register_compare_kernels(registry);
  register_where_kernel(registry);
  register_cast_kernel(registry);
  register_trig_kernels(registry);
  register_activation_kernels(registry);
}

}  // namespace onepool::cpu
