// A 3x3, stride-2 depthwise plane, or a band of its rows, on AVX-512 with the padding skipped
// rather than summed as zeros: the planes (and PointwiseDepthwiseConv's bands) that the
// small-plane path does not take, which went one output at a time through row_kxk<3, 2>'s
// auto-vectorized stride-2 loads (MobileNetV2's fused 112x112 -> 56x56 block spent a third of its
// time there, 96 channels at about 25 GFLOP/s). 16 outputs of a row a vector, each input row's
// taps split out of two pairs of loads by permutes (stride_two_rows.h), two output rows at a time
// where all their input rows exist (the row they share loaded once).
//
// Numerics: each output is the bias, then for each kernel row inside the input (kh order) its
// taps inside the row in kw order, as row_kxk and generic_row (conv_depthwise.cc) sum it: a tap
// in the padding is skipped by a masked multiply-add, never added as w * 0. The same bits.
#pragma once

#include <cstdint>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/depthwise_clamp_avx512.h"

namespace onepool::cpu::nn {

/// True when depthwise_stride_two_3x3_avx512 takes `g` (a plane or a band of one): 2-D, a 3x3
/// window, stride 2, no dilation, at most one column of padding before, output rows of at most
/// 2048 (their masks sit on the stack).
bool depthwise_stride_two_3x3_fits(const WindowGeometry& g);

/// Channels of a depthwise convolution: channel m reads x + m * x_stride with taps w + 9 m and
/// bias bias[m] (or none), and writes y + m * y_stride.
struct DepthwiseChannels {
  const float* x;
  int64_t x_stride;
  const float* w;
  const float* bias;  // or nullptr
  float* y;
  int64_t y_stride;
  int64_t count;
};

/// y = clamp(the bias, then the taps inside the input) of each channel's plane (or band) of
/// `channels`; `clamp` off for no activation (clamp_fits). With `zero_padding`, every output sums
/// all nine taps, those in the padding times zero (the small-plane path's bits, as the masked
/// path, conv_depthwise_masked.h, gives them). The rows' masks made once for all the channels.
/// Does not allocate.
void depthwise_stride_two_3x3_avx512(const WindowGeometry& g, const DepthwiseChannels& channels,
                                     const ClampBounds& clamp, bool zero_padding);

}  // namespace onepool::cpu::nn
