#include "runtime/cpu/kernels/conv_depthwise_masked.h"

#include <immintrin.h>

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
// The small-plane path's bound on a zero-padded plane (conv_depthwise.cc, kSmallPlaneFloats).
constexpr int64_t kMostPaddedFloats = 4096;

// `count` vectors from position 0 of x / y on (x, y and masks advanced to the first), each
// the bias then the taps row by row. `store_mask`: the lanes of a last, partial vector.
template <int kCount>
__attribute__((target("avx512f"), always_inline)) inline void multiply_vectors(
    const float* x, int64_t width, const __m512 taps[kTaps], __m512 bias, const uint16_t* masks,
    float* y, __mmask16 store_mask) {
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
        const __m512 input = _mm512_maskz_loadu_ps(masks[j * kTaps + t], x + j * kLanes + offset);
        sums[j] = _mm512_fmadd_ps(taps[t], input, sums[j]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) _mm512_mask_storeu_ps(y + j * kLanes, store_mask, sums[j]);
}

__attribute__((target("avx512f"))) void masked_plane(const WindowGeometry& g,
                                                     const DepthwiseMasks& masks, const float* x,
                                                     const float* w, float bias, float* y) {
  const int64_t positions = g.input_size();
  const int64_t width = g.input[2];
  const int64_t full = positions / kLanes;
  const int64_t vectors = (positions + kLanes - 1) / kLanes;
  __m512 taps[kTaps];
  for (int t = 0; t < kTaps; ++t) taps[t] = _mm512_set1_ps(w[t]);
  const __m512 bias_lanes = _mm512_set1_ps(bias);
  const uint16_t* m = masks.taps.data();
  int64_t v = 0;
  for (; v + kVectorsAtOnce <= full; v += kVectorsAtOnce) {
    multiply_vectors<kVectorsAtOnce>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps,
                                     y + v * kLanes, 0xFFFF);
  }
  for (; v < vectors; ++v) {
    multiply_vectors<1>(x + v * kLanes, width, taps, bias_lanes, m + v * kTaps, y + v * kLanes,
                        m[v * kTaps + kCenterTap]);
  }
}

// Stride 2: masks of the loads of a vector of an output row (DepthwiseMasks::spans).
constexpr int kSpanMasks = 5;
constexpr int kStoreSpan = 4;
constexpr int64_t kOutputsPerVector = 16;

// 16 outputs of one output row: the three input rows they read, from the vector's first input
// column on (nullptr: a row of padding), its span masks and where its outputs go.
struct RowVector {
  const float* rows[3];
  const uint16_t* spans;
  float* y;
};

// `count` row vectors, each the bias then the taps row by row. Of the 33 columns an input row
// offers 16 outputs at stride 2 (b + 2 l + kw, kw = 0, 1, 2), the loads from b and b + 16 give the
// even (kw = 0) and odd (kw = 1) ones, those from b + 2 and b + 18 the even ones from b + 2 on
// (kw = 2).
template <int kCount>
__attribute__((target("avx512f"), always_inline)) inline void multiply_row_vectors(
    const RowVector* vectors, const __m512 taps[kTaps], __m512 bias) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  __m512 sums[kCount];
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) sums[j] = bias;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
#pragma GCC unroll 4
    for (int j = 0; j < kCount; ++j) {
      const float* row = vectors[j].rows[kh];
      __m512 left = _mm512_setzero_ps(), middle = left, right = left;
      if (row != nullptr) {
        const uint16_t* spans = vectors[j].spans;
        const __m512 low = _mm512_maskz_loadu_ps(spans[0], row);
        const __m512 high = _mm512_maskz_loadu_ps(spans[1], row + 16);
        const __m512 low_shifted = _mm512_maskz_loadu_ps(spans[2], row + 2);
        const __m512 high_shifted = _mm512_maskz_loadu_ps(spans[3], row + 18);
        left = _mm512_permutex2var_ps(low, even, high);
        middle = _mm512_permutex2var_ps(low, odd, high);
        right = _mm512_permutex2var_ps(low_shifted, even, high_shifted);
      }
      sums[j] = _mm512_fmadd_ps(taps[kh * 3], left, sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 1], middle, sums[j]);
      sums[j] = _mm512_fmadd_ps(taps[kh * 3 + 2], right, sums[j]);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < kCount; ++j) {
    _mm512_mask_storeu_ps(vectors[j].y, vectors[j].spans[kStoreSpan], sums[j]);
  }
}

