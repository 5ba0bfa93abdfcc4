// ConvTranspose whose kernel equals its stride (U-Net's and FPN's 2x2 stride-2 upsampling): each
// output position then takes exactly one tap of one input position, Y[m, ih * kH + kh, iw * kW +
// kw] = sum_c W[c, m, kh, kw] * X[c, ih, iw] (+ bias, activation), so the op is kH products of
// OnePool's packed GEMM (sgemm_packed.h), one per kernel row, with nothing to add up afterwards:
// no column matrix in memory, no col2im, no zeroing of Y.
//
// Product kh has rows (m, kw) (row m * kW + kw: weights packed once at Session creation) and
// columns the positions of a tile of whole X rows (about 256, read in place from X's planes).
// Its result lands in a small per-thread buffer (a chunk of its rows at a time, so the buffer
// stays in the core's cache) and leaves it interleaved: row m * kW + kw's column iw goes to Y's
// column iw * kW + kw of row ih * kH + kh, with the bias added on the way and the activation
// applied to the finished Y row.
//
// Numerics: every Y element is one fused multiply-add chain over the input channels in order
// from 0 (sgemm_packed), then + bias (+ 0 without one, as the zeroed Y of the col2im path gave),
// then the activation. Tiles, chunks and threads only decide which chains run together: the bits
// do not depend on the thread count, the ISA, or the workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/packed_weight_cache.h"

namespace onepool::cpu::nn {

/// True for the transposed convolutions this path runs: one group, no depth kernel, kernel ==
/// stride on H and W (at most 16 a side), dilation 1, no pads, and Y exactly X's size times the
/// stride (no output_padding or larger output_shape), on a GEMM micro-kernel of AVX2 or more.
bool transpose_taps_fit(const WindowGeometry& g, int64_t group, SgemmIsa isa);

struct TransposeTapsPlan {
  SgemmIsa isa = SgemmIsa::kPortable;
  int64_t batch = 0;
  int64_t in_channels = 0;   // C: the products' depth
  int64_t out_channels = 0;  // M
  int64_t kernel_h = 1;      // == stride H
  int64_t kernel_w = 1;      // == stride W
  int64_t x_depth = 1;       // X's D, H and W (g.output)
  int64_t x_height = 1;
  int64_t x_width = 1;
  int64_t tile_rows = 1;         // X rows (d, h pairs) per column tile
  int64_t chunk_rows = 0;        // product rows per chunk: whole panels and whole (m, kw) groups
  int64_t buffer_floats = 0;     // one part's buffer: chunk_rows x the widest tile
  int64_t parts = 1;             // buffers in the workspace: one per thread
  int64_t packed_floats_kh = 0;  // one kernel row's packed weights (line-aligned)
  // The kH packed products' weights, one after another from a line-aligned start; shared by every
  // Session of the Model.
  std::shared_ptr<const std::vector<float>> packed;
  Activation activation;

  int64_t workspace_bytes() const;
};

/// The plan for `g` (transpose_taps_fit true) and the weights W [C, M, 1, kH, kW] flattened.
/// `share` returns the Model's packed copy or makes one with the factory it is given.
TransposeTapsPlan plan_transpose_taps(const WindowGeometry& g, SgemmIsa isa, int64_t batch,
                                      int64_t in_channels, int64_t out_channels,
                                      const float* weights, int threads,
                                      const PackedWeightSharing& share);

/// Y = ConvTranspose(X) for the whole batch; `bias` may be nullptr. `workspace` holds
/// plan.workspace_bytes().
void run_transpose_taps(const TransposeTapsPlan& plan, const float* x, const float* bias, float* y,
                        std::byte* workspace, ThreadPool& threads);

}  // namespace onepool::cpu::nn
