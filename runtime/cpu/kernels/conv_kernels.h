// Factories of the Conv and ConvTranspose CPU kernels (registered by conv_pool.cc), and the
// bias + fused-activation epilogue they share.
//
// Conv paths, chosen at prepare time:
//   - depthwise (group == C_in > 1): direct loop, conv_depthwise.h; no workspace;
//   - Winograd F(2x2, 3x3) (3x3, stride 1, one group, constant weights, a map of at least 32
//     2x2 tiles): conv_winograd.h;
//   - pointwise (kernel 1, stride 1, no pad): one sgemm per image and group straight on X;
//   - general: im2col of one image's group into the workspace, then sgemm. The workspace is
//     (C_in / group) * kernel_size * output_size floats: one group of one image, never more.
// ConvTranspose: sgemm W^T * X into a column buffer of (C_out / group) * kernel_size * X_size
// floats (one group of one image), then col2im-accumulate into Y.
#pragma once

#include <cstdint>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

Expected<PreparedKernel> make_conv_kernel(const NodeContext& node);
Expected<PreparedKernel> make_conv_transpose_kernel(const NodeContext& node);
/// ai.onepool.PointwiseDepthwiseConv (conv_pointwise_depthwise.cc).
Expected<PreparedKernel> make_pointwise_depthwise_kernel(const NodeContext& node);

/// y[n, m, :] = activation(y[n, m, :] + bias[m] + residual[n, m, :]) over `batch` images of
/// `channels` planes of `plane_size` floats, rounded after each addition as the unfused nodes
/// round; bias and residual (a fused Add's other input, y's shape) may be nullptr. Parallel over
/// planes.
inline void add_bias_activation(float* y, const float* bias, int64_t batch, int64_t channels,
                                int64_t plane_size, const Activation& activation,
                                ThreadPool& threads, const float* residual = nullptr) {
  if (bias == nullptr && residual == nullptr && activation.kind == ActivationKind::kNone) return;
  const int64_t min_planes = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plane_size));
  threads.parallel_for(batch * channels, min_planes, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      float* data = y + plane * plane_size;
      if (bias != nullptr) {
        const float b = bias[plane % channels];
        map_in_place(data, plane_size, [b](float x) { return x + b; });
      }
      if (residual != nullptr) add_residual(data, residual + plane * plane_size, plane_size);
      apply_activation(activation, data, plane_size);
    }
  });
}

}  // namespace onepool::cpu::nn
