// 3x3 stride-1 convolutions by Winograd's minimal filtering, F(2x2, 3x3) or F(4x4, 3x3): each
// 2x2 (4x4) block of output ("tile") comes from a 4x4 (6x6) block of input in 16 (36)
// multiplications per (input, output) channel pair instead of 36 (144), so the GEMM does 2.25x
// (4x) fewer multiply-adds than the implicit GEMM. winograd_tile picks F(4x4, 3x3) on maps whose
// rows hold at least 6 of its tiles (its transforms run a tile row's tiles side by side) and
// where its products' columns come to at most 4/5 of F(2x2, 3x3)'s.
//
//   weights, once at prepare: U = G g G^T ((tile + 2)^2 values per 3x3 filter), one C_out x C_in
//                             matrix per position e of the transformed tile, packed for the GEMM;
//   input, per block of tiles: V = B^T d B for every input channel and tile;
//   product:                   M_e = U_e V_e, one GEMM (sgemm_packed.h) of C_out x C_in x tiles
//                             per position;
//   output:                    Y = A^T m A + bias, then the fused residual and activation.
//
// Tiles run in blocks of `block_tiles` whose V and M stay in a core's cache; each thread owns a
// contiguous range of tiles and its own part of the workspace (V then M of one block). A map of
// a single block instead splits each phase over the threads (channels, the products, output
// channels).
//
// Numerics: every output element is the same sequence of float operations whatever the thread
// count, the block size, the instruction set or the workspace: the transforms are the same adds
// (and multiplications by powers of two, which are exact) in the same order in every variant, and
// the products are the GEMM's fixed-order chains over input channels. The result differs from a
// direct convolution by rounding only (the transforms combine inputs before multiplying; measured
// within 1e-6 relative on the bench models for F(2x2, 3x3); F(4x4, 3x3) rounds a few times more,
// within 3.4e-5 relative on the tests' 8-channel sums, ResNet-18's outputs within 6e-7 of ONNX
// Runtime's). Which of the two a convolution runs depends on its shapes alone, never on the plan.
// Where the transforms would not be exact enough, the direct path runs instead:
//   - at prepare: weights with a NaN, an Inf or a magnitude above 2^40 keep the implicit GEMM;
//   - at run time: when the input holds a NaN, an Inf or a magnitude above 2^40, run_winograd
//     says so and the caller computes the whole output directly: a NaN must reach exactly the
//     outputs whose window holds it (the ONNX definition of Conv), and the transforms would
//     spread it over its whole tile. Below 2^40 no sum of either path can overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_winograd_plan.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/packed_weight_cache.h"

namespace onepool::cpu::nn {

/// True when the geometry and channels suit Winograd: 2-D, kernel 3x3, stride 1, one group, and
/// enough channels and tiles for the transforms to pay off (a small map's 16 tiles only with deep
/// inputs). Never the thread count: the bits must not follow it.
bool winograd_fits(const WindowGeometry& g, int64_t group, int64_t in_channels,
                   int64_t out_channels);

/// The output tile edge plan_winograd picks for this geometry: 4 (F(4x4, 3x3)) on maps with
/// enough 4x4 tiles that fill them well, else 2 (F(2x2, 3x3)).
int64_t winograd_tile(const WindowGeometry& g);

/// Where the transformed, packed weights come from (packed_weight_cache.h), by their layout
/// (kWinogradPanels, or kWinogradChannelPanels for a plan on the channel vectors); the default
/// calls pack().
using WinogradWeightSharing = std::function<std::shared_ptr<const PackedWeightCache::Floats>(
    PackedLayout, const PackedWeightCache::Factory&)>;

/// Transforms and packs the weights W [C_out, C_in, 3, 3]; nullopt when a weight is NaN, Inf
/// or above 2^40 in magnitude (the caller keeps the direct path).
std::optional<WinogradPlan> plan_winograd(const WindowGeometry& g, SgemmIsa isa,
                                          const float* weights, int64_t in_channels,
                                          int64_t out_channels, int threads,
                                          const WinogradWeightSharing& share = {});

/// `plan` in the least workspace it runs in (smaller blocks of tiles, the same packed weights and
/// the same bits), or nullopt when that is `plan` itself (F(2x2, 3x3), or blocks already that
/// small). A kernel asks for this plan's workspace and prefers `plan`'s.
std::optional<WinogradPlan> winograd_least_plan(const WinogradPlan& plan);

/// What follows the convolution, in this order, each step rounded: the bias (or nullptr), a fused
/// residual Add (y's layout, or nullptr; undilated convolutions only: a dilated one writes y
/// through its phases' scatters) and the activation.
struct WinogradEpilogue {
  const float* bias = nullptr;
  const float* residual = nullptr;
  Activation activation;
};

/// True when run_winograd adds a residual itself (else the caller adds it after, and passes
/// no activation).
inline bool winograd_takes_residual(const WindowGeometry& g) {
  return g.dilation[1] == 1 && g.dilation[2] == 1;
}

/// One image: y [C_out, OH, OW] = activation((conv(x [C_in, H, W]) + bias) + residual).
/// `workspace`: plan.workspace_bytes(). When x holds a value the transforms must not see (NaN,
/// Inf, magnitude above 2^40), y is computed again directly from the original weights W
/// [C_out, C_in, 3, 3], as the ONNX definition of Conv reads.
void run_winograd(const WindowGeometry& g, const WinogradPlan& plan, const float* x,
                  const float* weights, const WinogradEpilogue& epilogue, float* y,
                  std::byte* workspace, ThreadPool& threads);

}  // namespace onepool::cpu::nn
