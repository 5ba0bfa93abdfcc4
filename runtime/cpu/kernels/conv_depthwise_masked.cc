#include "runtime/cpu/kernels/conv_depthwise_masked.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "runtime/cpu/kernels/depthwise_clamp_avx512.h"

namespace onepool::cpu::nn {
namespace {

constexpr int kTaps = 9;
constexpr int64_t kLanes = 16;
constexpr int kCenterTap = 4;  // its mask is the vector's positions inside the plane
// Vectors computed side by side: independent chains of 9 multiply-adds (one chain at a time waits
// on each multiply-add's latency).
constexpr int kVectorsAtOnce = 4;
// Rows narrower than this stay on the blocked path (a 7x7 plane's 49 positions in 4 flat vectors
// measured slower than its 16-channel blocks: 34 vs 29 µs over 960 channels on one core).
constexpr int64_t kNarrowestRow = 14;

// `count` vectors from position 0 of x / y on (x, y and masks advanced to the first), each
// the bias then the taps row by row. Each tap a masked load, or with kInner (vectors whose taps all
// lie inside the plane's memory: not in its first nor last row) a plain load whose lanes beside a
// row's ends are zeroed after it (the middle row's masks: every row's are the same there).
// `store_mask`: the lanes of a last, partial vector.
template <int kCount, bool kInner = false>
__attribute__((target("avx512f"), always_inline)) inline void multiply_vectors(
    const float* x, int64_t width, const __m512 taps[kTaps], __m512 bias, const uint16_t* masks,
    float* y, __mmask16 store_mask, const OutputClamp& clamp) {
  __m512 sums[kCount];
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) sums[j] = bias;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
#pragma GCC unroll 3
    for (int kw = 0; kw < 3; ++kw) {
      const int t = kh * 3 + kw;
      const int64_t offset = (kh - 1) * width + (kw - 1);
#pragma GCC unroll 4
      for (int j = 0; j < kCount; ++j) {
        const float* at = x + j * kLanes + offset;
        __m512 input;
        if constexpr (kInner) {
          input = _mm512_loadu_ps(at);
          if (kw != 1) input = _mm512_maskz_mov_ps(masks[j * kTaps + 3 + kw], input);
        } else {
          input = _mm512_maskz_loadu_ps(masks[j * kTaps + t], at);
        }
        sums[j] = _mm512_fmadd_ps(taps[t], input, sums[j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) {
    if (store_mask == 0xFFFF) {
      _mm512_storeu_ps(y + j * kLanes, clamped(clamp, sums[j]));
    } else {
      _mm512_mask_storeu_ps(y + j * kLanes, store_mask, clamped(clamp, sums[j]));
    }
  }
}

// kCount inner vectors whose neighbours in each row (the vector before the first, the one after
// the last) also lie inside the plane's memory: each row's vectors loaded once, a tap's left and
// right neighbours shifted in from the next vector over (valignd), the lanes beside a row's ends
// zeroed by the shift's mask (the middle row's masks, as for kInner). A row of the batch takes
// kCount + 2 loads, where kInner's took three per vector, most of them across two cache lines.
// Every tap reads the same input as kInner's: the same chains, the same bits.
template <int kCount>
__attribute__((target("avx512f"), always_inline)) inline void multiply_vectors_sliding(
    const float* x, int64_t width, const __m512 taps[kTaps], __m512 bias, const uint16_t* masks,
    float* y, const OutputClamp& clamp) {
  __m512 sums[kCount];
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) sums[j] = bias;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
    const float* row = x + (kh - 1) * width;
    __m512i lanes[kCount + 2];  // vectors -1 .. kCount of this row
#pragma GCC unroll 6
    for (int i = 0; i < kCount + 2; ++i) {
      lanes[i] = _mm512_castps_si512(_mm512_loadu_ps(row + (i - 1) * kLanes));
    }
#pragma GCC unroll 4
    for (int j = 0; j < kCount; ++j) {
      const __m512 left = _mm512_castsi512_ps(
          _mm512_maskz_alignr_epi32(masks[j * kTaps + 3], lanes[j + 1], lanes[j], 15));
      const __m512 right = _mm512_castsi512_ps(
          _mm512_maskz_alignr_epi32(masks[j * kTaps + 5], lanes[j + 2], lanes[j + 1], 1));
      sums[j] = _mm512_fmadd_ps(taps[kh * 3], left, sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 1], _mm512_castsi512_ps(lanes[j + 1]), sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 2], right, sums[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) _mm512_storeu_ps(y + j * kLanes, clamped(clamp, sums[j]));
}

__attribute__((target("avx512f"))) void masked_plane(const WindowGeometry& g,
                                                     const DepthwiseMasks& masks, const float* x,
                                                     const float* w, float bias,
                                                     const ClampBounds& bounds, float* y) {
  const OutputClamp clamp = output_clamp(bounds);
  const int64_t positions = g.input_size();
  const int64_t width = g.input[2];
  const int64_t full = positions / kLanes;
  const int64_t vectors = (positions + kLanes - 1) / kLanes;
  __m512 taps[kTaps];
  for (int t = 0; t < kTaps; ++t) taps[t] = _mm512_set1_ps(w[t]);
  const __m512 bias_lanes = _mm512_set1_ps(bias);
  const uint16_t* m = masks.taps.data();
  // Vectors [inner_first, inner_end): each tap's 16 floats inside the plane (not in its first or
  // last row); plain loads there took MobileNetV2's stride-1 depthwise nodes 0.78-0.83x on a Zen 5
  // core.
  const int64_t inner_first = std::min(full, (width + 1 + kLanes - 1) / kLanes);
  const int64_t last_inner_start = positions - width - 1 - kLanes;  // an inner vector starts by
  const int64_t inner_end = last_inner_start < 0
                                ? inner_first
                                : std::clamp(last_inner_start / kLanes + 1, inner_first, full);
  // Inner vectors [slide_first, slide_end) whose row neighbours lie inside the plane too: vector
  // v's loads run from 16 (v - 1) - width to 16 (v + 1) + width + 16 (multiply_vectors_sliding).
  // MobileNetV2's eight stride-1 masked nodes ran 0.86x at one thread (the model 0.98x); at two
  // threads, where half of each plane comes from the other core, no change.
  const int64_t slide_first =
      std::clamp<int64_t>(1 + (width + kLanes - 1) / kLanes, inner_first, inner_end);
  const int64_t slide_end =
      std::clamp<int64_t>((positions - width) / kLanes - 1, slide_first, inner_end);
  int64_t v = 0;
  for (; v < inner_first; ++v) {
    multiply_vectors<1>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps, y + v * kLanes,
                        0xFFFF, clamp);
  }
  for (; v < slide_first; ++v) {
    multiply_vectors<1, true>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                              y + v * kLanes, 0xFFFF, clamp);
  }
  for (; v + kVectorsAtOnce <= slide_end; v += kVectorsAtOnce) {
    multiply_vectors_sliding<kVectorsAtOnce>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                                             y + v * kLanes, clamp);
  }
  for (; v < slide_end; ++v) {
    multiply_vectors_sliding<1>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                                y + v * kLanes, clamp);
  }
  for (; v + kVectorsAtOnce <= inner_end; v += kVectorsAtOnce) {
    multiply_vectors<kVectorsAtOnce, true>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                                           y + v * kLanes, 0xFFFF, clamp);
  }
  for (; v < inner_end; ++v) {
    multiply_vectors<1, true>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                              y + v * kLanes, 0xFFFF, clamp);
  }
  for (; v + kVectorsAtOnce <= full; v += kVectorsAtOnce) {
    multiply_vectors<kVectorsAtOnce>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                                     y + v * kLanes, 0xFFFF, clamp);
  }
  for (; v < vectors; ++v) {
    multiply_vectors<1>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps, y + v * kLanes,
                        m[v * kTaps + kCenterTap], clamp);
  }
}

}  // namespace

