#include "runtime/cpu/kernels/conv_implicit.h"

#include <algorithm>
#include <cstring>

namespace onepool::cpu::nn {
namespace {

// Columns of the wide output per thread-pool task: whole column tiles of either micro-kernel.
constexpr int64_t kTaskColumns = 256;

// Copies input plane c into its zero-padded plane: input (y, x) lands at (y + pad_top,
// x + pad_left); rows and columns the windows never read are dropped.
void pad_plane(const WindowGeometry& g, const ImplicitGemmPlan& plan, const float* x,
               float* padded) {
  const int64_t top = g.pad_begin[1];
  const int64_t left = g.pad_begin[2];
  for (int64_t row = 0; row < plan.plane_h; ++row) {
    float* dst = padded + row * plan.plane_w;
    const int64_t y = row - top;
    if (y < 0 || y >= g.input[1]) {
      std::fill(dst, dst + plan.plane_w, 0.0f);
      continue;
    }
    const int64_t first = std::clamp<int64_t>(left, 0, plan.plane_w);
    const int64_t last = std::clamp<int64_t>(left + g.input[2], first, plan.plane_w);
    std::fill(dst, dst + first, 0.0f);
    std::memcpy(dst + first, x + y * g.input[2] + (first - left),
                static_cast<size_t>(last - first) * sizeof(float));
    std::fill(dst + last, dst + plan.plane_w, 0.0f);
  }
}

}  // namespace

bool implicit_gemm_fits(const WindowGeometry& g) {
  return g.input[0] == 1 && g.output[0] == 1 && g.kernel[0] == 1 && g.stride[1] == 1 &&
         g.stride[2] == 1;
}

ImplicitGemmPlan plan_implicit_gemm(const WindowGeometry& g, int64_t in_channels,
                                    int64_t out_channels) {
  ImplicitGemmPlan plan;
  const int64_t need_h = g.output[1] + (g.kernel[1] - 1) * g.dilation[1];
  const int64_t need_w = g.output[2] + (g.kernel[2] - 1) * g.dilation[2];
  plan.padded =
      g.pad_begin[1] != 0 || g.pad_begin[2] != 0 || need_h > g.input[1] || need_w > g.input[2];
  plan.plane_h = plan.padded ? need_h : g.input[1];
  plan.plane_w = plan.padded ? need_w : g.input[2];
  constexpr auto kFloat = static_cast<int64_t>(sizeof(float));
  plan.padded_bytes = plan.padded ? in_channels * plan.plane_h * plan.plane_w * kFloat : 0;
  plan.wide_columns = (g.output[1] - 1) * plan.plane_w + g.output[2];
  // Planes exactly as wide as the output (1x1 kernels without padding): the GEMM writes Y.
  plan.wide_bytes = plan.plane_w == g.output[2] ? 0 : out_channels * plan.wide_columns * kFloat;
  for (int64_t c = 0; c < in_channels; ++c) {
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        plan.row_offsets.push_back(c * plan.plane_h * plan.plane_w +
                                   kh * g.dilation[1] * plan.plane_w + kw * g.dilation[2]);
      }
    }
  }
  return plan;
}

void run_implicit_gemm(const WindowGeometry& g, const ImplicitGemmPlan& plan, SgemmIsa isa,
                       const float* packed, int64_t out_channels, int64_t in_channels,
                       const float* x, float* y, std::byte* workspace, ThreadPool& threads) {
  const float* planes = x;
  if (plan.padded) {
    auto* padded = reinterpret_cast<float*>(workspace);
    const int64_t plane = plan.plane_h * plan.plane_w;
    threads.parallel_for(in_channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        pad_plane(g, plan, x + c * g.input_size(), padded + c * plane);
      }
    });
    planes = padded;
  }
  // Step 1. The wide output, a block of whole column tiles per task.
  const bool direct = plan.wide_bytes == 0;
  float* wide = direct ? y : reinterpret_cast<float*>(workspace + plan.padded_bytes);
  const auto depth = static_cast<int64_t>(plan.row_offsets.size());
  const int64_t tasks = (plan.wide_columns + kTaskColumns - 1) / kTaskColumns;
  threads.parallel_for(tasks, 1, [&](int64_t begin, int64_t end) {
    const int64_t first = begin * kTaskColumns;
    const int64_t last = std::min(plan.wide_columns, end * kTaskColumns);
    sgemm_packed_a_rows(isa, packed, out_channels, last - first, depth, planes + first,
                        plan.row_offsets.data(), wide + first, plan.wide_columns);
  });
  // Step 2. The OW valid columns of each output row.
  if (direct) return;
  const int64_t width = g.output[2];
  threads.parallel_for(out_channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      for (int64_t oh = 0; oh < g.output[1]; ++oh) {
        const float* src = wide + m * plan.wide_columns + oh * plan.plane_w;
        std::copy(src, src + width, y + m * g.output_size() + oh * width);
      }
    }
  });
}

}  // namespace onepool::cpu::nn
