// Direct depthwise convolution (group == C_in, each output channel reads one input channel):
// no im2col and no GEMM, one output row at a time so the inner loop is a contiguous axpy when
// the stride is 1. Parallel over (image, output channel) planes. On AVX-512 the Conv kernel sends
// the short-row cases to conv_depthwise_blocked.h instead (16 channels per vector).
#pragma once

#include <cstdint>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/depthwise_clamp_avx512.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

struct DepthwiseConv {
  const float* x = nullptr;     // [batch, channels, D, H, W]
  const float* w = nullptr;     // [channels * multiplier, 1, kD, kH, kW]
  const float* bias = nullptr;  // [channels * multiplier] or nullptr
  float* y = nullptr;           // [batch, channels * multiplier, OD, OH, OW]
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t multiplier = 1;
  // A 3x3 stride-2 window on planes the small-plane path does not take runs on AVX-512
  // (conv_depthwise_stride_two_avx512.h, the same bits).
  bool avx512 = false;
};

/// True when the small-plane path takes a plane (equal strides, its zero-padded copy and, at
/// stride 1, its flat sums fit the stack buffers): it sums the padding's zeros (w * 0) like the
/// blocked and masked paths (conv_depthwise_blocked.h, conv_depthwise_masked.h), which take only
/// such planes where they must give its bits.
bool fits_small_plane(const WindowGeometry& g);

/// One plane: y = conv(x, w's K taps) + bias, without the activation. Every path sums an output
/// the same way (bias, then the taps row by row), so a band of rows computed on its own (g
/// describing the band: its input rows, its output rows, the top pad it sees) gives the bits of
/// the whole plane's. `in_place`: never through a zero-padded copy of the plane (a band whose
/// rows are already in cache). `avx512`: a 3x3 stride-1 band read in place sweeps its interior
/// on AVX-512 (flat_sweep_3x3_avx512, the same bits). Does not allocate.
void depthwise_conv_plane(const WindowGeometry& g, const float* x, const float* w, float bias,
                          float* y, bool in_place = false, bool avx512 = false);

/// Output rows [first, end) of a 2-D window on their own: the input rows they read, clipped to
/// the plane ([first_input_row, end_input_row)), and the geometry of the band (those input rows
/// as its input, the top pad it sees) for depthwise_conv_plane.
struct DepthwiseBand {
  WindowGeometry geometry;
  int64_t first_input_row = 0;
  int64_t end_input_row = 0;
};
DepthwiseBand depthwise_band(const WindowGeometry& g, int64_t first, int64_t end);

/// Planes [begin, end) of `conv` (one output channel per input channel, a 3x3 stride-2 window:
/// depthwise_stride_two_3x3_fits) on AVX-512's stride-2 kernel, as runs of channels inside one
/// image; `zero_padding` as there.
void depthwise_stride_two_planes(const WindowGeometry& g, const DepthwiseConv& conv, int64_t begin,
                                 int64_t end, const ClampBounds& clamp, bool zero_padding);

/// True when depthwise_conv runs `g` on AVX-512's stride-2 kernel
/// (conv_depthwise_stride_two_avx512.h): a 3x3 stride-2 window, one output channel per input
/// channel, planes the small-plane path does not take (the padding skipped, as row_kxk skips it:
/// the same bits).
bool depthwise_stride_two_direct(const WindowGeometry& g, int64_t multiplier, bool avx512);

/// y = activation(depthwise_conv(x, w) + bias), the planes shared out over the threads (splitting
/// large maps' rows instead, as the convolutions around them do, measured slower on PaddleOCR
/// det: 1.9-2.2 -> 2.3-2.8 ms over its depthwise nodes at two threads). Does not allocate.
void depthwise_conv(const WindowGeometry& g, const DepthwiseConv& conv,
                    const Activation& activation, ThreadPool& threads);

}  // namespace onepool::cpu::nn