__attribute__((target("avx512f"))) void masked_plane_stride_two(const WindowGeometry& g,
                                                                const DepthwiseMasks& masks,
                                                                const float* x, const float* w,
                                                                float bias, float* y) {
  const int64_t height = g.input[1], width = g.input[2];
  const int64_t out_h = g.output[1], out_w = g.output[2];
  const int64_t per_row = (out_w + kOutputsPerVector - 1) / kOutputsPerVector;
  __m512 taps[kTaps];
  for (int t = 0; t < kTaps; ++t) taps[t] = _mm512_set1_ps(w[t]);
  const __m512 bias_lanes = _mm512_set1_ps(bias);
  RowVector batch[kVectorsAtOnce];
  int count = 0;
  for (int64_t oh = 0; oh < out_h; ++oh) {
    for (int64_t i = 0; i < per_row; ++i) {
      RowVector& vector = batch[count++];
      const int64_t first_column = 2 * kOutputsPerVector * i - g.pad_begin[2];
      for (int kh = 0; kh < 3; ++kh) {
        const int64_t r = 2 * oh + kh - g.pad_begin[1];
        vector.rows[kh] = r >= 0 && r < height ? x + r * width + first_column : nullptr;
      }
      vector.spans = masks.spans.data() + i * kSpanMasks;
      vector.y = y + oh * out_w + i * kOutputsPerVector;
      if (count == kVectorsAtOnce) {
        multiply_row_vectors<kVectorsAtOnce>(batch, taps, bias_lanes);
        count = 0;
      }
    }
  }
  for (int j = 0; j < count; ++j) multiply_row_vectors<1>(batch + j, taps, bias_lanes);
}

}  // namespace

bool depthwise_masked_fits(const WindowGeometry& g, int64_t multiplier, SgemmIsa isa) {
  const bool window = g.spatial_rank == 2 && g.input[0] == 1 && g.kernel[0] == 1 &&
                      g.kernel[1] == 3 && g.kernel[2] == 3 && g.dilation[1] == 1 &&
                      g.dilation[2] == 1 && g.stride[1] == g.stride[2];
  if (isa != SgemmIsa::kAvx512 || multiplier != 1 || !window) return false;
  // The small-plane path's zero-padded plane (and, at stride 1, its flat sums).
  const int64_t stride = g.stride[1];
  const int64_t padded_h = (g.output[1] - 1) * stride + 3;
  const int64_t padded_w = (g.output[2] - 1) * stride + 3;
  if (padded_h * padded_w > kMostPaddedFloats || g.output[1] * padded_w > kMostPaddedFloats) {
    return false;
  }
  if (stride == 1) {
    return g.pad_begin[1] == 1 && g.pad_begin[2] == 1 && g.output[1] == g.input[1] &&
           g.output[2] == g.input[2] && g.input[2] >= kNarrowestRow;
  }
  return stride == 2 && g.pad_begin[1] >= 0 && g.pad_begin[1] <= 1 && g.pad_begin[2] >= 0 &&
         g.pad_begin[2] <= 1 && g.output[2] >= kNarrowestRow;
}

namespace {

// Lanes j of a 16-float load from column `first` on whose column lies in [0, end).
uint16_t columns_inside(int64_t first, int64_t end) {
  uint16_t mask = 0;
  for (int64_t j = 0; j < kLanes; ++j) {
    if (first + j >= 0 && first + j < end) mask = static_cast<uint16_t>(mask | (1u << j));
  }
  return mask;
}

DepthwiseMasks stride_two_masks(const WindowGeometry& g) {
  const int64_t per_row = (g.output[2] + kOutputsPerVector - 1) / kOutputsPerVector;
  DepthwiseMasks masks;
  masks.spans.reserve(static_cast<size_t>(per_row * kSpanMasks));
  for (int64_t i = 0; i < per_row; ++i) {
    const int64_t first = 2 * kOutputsPerVector * i - g.pad_begin[2];
    for (const int64_t offset : {0, 16, 2, 18}) {
      masks.spans.push_back(columns_inside(first + offset, g.input[2]));
    }
    masks.spans.push_back(columns_inside(kOutputsPerVector * i, g.output[2]));
  }
  return masks;
}

}  // namespace

DepthwiseMasks depthwise_masks(const WindowGeometry& g) {
  if (g.stride[1] == 2) return stride_two_masks(g);
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
  threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t c = plane % conv.channels;
      float* y = conv.y + plane * g.output_size();
      const float* x = conv.x + plane * g.input_size();
      const float bias = conv.bias != nullptr ? conv.bias[c] : 0.0f;
      if (g.stride[1] == 2) {
        masked_plane_stride_two(g, masks, x, conv.w + c * kTaps, bias, y);
      } else {
        masked_plane(g, masks, x, conv.w + c * kTaps, bias, y);
      }
      apply_activation(activation, y, g.output_size());
    }
  });
}

}  // namespace onepool::cpu::nn
