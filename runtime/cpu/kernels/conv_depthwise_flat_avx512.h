// The interior of a 3x3, stride-1 depthwise band read in place (conv_depthwise.cc's
// flat_plane_kxk, which PointwiseDepthwiseConv's bands take) on AVX-512: 16 outputs a vector, each
// input row of a vector loaded once and its left and right taps shifted in from the neighbouring
// vectors (valignd), as conv_depthwise_masked.cc's inner vectors do. The auto-vectorized sweep
// loaded each of the nine taps on its own, most of the loads across two cache lines; MobileNetV2's
// fused 112x112 block (features.1) ran 0.88-0.89x, its 56x56 one (features.3) 0.94-0.97x, at one
// and two threads.
#pragma once

#include <cstdint>

namespace onepool::cpu::nn {

/// The interior sweep of a 3x3, stride-1 band read in place (conv_depthwise.cc's flat_plane_kxk)
/// on AVX-512: y[f] for f in [begin, end) is the bias, then w[kh * 3 + kw] * x[f + (kh - pad_top)
/// * width + kw - 1] for kh, kw in order (no masks: that sweep overwrites the outputs at rows'
/// ends afterwards); every read lies in [x, x + extent). Each row of a vector loaded once and its
/// left and right taps shifted in from the neighbouring vectors where those lie inside the
/// extent, one output at a time elsewhere: the same chains, the same bits.
void flat_sweep_3x3_avx512(const float* x, int64_t extent, int64_t width, int64_t pad_top,
                           const float* w, float bias, float* y, int64_t begin, int64_t end);

}  // namespace onepool::cpu::nn
