// 3x3 depthwise convolutions on AVX-512 straight from the planes, lanes whose input lies in the
// padding loading zero through masks (and the memory they would read untouched). Stride 1 with
// "same" padding (one row and one column of zeros on each side): a plane at a time as one flat
// run of 16-position vectors, each tap of a vector one masked load at a fixed offset from it (a
// plain load where all 16 lie inside the plane, the lanes beside a row's ends zeroed after it).
// Stride 2: conv_depthwise_stride_two_avx512.h with the padding's zeros summed (16 outputs of a
// row at a time, each input row's columns split into even and odd ones by permutes). Rows of any
// width then run whole vectors with no edge cases, no zero-padded copy of the plane and no
// transposes (the blocked path, conv_depthwise_blocked.h, spends two thirds of its time
// transposing; the per-plane flat path runs its edges one output at a time). The masks depend only
// on the geometry: made once at prepare time.
//
// Numerics: each output is the bias, then the 9 taps row by row with the padding's zeros included
// (w * 0), as the small-plane path (conv_depthwise.cc) and the blocked path sum it: the same bits,
// at every thread count. Vectors are computed four at a time, each its own chain.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/conv_depthwise.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu::nn {

/// For each 16-position vector of a plane, one 16-bit mask per tap (kh * 3 + kw): lane l set when
/// position 16 v + l lies in the plane and its tap's input does too.
struct DepthwiseMasks {
  std::vector<uint16_t> taps;  // stride 1: 9 per vector (none at stride 2)
};

/// True when depthwise_conv_masked runs this convolution: AVX-512, a 2-D 3x3 window, no
/// dilation, one output channel per input channel, planes whose zero-padded copy the small-plane
/// path takes (so both give the same bits), and either stride 1 with one row and column of
/// padding on each side, the output as large as the input, rows at least 14 wide (on narrower
/// ones the blocked path's full vectors win: 7x7 planes leave most lanes of a flat vector idle at
/// its ends); or stride 2 with at most one row and column of padding before, output rows at least
/// 14 wide.
bool depthwise_masked_fits(const WindowGeometry& g, int64_t multiplier, SgemmIsa isa);

/// The masks of `g`'s planes (depthwise_masked_fits(g, ...) holds).
DepthwiseMasks depthwise_masks(const WindowGeometry& g);

/// y = activation(depthwise_conv(x, w) + bias), the planes shared out over the threads. Does not
/// allocate.
void depthwise_conv_masked(const WindowGeometry& g, const DepthwiseMasks& masks,
                           const DepthwiseConv& conv, const Activation& activation,
                           ThreadPool& threads);

}  // namespace onepool::cpu::nn
