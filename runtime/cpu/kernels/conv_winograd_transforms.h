// The input and output transforms of Winograd F(2x2, 3x3) and F(4x4, 3x3) for one run of up to
// 16 tiles of one tile row (conv_winograd.h): portable versions (conv_winograd.cc and
// conv_winograd_f4.cc, compiled for each instruction set by ONEPOOL_ISA_CLONES) and AVX-512 ones
// (conv_winograd_avx512.cc, conv_winograd_f4_avx512.cc). Each pair performs the same float
// operations in the same order, so they give the same bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_winograd_plan.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

constexpr int64_t kWinogradLanes = 16;                           // tiles transformed together
constexpr int64_t kWinogradRowFloats = 2 * kWinogradLanes + 2;   // input columns they read
constexpr int64_t kWinograd4RowFloats = 4 * kWinogradLanes + 2;  // the same for F(4x4, 3x3)
constexpr float kWinogradMagnitudeLimit = 1099511627776.0f;      // 2^40

/// False for NaN, Inf and magnitudes above 2^40.
inline bool within_winograd_limit(float value) {
  return std::fabs(value) <= kWinogradMagnitudeLimit;
}

/// Everything one image's convolution reads and writes. `g` has dilation 1 (a dilated
/// convolution runs as one such convolution per phase, conv_winograd.cc).
struct WinogradImage {
  const WindowGeometry& g;
  const WinogradPlan& plan;
  const float* x;
  const float* bias;
  const Activation& activation;
  float* y;
  const float* residual;  // added before the activation (Y's layout), or nullptr

  int64_t tiles_h() const { return (g.output[1] + plan.tile - 1) / plan.tile; }
  int64_t tiles_w() const { return (g.output[2] + plan.tile - 1) / plan.tile; }
  int64_t tiles() const { return tiles_h() * tiles_w(); }
};

/// Up to kWinogradLanes tiles of one tile row: tiles (ty, tx .. tx + count), at `slot` of the
/// block's V and M.
struct TileRun {
  int64_t ty = 0;
  int64_t tx = 0;
  int64_t count = 0;
  int64_t slot = 0;
};

/// Tiles [first, first + count) of the image, row-major over the tile grid; their V then M live
/// in one workspace part.
struct TileBlock {
  int64_t first = 0;
  int64_t count = 0;
  float* v = nullptr;  // [positions][C_in][block_tiles], positions v_stride floats apart
  float* m = nullptr;  // [positions][C_out][block_tiles], positions m_stride floats apart
};

/// Calls fn(channel, run) for channels [first, end) of `block`, each over the block's runs of
/// tiles in order; false when a call returned false (the others still run).
template <class Fn>
bool for_each_channel_run(const WinogradImage& image, const TileBlock& block, int64_t first,
                          int64_t end, const Fn& fn) {
  const int64_t tiles_w = image.tiles_w();
  bool ok = true;
  for (int64_t channel = first; channel < end; ++channel) {
    for (int64_t slot = 0; slot < block.count;) {
      const int64_t tile = block.first + slot;
      TileRun run{tile / tiles_w, tile % tiles_w, 0, slot};
      run.count = std::min({kWinogradLanes, tiles_w - run.tx, block.count - slot});
      ok = fn(channel, run) && ok;
      slot += run.count;
    }
  }
  return ok;
}

/// Input row `iy` of `plane` from column `ix` on, `floats` columns: the plane itself where they
/// all lie inside it, else a zero-padded copy in `buffer`.
inline const float* winograd_input_row(const WindowGeometry& g, const float* plane, int64_t iy,
                                       int64_t ix, float* buffer,
                                       int64_t floats = kWinogradRowFloats) {
  const int64_t height = g.input[1];
  const int64_t width = g.input[2];
  if (iy >= 0 && iy < height && ix >= 0 && ix + floats <= width) {
    return plane + iy * width + ix;
  }
  std::fill(buffer, buffer + floats, 0.0f);
  if (iy < 0 || iy >= height) return buffer;
  const int64_t first = std::clamp<int64_t>(-ix, 0, floats);
  const int64_t last = std::clamp<int64_t>(width - ix, first, floats);
  for (int64_t k = first; k < last; ++k) buffer[k] = plane[iy * width + ix + k];
  return buffer;
}

/// V = B^T d B for input channels [first, end) of `block` (AVX-512; the CPU must have it).
/// False when an input read is NaN, Inf or above 2^40.
bool transform_input_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                            int64_t end);

/// Y = A^T m A + bias, then the activation, for output channels [first, end) of `block`
/// (AVX-512; the CPU must have it).
void transform_output_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                             int64_t end);

/// F(4x4, 3x3)'s V = B^T d B for input channels [first, end) of `block`, portable and AVX-512
/// (conv_winograd_f4.cc, conv_winograd_f4_avx512.cc). False when an input read is NaN, Inf or
/// above 2^40.
bool transform4_input_portable(const WinogradImage& image, const TileBlock& block, int64_t first,
                               int64_t end);
bool transform4_input_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                             int64_t end);

/// F(4x4, 3x3)'s Y = A^T m A + bias, then the residual and the activation, for output channels
/// [first, end) of `block`.
void transform4_output_portable(const WinogradImage& image, const TileBlock& block, int64_t first,
                                int64_t end);
void transform4_output_avx512(const WinogradImage& image, const TileBlock& block, int64_t first,
                              int64_t end);

/// F(4x4, 3x3)'s U = G g G^T for one 3x3 filter: 36 values `stride` floats apart, computed in
/// double and rounded once.
void transform4_filter(const float* filter, float* u, int64_t stride);

/// One image of a convolution of dilation 1 (conv_winograd.cc). False when an input read is
/// NaN, Inf or above 2^40 (the output is then incomplete).
bool run_winograd_undilated(const WinogradImage& image, std::byte* workspace, ThreadPool& threads);

/// As run_winograd_undilated, on the calling thread alone, in one workspace part.
bool run_winograd_on_one_thread(const WinogradImage& image, std::byte* part);

/// Workspace bytes a dilated convolution needs per part for one phase's input and output (0 for
/// dilation 1; conv_winograd_run.cc).
int64_t winograd_phase_bytes(const WindowGeometry& g, int64_t in_channels, int64_t out_channels);

}  // namespace onepool::cpu::nn
