// Stride-1 2-D convolution as an implicit GEMM: the column matrix im2col would write is never
// built. The GEMM computes the output over the width of the planes it reads (plane_w >= OW
// columns a row, the extra ones discarded), so that row k = (c, kh, kw) of the column matrix is
// one contiguous run of input plane c from (kh * dilation_h, kw * dilation_w) on: the GEMM reads
// it in place through one offset per k (sgemm_packed_a_rows), in column tiles that run across
// output rows. Where the window reaches into padding, the group's input planes are first copied
// into zero-padded planes in the workspace; the wide output lands in the workspace too and its
// OW valid columns of each row are copied out.
//
// Each output element is one fused multiply-add chain over k = (c, kh, kw) in order, whatever
// the thread count or the column blocks (sgemm_packed.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

struct ImplicitGemmPlan {
  bool padded = false;  // reads zero-padded copies of the input planes
  int64_t plane_h = 0;  // dims of the planes the GEMM reads (padded, or the input's)
  int64_t plane_w = 0;
  int64_t padded_bytes = 0;          // workspace for one group's padded planes (0: unpadded)
  int64_t wide_columns = 0;          // columns of the wide output: (OH - 1) * plane_w + OW
  int64_t wide_bytes = 0;            // workspace for one group's wide output (0: written to Y)
  std::vector<int64_t> row_offsets;  // per row k = (c, kh, kw) of the column matrix
};

/// True for the convolutions the implicit GEMM runs: stride 1 and no depth axis.
bool implicit_gemm_fits(const WindowGeometry& g);

ImplicitGemmPlan plan_implicit_gemm(const WindowGeometry& g, int64_t in_channels,
                                    int64_t out_channels);

/// One group of one image: y (out_channels planes) = packed weights * the implicit column
/// matrix of x (in_channels planes). `workspace`: the plan's padded_bytes then wide_bytes.
void run_implicit_gemm(const WindowGeometry& g, const ImplicitGemmPlan& plan, SgemmIsa isa,
                       const float* packed, int64_t out_channels, int64_t in_channels,
                       const float* x, float* y, std::byte* workspace, ThreadPool& threads);

}  // namespace onepool::cpu::nn
