// 2-D convolution as an implicit GEMM: the column matrix im2col would write is never
// built. The output is computed in bands of whole rows, each over the width of the planes the
// GEMM reads (plane_w >= OW columns a row, the extra ones discarded), so that row k = (c, kh, kw)
// of the band's column matrix is one contiguous run of input plane c from row kh * dilation_h,
// column kw * dilation_w on: the GEMM reads it in place through one offset per k
// (sgemm_packed_a_rows), in column tiles that run across output rows. Where the window reaches
// into padding, each band's input rows (with their halo) are first copied into zero-padded
// planes; the band's wide output lands in the workspace and its OW valid columns a row are
// copied out. Each thread runs a contiguous run of whole bands in its own part of the workspace;
// a map of fewer bands than threads shares each band's output channels over them instead, or,
// for a 1x1 convolution read in place, its columns.
//
// A stride s > 1 first splits each band's (zero-padded) input into s x s phase planes per
// channel, phase (a, b) holding rows a, a + s, ... and columns b, b + s, ...: tap (kh, kw) of a
// stride-s window then reads phase (kh mod s, kw mod s) from row kh div s, column kw div s on,
// one contiguous run per k again (only the phases some tap reads are filled).
//
// On AVX-512, a convolution with k >= 256 whose runs of positions are long enough runs on the
// channel-vector GEMM instead (sgemm_channels.h, implicit_channels_fit): 64 output channels in
// vectors, positions broadcast from the same planes, each band's valid positions written straight
// into Y. It reads B without copying strips and leaves no lanes idle on small maps (7x7, 14x14).
//
// Each output element is one fused multiply-add chain over k = (c, kh, kw) in order, whatever
// the thread count, the bands or the GEMM (sgemm_packed.h, sgemm_channels.h). The bias, a fused
// residual and the fused activation are applied by the micro-kernels to each tile in registers
// before it is stored (sgemm_epilogue.h), or, for activations they do not compute, to each band's
// output right after its GEMM while it is still in cache: a pass over the whole output afterwards
// reads and writes it again from memory once it outgrows the caches (MobileNet's first expansion
// writes 4.8 MB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/sgemm_channels.h"
#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

struct ImplicitGemmPlan {
  int64_t stride = 1;                              // > 1: the band's input split into phase planes
  std::vector<int64_t> phase_rows, phase_columns;  // the phases some tap reads (stride > 1)
  bool padded = false;       // reads zero-padded copies of each band's input rows
  int64_t plane_h = 0;       // rows of the planes the GEMM reads (a padded band, or the input)
  int64_t plane_w = 0;       // their width
  int64_t band_rows = 1;     // output rows per band
  int64_t padded_bytes = 0;  // one band's padded planes (0: the input is read in place)
  int64_t wide_bytes = 0;    // one band's wide output (0: written to Y directly)
  // Wide planes whose output rows are whole vectors (OW a multiple of 16, at least 32): each
  // output row of a band is its own product written straight into Y, skipping the wide output
  // and its copy (a stem's 32 x 112 x 112 output went through the workspace and 3,584 row
  // copies).
  bool rows_direct = false;
  int64_t part_bytes = 0;            // workspace per thread: padded, then wide (64-aligned)
  int64_t parts = 1;                 // threads, each with its own part
  std::vector<int64_t> row_offsets;  // per row k = (c, kh, kw) of the column matrix
  // On the channel-vector GEMM (implicit_channels_fit, AVX-512, weights packed by
  // pack_a_channels): each band's valid positions as runs, written straight into Y (the wide
  // output goes unused); `last_runs` for a last band shorter than band_rows.
  bool channels = false;
  std::vector<ColumnRun> runs, last_runs;
};

/// True when a map is better served by the channel-vector GEMM (sgemm_channels.h) than by the
/// column tiles of sgemm_packed.
bool implicit_channels_fit(const WindowGeometry& g, int64_t in_channels, int64_t out_channels);

/// True for the convolutions the implicit GEMM runs: no depth axis, equal strides up to 4 (a
/// stride above 1 reads each band from stride x stride phase planes, so each tap is again one
/// contiguous run: the same multiply-add chains as im2col, without the column matrix).
bool implicit_gemm_fits(const WindowGeometry& g);

/// Output rows per band (or im2col tile) of a map `height` rows high: at most `max_rows`, with
/// the bands shared out evenly when each of `threads` parts takes a contiguous run (28 rows at up
/// to 25 a band on 2 threads: 14 and 14, not 25 and 3). Maps that fit in fewer bands than threads
/// keep `max_rows`.
int64_t balanced_band_rows(int64_t height, int64_t max_rows, int threads);

/// `channels`: run on the channel-vector GEMM (where implicit_channels_fit, on AVX-512).
ImplicitGemmPlan plan_implicit_gemm(const WindowGeometry& g, int64_t in_channels,
                                    int64_t out_channels, int threads, bool channels = false);

/// y[m] = activation((y[m] + bias[m]) + residual[m]) (bias and residual may be nullptr; the same
/// operations as add_bias_activation, so the same bits). Applied by the GEMM's micro-kernels in
/// registers where implicit_epilogue_in_tiles allows it, else to each band right after its GEMM.
struct BandEpilogue {
  const float* bias = nullptr;      // one per output channel of the group
  const float* residual = nullptr;  // the group's output planes' residual (Y's layout), or nullptr
  Activation activation;
};

/// True when the micro-kernels can finish the output in registers: an activation they apply
/// (gemm_epilogue_supports) and, with a residual, a GEMM that writes Y's rows directly (a padded
/// band's wide output is copied out afterwards, its rows laid out unlike the residual's; the
/// channel-vector GEMM writes Y's rows).
bool implicit_epilogue_in_tiles(const ImplicitGemmPlan& plan, const Activation& activation,
                                bool residual);

/// True when run_implicit_gemm shares the output's positions over `threads` (each thread its own
/// bands, or its own columns of a band), false when it shares the output channels (a small map's
/// band on every thread). `in_tiles`: implicit_epilogue_in_tiles for the node's epilogue.
bool implicit_threads_share_positions(const WindowGeometry& g, const ImplicitGemmPlan& plan,
                                      int64_t in_channels, int64_t out_channels, bool in_tiles,
                                      int threads);

/// One group of one image: y (out_channels planes) = epilogue(packed weights * the implicit
/// column matrix of x (in_channels planes)). `workspace`: plan.parts * plan.part_bytes bytes.
void run_implicit_gemm(const WindowGeometry& g, const ImplicitGemmPlan& plan, SgemmIsa isa,
                       const float* packed, int64_t out_channels, int64_t in_channels,
                       const float* x, float* y, const BandEpilogue& epilogue, std::byte* workspace,
                       ThreadPool& threads);

}  // namespace onepool::cpu::nn