bool depthwise_masked_fits(const WindowGeometry& g, int64_t multiplier, SgemmIsa isa) {
  const bool window = g.spatial_rank == 2 && g.input[0] == 1 && g.kernel[0] == 1 &&
                      g.kernel[1] == 3 && g.kernel[2] == 3 && g.dilation[1] == 1 &&
                      g.dilation[2] == 1 && g.stride[1] == g.stride[2];
  if (isa != SgemmIsa::kAvx512 || multiplier != 1 || !window) return false;
  // Only planes the small-plane path takes: its bits, padding zeros included.
  if (!fits_small_plane(g)) return false;
  const int64_t stride = g.stride[1];
  if (stride == 1) {
    return g.pad_begin[1] == 1 && g.pad_begin[2] == 1 && g.output[1] == g.input[1] &&
           g.output[2] == g.input[2] && g.input[2] >= kNarrowestRow;
  }
  return stride == 2 && g.pad_begin[1] >= 0 && g.pad_begin[1] <= 1 && g.pad_begin[2] >= 0 &&
         g.pad_begin[2] <= 1 && g.output[2] >= kNarrowestRow;
}

DepthwiseMasks depthwise_masks(const WindowGeometry& g) {
  if (g.stride[1] == 2) return DepthwiseMasks{};  // conv_depthwise_stride_two_avx512 makes its own
  const int64_t height = g.input[1], width = g.input[2];
  const int64_t positions = height * width;
  const int64_t vectors = (positions + kLanes - 1) / kLanes;
  DepthwiseMasks masks;
  masks.taps.assign(static_cast<size_t>(vectors * kTaps), 0);
  for (int64_t f = 0; f < positions; ++f) {
    const int64_t row = f / width, column = f % width;
    uint16_t* vector_masks = masks.taps.data() + f / kLanes * kTaps;
    const auto lane = static_cast<uint16_t>(1u << (f % kLanes));
    for (int kh = 0; kh < 3; ++kh) {
      for (int kw = 0; kw < 3; ++kw) {
        const int64_t r = row + kh - 1, c = column + kw - 1;
        if (r >= 0 && r < height && c >= 0 && c < width) vector_masks[kh * 3 + kw] |= lane;
      }
    }
  }
  return masks;
}

void depthwise_conv_masked(const WindowGeometry& g, const DepthwiseMasks& masks,
                           const DepthwiseConv& conv, const Activation& activation,
                           ThreadPool& threads) {
  const int64_t planes = conv.batch * conv.channels;
  const bool in_registers = clamp_fits(activation);
  const ClampBounds bounds = in_registers ? clamp_bounds(activation) : ClampBounds{};
  threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    if (g.stride[1] == 2) depthwise_stride_two_planes(g, conv, begin, end, bounds, true);
    for (int64_t plane = begin; plane < end; ++plane) {
      float* y = conv.y + plane * g.output_size();
      if (g.stride[1] != 2) {
        const int64_t c = plane % conv.channels;
        const float bias = conv.bias != nullptr ? conv.bias[c] : 0.0f;
        masked_plane(g, masks, conv.x + plane * g.input_size(), conv.w + c * kTaps, bias, bounds,
                     y);
      }
      if (!in_registers) apply_activation(activation, y, g.output_size());
    }
  });
}

}  // namespace onepool::cpu::nn
