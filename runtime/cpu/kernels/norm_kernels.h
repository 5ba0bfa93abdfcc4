// Factories of the normalization CPU kernels (registered by normalization.cc), and the row
// statistics they share. float32 only; statistics accumulate in double.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::nn {

Expected<PreparedKernel> make_batch_norm_kernel(const NodeContext& node);
Expected<PreparedKernel> make_layer_norm_kernel(const NodeContext& node);
Expected<PreparedKernel> make_instance_norm_kernel(const NodeContext& node);

struct RowMoments {
  float mean = 0.0f;
  float inv_std = 0.0f;  // 1 / sqrt(variance + epsilon)
};

/// Mean and 1/sqrt(var + epsilon) of x[0, count) (population variance, two passes). The sums run
/// in double, in kMomentLanes independent lanes (lane j takes elements j, j + kMomentLanes, ...)
/// added in a fixed order at the end, then the tail: vector registers hold the lanes (one running
/// double sum is one dependent chain, 4 cycles an element), and the bits are the same on every
/// ISA, the lanes being part of the arithmetic.
RowMoments row_moments(const float* x, int64_t count, float epsilon);

}  // namespace onepool::cpu::nn
