// 8-bit convolutions on the float GEMM, exactly: with x - x_zero and w - w_zero as floats, every
// product is an integer of at most 255 * 255 in magnitude, and when rows * 255 * max|w - w_zero|
// stays below 2^24 every partial sum of a fused multiply-add chain is an integer float holds
// exactly. The packed float GEMM (sgemm_packed.h) then gives the int32 accumulator's exact value
// (no int32 wrap is possible below that bound), register-blocked, where the int16 x int32 rows
// re-read the whole column matrix once per output channel.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/cpu/kernels/conv_implicit.h"
#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::quant {

/// The weights minus their zero points, packed per group for the float GEMM.
struct ExactFloatWeights {
  nn::SgemmIsa isa = nn::SgemmIsa::kPortable;
  int64_t rows = 0;           // depth: input channels per group x kernel size
  int64_t out_per_group = 0;  // output channels per group
  int64_t packed_floats = 0;  // one group's packed matrix
  std::shared_ptr<const std::vector<float>> packed;
  // Where the implicit GEMM fits (conv_implicit.h): each group's input converted once to float
  // planes of x - x_zero (plane_bytes), then multiplied in place, with no column matrix (the
  // columns of a 16 -> 32 3x3 convolution on 32x32 took half its time to fill and zero).
  std::optional<nn::ImplicitGemmPlan> implicit;
  int64_t plane_bytes = 0;  // one group's input planes as floats, 64-byte aligned
};

/// Packs `weights` ([M][rows] values of w - w_zero, group after group) when the float sums are
/// exact for any 8-bit input (rows * 255 * max|w - w_zero| < 2^24); nullopt otherwise.
std::optional<ExactFloatWeights> pack_exact_float_weights(nn::SgemmIsa isa,
                                                          const std::vector<float>& weights,
                                                          int64_t groups, int64_t out_per_group,
                                                          int64_t rows);

/// c[oc][p] = sum over k of weights[oc][k] * col[k][p] for the output channels of `group`
/// (c holds out_per_group planes of `outputs` floats), split over the threads by panels.
void multiply_exact_float(const ExactFloatWeights& weights, int64_t group, const float* col,
                          int64_t outputs, float* c, ThreadPool& threads);

/// Chooses the implicit GEMM for `g` (one group's `in_per_group` channels) where it fits: sets
/// weights.implicit and weights.plane_bytes. Returns the workspace the exact float path needs
/// then (the float planes and the GEMM's parts), or `column_bytes` (the column matrix) when it
/// does not fit.
int64_t plan_exact_implicit(ExactFloatWeights& weights, const nn::WindowGeometry& g,
                            int64_t in_per_group, int threads, int64_t column_bytes);

/// c as multiply_exact_float computes it, from `planes` (the group's input planes of x - x_zero
/// as floats) on the implicit GEMM; `workspace` is the GEMM's, after the planes.
void multiply_exact_implicit(const ExactFloatWeights& weights, int64_t group,
                             const nn::WindowGeometry& g, const float* planes, float* c,
                             std::byte* workspace, ThreadPool& threads);

/// Values an exact float GEMM wrote over int32 storage, made the int32 values they hold exactly
/// (the same bytes).
void floats_to_int32_in_place(int32_t* values, int64_t count);

}  // namespace onepool::cpu::quant
