// Depthwise K x K convolutions a vector of channels at a time: 16 on AVX-512, 8 on AVX2 (one
// algorithm, conv_depthwise_blocked_body.inc, compiled for each). Each band of output rows first
// transposes the input rows it reads, from a vector's channel planes into one zero-padded tile
// that holds a position's channels side by side ([row][column][lanes]), so that every tap of every
// output is one vector multiply-add whatever the plane's width or the stride; the band's outputs
// are then transposed back into the planes. For the small maps where the per-plane paths
// (conv_depthwise.cc) spend their time on edges, short rows and strided reads (MobileNet's 7x7
// and 14x14 maps, stride 2 anywhere), as ONNX Runtime's NCHWc kernels avoid them.
//
// Numerics: each output is the bias, then the K x K taps row by row with the padding's zeros
// included (w * 0), as the small-plane path sums it, so both give the same bits, at every band
// height and thread count.
#pragma once

#include <cstdint>

#include "runtime/cpu/kernels/conv_depthwise.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu::nn {

/// True when depthwise_conv_blocked runs this convolution: a 2-D square 3x3 or 5x5 window,
/// equal strides of 1 or 2, no dilation, one output channel per input channel, and output rows
/// narrow enough that the per-plane paths lose to it (up to 32 wide at stride 1, 48 at 2), on
/// `isa` (AVX-512 or AVX2; never the portable set).
bool depthwise_blocked_fits(const WindowGeometry& g, int64_t multiplier, SgemmIsa isa);

/// y = activation(depthwise_conv(x, w) + bias), as depthwise_conv. Does not allocate (its tiles
/// live on the stack). `isa` as given to depthwise_blocked_fits.
void depthwise_conv_blocked(const WindowGeometry& g, const DepthwiseConv& conv,
                            const Activation& activation, ThreadPool& threads, SgemmIsa isa);

}  // namespace onepool::cpu::nn
