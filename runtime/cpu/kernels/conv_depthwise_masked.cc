#include "runtime/cpu/kernels/conv_depthwise_masked.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "runtime/cpu/kernels/stride_two_rows.h"

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

// The fused activation applied to each vector before its store, where it is a clamp (Relu: 0 and
// +inf; Clip with numeric bounds): the comparisons of Activation::apply (sgemm_epilogue.h's), so
// the bits of the separate pass, which read and wrote every output plane once more (MobileNetV2's
// masked nodes ran 0.87-0.92x without it, the whole model 0.98x at one thread, 0.97x at two).
struct OutputClamp {
  bool on = false;
  __m512 low, high;
};

bool clamp_fits(const Activation& activation) {
  return activation.kind == ActivationKind::kNone || activation.kind == ActivationKind::kRelu ||
         (activation.kind == ActivationKind::kClip && gemm_epilogue_supports(activation));
}

// The clamp's bounds, made once per node (vectors only inside the AVX-512 functions).
struct ClampBounds {
  bool on = false;
  float low = 0.0f;
  float high = 0.0f;
};

ClampBounds clamp_bounds(const Activation& activation) {
  const bool relu = activation.kind == ActivationKind::kRelu;
  return ClampBounds{relu || activation.kind == ActivationKind::kClip,
                     relu ? 0.0f : activation.alpha,
                     relu ? std::numeric_limits<float>::infinity() : activation.beta};
}

__attribute__((target("avx512f"), always_inline)) inline OutputClamp output_clamp(
    const ClampBounds& bounds) {
  return OutputClamp{bounds.on, _mm512_set1_ps(bounds.low), _mm512_set1_ps(bounds.high)};
}

__attribute__((target("avx512f"), always_inline)) inline __m512 clamped(const OutputClamp& clamp,
                                                                        __m512 v) {
  if (!clamp.on) return v;
  const __m512 raised = _mm512_mask_max_ps(v, kAllLanes, clamp.low, v);
  return _mm512_mask_min_ps(v, kAllLanes, clamp.high, raised);
}

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

// kCount chains of the bias then the taps row by row: row kh of chain j's taps from
// row_taps(j, kh).
template <int kCount, class RowTaps>
__attribute__((target("avx512f"), always_inline)) inline void sum_rows(const RowTaps& row_taps,
                                                                       const __m512 taps[kTaps],
                                                                       __m512 bias,
                                                                       __m512 sums[kCount]) {
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) sums[j] = bias;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
#pragma GCC unroll 4
    for (int j = 0; j < kCount; ++j) {
      const StrideTwoTaps in = row_taps(j, kh);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3], in.left, sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 1], in.middle, sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 2], in.right, sums[j]);
    }
  }
}

// `count` row vectors (stride_two_rows.h), each the bias then the taps row by row.
template <int kCount>
__attribute__((target("avx512f"), always_inline)) inline void multiply_row_vectors(
    const StrideTwoVector* vectors, const __m512 taps[kTaps], __m512 bias,
    const OutputClamp& clamp) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 sums[kCount];
  sum_rows<kCount>(
      [&](int j, int kh) __attribute__((target("avx512f"), always_inline)) {
        const float* row = vectors[j].rows[kh];
        return row != nullptr ? stride_two_taps(row, vectors[j].spans, zero)
                              : StrideTwoTaps{zero, zero, zero};
      },
      taps, bias, sums);
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) {
    store_stride_two(vectors[j].y, vectors[j].spans[kStrideTwoStoreSpan], clamped(clamp, sums[j]));
  }
}

// kRows interior rows (stride_two_interior_rows), a vector of each: kRows chains of the bias
// then the taps row by row, loads plain.
template <int kRows>
__attribute__((target("avx512f"), always_inline)) inline void multiply_interior_vectors(
    const StrideTwoInterior& at, const __m512 taps[kTaps], __m512 bias, const OutputClamp& clamp) {
  __m512 sums[kRows];
  sum_rows<kRows>(
      [&](int j, int kh) __attribute__((target("avx512f"), always_inline)) {
        return stride_two_taps_or_zero(at.x + (2 * j + kh) * at.width, at.spans);
      },
      taps, bias, sums);
#pragma GCC unroll 4
  for (int j = 0; j < kRows; ++j) {
    store_stride_two(at.y + j * at.out_w, at.spans[kStrideTwoStoreSpan], clamped(clamp, sums[j]));
  }
}

__attribute__((target("avx512f"))) void masked_plane_stride_two(
    const WindowGeometry& g, const DepthwiseMasks& masks, const float* x, const float* w,
    float bias, const ClampBounds& bounds, float* y) {
  const OutputClamp clamp = output_clamp(bounds);
  __m512 taps[kTaps];
  for (int t = 0; t < kTaps; ++t) taps[t] = _mm512_set1_ps(w[t]);
  const __m512 bias_lanes = _mm512_set1_ps(bias);
  const StrideTwoPlane plane{x,
                             y,
                             g.input[1],
                             g.input[2],
                             g.output[1],
                             g.output[2],
                             g.pad_begin[1],
                             g.pad_begin[2],
                             masks.spans.data()};
  sweep_stride_two_plane<kVectorsAtOnce>(
      plane,
      [&](const StrideTwoVector* vectors) __attribute__((target("avx512f"))) {
        multiply_row_vectors<kVectorsAtOnce>(vectors, taps, bias_lanes, clamp);
      },
      [&](const StrideTwoVector* vector) __attribute__((target("avx512f"))) {
        multiply_row_vectors<1>(vector, taps, bias_lanes, clamp);
      },
      [&](const StrideTwoInterior& at) __attribute__((target("avx512f"))) {
        multiply_interior_vectors<kVectorsAtOnce>(at, taps, bias_lanes, clamp);
      },
      [&](const StrideTwoInterior& at) __attribute__((target("avx512f"))) {
        multiply_interior_vectors<1>(at, taps, bias_lanes, clamp);
      });
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
  if (g.stride[1] == 2) {
    DepthwiseMasks masks;
    masks.spans = stride_two_spans(g.input[2], g.output[2], g.pad_begin[2]);
    return masks;
  }
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
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t c = plane % conv.channels;
      float* y = conv.y + plane * g.output_size();
      const float* x = conv.x + plane * g.input_size();
      const float bias = conv.bias != nullptr ? conv.bias[c] : 0.0f;
      if (g.stride[1] == 2) {
        masked_plane_stride_two(g, masks, x, conv.w + c * kTaps, bias, bounds, y);
      } else {
        masked_plane(g, masks, x, conv.w + c * kTaps, bias, bounds, y);
      }
      if (!in_registers) apply_activation(activation, y, g.output_size());
    }
  });
}

}  // namespace onepool::cpu::nn
