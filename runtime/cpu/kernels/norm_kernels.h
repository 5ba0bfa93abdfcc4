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

/// Mean and 1/sqrt(var + epsilon) of x[0, count) (population variance, two passes).
inline RowMoments row_moments(const float* x, int64_t count, float epsilon) {
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += x[i];
  const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  double squares = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = x[i] - mean;
    squares += d * d;
  }
  const double variance = count > 0 ? squares / static_cast<double>(count) : 0.0;
  return {static_cast<float>(mean), static_cast<float>(1.0 / std::sqrt(variance + epsilon))};
}

}  // namespace onepool::cpu::nn
