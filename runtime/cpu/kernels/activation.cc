#include "runtime/cpu/kernels/activation.h"

namespace onepool::cpu {

ONEPOOL_ISA_CLONES void add_residual(float* data, const float* other, int64_t count) {
  for (int64_t i = 0; i < count; ++i) data[i] = data[i] + other[i];
}

}  // namespace onepool::cpu
