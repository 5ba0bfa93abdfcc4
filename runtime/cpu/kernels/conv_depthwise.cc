#include "runtime/cpu/kernels/conv_depthwise.h"

#include <algorithm>
#include <cmath>

#include "runtime/cpu/kernels/conv_depthwise_flat_avx512.h"
#include "runtime/cpu/kernels/conv_depthwise_stride_two_avx512.h"
#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::nn {
namespace {

// Accumulates one kernel row (all kw taps) of input row `x_row` into output row `y_row`.
void accumulate_row(const WindowGeometry& g, const float* x_row, const float* w_row, float* y_row) {
  const int64_t stride = g.stride[2];
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    const float weight = w_row[kw];
    const int64_t offset = kw * g.dilation[2] - g.pad_begin[2];
    const ValidRange range = valid_output_range(offset, stride, g.input[2], g.output[2]);
    if (stride == 1) {
      const float* src = x_row + offset;
      for (int64_t ow = range.first; ow < range.last; ++ow) {
        y_row[ow] = std::fma(weight, src[ow], y_row[ow]);
      }
      continue;
    }
    for (int64_t ow = range.first; ow < range.last; ++ow) {
      y_row[ow] = std::fma(weight, x_row[ow * stride + offset], y_row[ow]);
    }
  }
}

// One output position of a K x K window with bounds checks on W (the edges of a row).
template <int K>
float edge_kxk(const WindowGeometry& g, const float* const rows[K], const float* w, float bias,
               int64_t ow) {
  float sum = bias;
  for (int kh = 0; kh < K; ++kh) {
    for (int kw = 0; kw < K; ++kw) {
      const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw;
      if (iw >= 0 && iw < g.input[2]) sum = std::fma(w[kh * K + kw], rows[kh][iw], sum);
    }
  }
  return sum;
}

// Output columns [first, last) whose K taps all lie inside the input row: the taps stay in
// registers and the loop over `ow` vectorizes (K and S are compile-time constants). The sum
// order (bias, then taps row by row) is the same as the generic path's.
template <int K, int S>
void interior_kxk(const float* const rows[K], const float* w, float bias, int64_t pad,
                  int64_t first, int64_t last, float* __restrict y_row) {
  float taps[K * K];
  for (int i = 0; i < K * K; ++i) taps[i] = w[i];
  const float* r[K];
  for (int kh = 0; kh < K; ++kh) r[kh] = rows[kh] - pad;
  for (int64_t ow = first; ow < last; ++ow) {
    float sum = bias;
    for (int kh = 0; kh < K; ++kh) {
      for (int kw = 0; kw < K; ++kw) sum = std::fma(taps[kh * K + kw], r[kh][ow * S + kw], sum);
    }
    y_row[ow] = sum;
  }
}

// 2-D K x K with stride S along W (any stride along H) and dilation 1 when all K input rows
// exist (MobileNet's 3x3, BlazeFace's 5x5, PaddleOCR's (2, 1) strides): one pass over the output
// row instead of K * K. Returns false otherwise.
template <int K, int S>
ONEPOOL_ISA_CLONES bool row_kxk(const WindowGeometry& g, const float* x, const float* w, float bias,
                                int64_t oh, float* y_row) {
  const int64_t ih = oh * g.stride[1] - g.pad_begin[1];
  if (ih < 0 || ih + K - 1 >= g.input[1]) return false;
  const float* rows[K];
  for (int kh = 0; kh < K; ++kh) rows[kh] = x + (ih + kh) * g.input[2];
  const int64_t pad = g.pad_begin[2];
  const int64_t first = valid_output_range(-pad, S, g.input[2], g.output[2]).first;
  const int64_t last =
      std::max(first, valid_output_range(K - 1 - pad, S, g.input[2], g.output[2]).last);
  for (int64_t ow = 0; ow < first; ++ow) y_row[ow] = edge_kxk<K>(g, rows, w, bias, ow);
  interior_kxk<K, S>(rows, w, bias, pad, first, last, y_row);
  for (int64_t ow = last; ow < g.output[2]; ++ow) y_row[ow] = edge_kxk<K>(g, rows, w, bias, ow);
  return true;
}

// One output row the generic way: bias, then every kernel row that lands inside the input,
// tap by tap (the same per-output sum order as every other path).
ONEPOOL_ISA_CLONES void generic_row(const WindowGeometry& g, const float* x, const float* w,
                                    float bias, int64_t od, int64_t oh, float* y_row) {
  std::fill(y_row, y_row + g.output[2], bias);
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
    if (id < 0 || id >= g.input[0]) continue;
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
      if (ih < 0 || ih >= g.input[1]) continue;
      accumulate_row(g, x + (id * g.input[1] + ih) * g.input[2],
                     w + (kd * g.kernel[1] + kh) * g.kernel[2], y_row);
    }
  }
}

// A K x K window at stride 1 that is "same" along W (output as wide as the input, pad (K-1)/2
// before): the taps of output f sit at fixed offsets from x + f, so the rows whose K input rows
// all exist sweep as one flat run with the taps in registers (bias, then taps row by row, as
// interior_kxk sums), which vectorizes even on 7x7 planes where a row is too short to. The border
// columns of those rows get stray values from the neighbouring row and are overwritten one by one;
// the other rows (the top and bottom of a plane, which reach into the padding) go the generic way.
// Any top pad and height: a band of a plane's rows (PointwiseDepthwiseConv) sweeps the same way.
// Returns false (nothing written) when the plane does not qualify.
// `sweep`: the interior sweep on AVX-512 (flat_sweep_3x3_avx512, K = 3), or nullptr.
using FlatSweep = void (*)(const float* x, int64_t extent, int64_t width, int64_t pad_top,
                           const float* w, float bias, float* y, int64_t begin, int64_t end);
template <int K>
ONEPOOL_ISA_CLONES bool flat_plane_kxk(const WindowGeometry& g, const float* x, const float* w,
                                       float bias, float* __restrict y, FlatSweep sweep) {
  constexpr int64_t kPad = (K - 1) / 2;
  const int64_t width = g.input[2];
  const int64_t height = g.input[1];
  const int64_t out_h = g.output[1];
  const bool same_w = g.stride[1] == 1 && g.stride[2] == 1 && g.output[2] == width &&
                      g.pad_begin[2] == kPad && width >= K;
  if (!same_w) return false;
  // Output rows oh read input rows oh - pad_top + kh: all inside for oh in [first_row, end_row).
  const int64_t pad_top = g.pad_begin[1];
  const int64_t first_row = std::clamp<int64_t>(pad_top, 0, out_h);
  const int64_t end_row = std::clamp<int64_t>(height - K + 1 + pad_top, first_row, out_h);
  const int64_t first_column = kPad, end_column = width - (K - 1 - kPad);
  float taps[K * K];
  int64_t offsets[K * K];
  for (int t = 0; t < K * K; ++t) {
    taps[t] = w[t];
    offsets[t] = (t / K - pad_top) * width + (t % K - kPad);
  }
  if (first_row < end_row && sweep != nullptr) {
    sweep(x, height * width, width, pad_top, w, bias, y, first_row * width + first_column,
          (end_row - 1) * width + end_column);
  } else if (first_row < end_row) {
    const int64_t begin = first_row * width + first_column;
    const int64_t end = (end_row - 1) * width + end_column;
    for (int64_t f = begin; f < end; ++f) {
      float sum = bias;
      for (int t = 0; t < K * K; ++t) sum = std::fma(taps[t], x[f + offsets[t]], sum);
      y[f] = sum;
    }
  }
  const float* window_rows[K];
  for (int64_t oh = 0; oh < out_h; ++oh) {
    float* y_row = y + oh * width;
    if (oh < first_row || oh >= end_row) {
      generic_row(g, x, w, bias, 0, oh, y_row);
      continue;
    }
    for (int kh = 0; kh < K; ++kh) window_rows[kh] = x + (oh - pad_top + kh) * width;
    for (int64_t ow = 0; ow < first_column; ++ow) {
      y_row[ow] = edge_kxk<K>(g, window_rows, w, bias, ow);
    }
    for (int64_t ow = end_column; ow < width; ++ow) {
      y_row[ow] = edge_kxk<K>(g, window_rows, w, bias, ow);
    }
  }
  return true;
}

template <int K>
bool flat_plane_plain(const WindowGeometry& g, const float* x, const float* w, float bias,
                      float* y) {
  return flat_plane_kxk<K>(g, x, w, bias, y, nullptr);
}

// Planes whose zero-padded copy fits in this many floats (on the stack) take small_plane_kxk.
constexpr int64_t kSmallPlaneFloats = 4096;

// A small plane (MobileNet's 7x7 and 14x14, PaddleOCR's 2-row maps under 5x5 windows): copied once
// with its zero padding into a stack buffer, then every output sums all K x K taps, padding
// included (w * 0 adds nothing), with no edge cases: on a 7x7 plane the border outputs are most of
// the plane, and their one-by-one path cost more than the sums. Stride 1 sweeps the padded plane as
// one flat run (two stray columns a row, dropped when copied out). Returns false when the plane is
// too large.
template <int K, int S>
ONEPOOL_ISA_CLONES bool small_plane_kxk(const WindowGeometry& g, const float* x, const float* w,
                                        float bias, float* __restrict y) {
  const int64_t out_h = g.output[1], out_w = g.output[2];
  const int64_t padded_h = (out_h - 1) * S + K, padded_w = (out_w - 1) * S + K;
  if (padded_h * padded_w > kSmallPlaneFloats || out_h * padded_w > kSmallPlaneFloats) {
    return false;
  }
  float padded[kSmallPlaneFloats];
  std::fill(padded, padded + padded_h * padded_w, 0.0f);
  const int64_t first_ix = std::max<int64_t>(0, -g.pad_begin[2]);
  const int64_t end_ix = std::min<int64_t>(g.input[2], padded_w - g.pad_begin[2]);
  for (int64_t r = 0; r < padded_h; ++r) {
    const int64_t iy = r - g.pad_begin[1];
    if (iy < 0 || iy >= g.input[1] || end_ix <= first_ix) continue;
    const float* row = x + iy * g.input[2];
    std::copy(row + first_ix, row + end_ix, padded + r * padded_w + g.pad_begin[2] + first_ix);
  }
  float taps[K * K];
  for (int t = 0; t < K * K; ++t) taps[t] = w[t];
  if constexpr (S == 1) {
    float sums[kSmallPlaneFloats];
    const int64_t count = (out_h - 1) * padded_w + out_w;
    if constexpr (K <= 3) {  // all taps in registers, one pass
      for (int64_t f = 0; f < count; ++f) {
        float sum = bias;
        for (int kh = 0; kh < K; ++kh) {
          for (int kw = 0; kw < K; ++kw) {
            sum = std::fma(taps[kh * K + kw], padded[f + kh * padded_w + kw], sum);
          }
        }
        sums[f] = sum;
      }
    } else {  // too many taps for the registers: one pass per kernel row, in the same order
      for (int64_t f = 0; f < count; ++f) sums[f] = bias;
      for (int kh = 0; kh < K; ++kh) {
        const float* row_taps = taps + kh * K;
        const float* source = padded + kh * padded_w;
        for (int64_t f = 0; f < count; ++f) {
          float sum = sums[f];
          for (int kw = 0; kw < K; ++kw) sum = std::fma(row_taps[kw], source[f + kw], sum);
          sums[f] = sum;
        }
      }
    }
    for (int64_t oh = 0; oh < out_h; ++oh) {
      std::copy(sums + oh * padded_w, sums + oh * padded_w + out_w, y + oh * out_w);
    }
  } else {
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const float* rows = padded + oh * S * padded_w;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        float sum = bias;
        for (int kh = 0; kh < K; ++kh) {
          for (int kw = 0; kw < K; ++kw) {
            sum = std::fma(taps[kh * K + kw], rows[kh * padded_w + ow * S + kw], sum);
          }
        }
        y[oh * out_w + ow] = sum;
      }
    }
  }
  return true;
}

// A 2-D square window without dilation: the shapes the specialized plane and row functions take.
bool is_square_2d(const WindowGeometry& g) {
  return g.input[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == g.kernel[2] && g.dilation[1] == 1 &&
         g.dilation[2] == 1;
}

using FlatFn = bool (*)(const WindowGeometry&, const float*, const float*, float, float*);

FlatFn choose_flat_fn(const WindowGeometry& g) {
  const bool square_2d = is_square_2d(g);
  if (square_2d && fits_small_plane(g)) {
    const int64_t k = g.kernel[1];
    const int64_t s = g.stride[1];
    if (k == 3 && s == 1) return &small_plane_kxk<3, 1>;
    if (k == 3 && s == 2) return &small_plane_kxk<3, 2>;
    if (k == 5 && s == 1) return &small_plane_kxk<5, 1>;
    if (k == 5 && s == 2) return &small_plane_kxk<5, 2>;
  }
  if (square_2d && g.kernel[1] == 3) return &flat_plane_plain<3>;
  // Not 5x5: with 25 taps in flight the compiler no longer vectorizes the flat loop (PaddleOCR
  // rec's 5x5 depthwise ran 6x slower than on row_kxk<5, 1>).
  return nullptr;
}

// As choose_flat_fn, without the paths that copy the plane: a 3x3 stride-1 band sweeps flat
// where it lies, anything else goes row by row.
FlatFn choose_in_place_fn(const WindowGeometry& g) {
  return is_square_2d(g) && g.kernel[1] == 3 ? &flat_plane_plain<3> : nullptr;
}

using RowFn = bool (*)(const WindowGeometry&, const float*, const float*, float, int64_t, float*);

// The specialized row function for this geometry, or nullptr (generic path only).
RowFn choose_row_fn(const WindowGeometry& g) {
  if (!is_square_2d(g)) return nullptr;
  const int64_t k = g.kernel[1];
  const int64_t s = g.stride[2];
  if (k == 3 && s == 1) return &row_kxk<3, 1>;
  if (k == 3 && s == 2) return &row_kxk<3, 2>;
  if (k == 5 && s == 1) return &row_kxk<5, 1>;
  if (k == 5 && s == 2) return &row_kxk<5, 2>;
  return nullptr;
}

}  // namespace

// Equal strides, and the plane's zero-padded copy (and, at stride 1, its flat sums) fit the
// small-plane buffers.
bool fits_small_plane(const WindowGeometry& g) {
  if (g.stride[1] != g.stride[2]) return false;
  const int64_t padded_h = (g.output[1] - 1) * g.stride[1] + g.kernel[1];
  const int64_t padded_w = (g.output[2] - 1) * g.stride[2] + g.kernel[2];
  return padded_h * padded_w <= kSmallPlaneFloats && g.output[1] * padded_w <= kSmallPlaneFloats;
}

void depthwise_conv_plane(const WindowGeometry& g, const float* x, const float* w, float bias,
                          float* y, bool in_place, bool avx512) {
  if (in_place && avx512 && is_square_2d(g) && g.kernel[1] == 3 &&
      flat_plane_kxk<3>(g, x, w, bias, y, &flat_sweep_3x3_avx512)) {
    return;
  }
  const RowFn row_fn = choose_row_fn(g);
  const FlatFn flat_fn = in_place ? choose_in_place_fn(g) : choose_flat_fn(g);
  if (flat_fn != nullptr && flat_fn(g, x, w, bias, y)) return;
  for (int64_t od = 0; od < g.output[0]; ++od) {
    for (int64_t oh = 0; oh < g.output[1]; ++oh) {
      float* y_row = y + (od * g.output[1] + oh) * g.output[2];
      if (row_fn != nullptr && row_fn(g, x, w, bias, oh, y_row)) continue;
      generic_row(g, x, w, bias, od, oh, y_row);
    }
  }
}

void depthwise_stride_two_planes(const WindowGeometry& g, const DepthwiseConv& conv, int64_t begin,
                                 int64_t end, const ClampBounds& clamp, bool zero_padding) {
  while (begin < end) {
    const int64_t run_end = std::min(end, (begin / conv.channels + 1) * conv.channels);
    const int64_t c = begin % conv.channels;
    const DepthwiseChannels run{conv.x + begin * g.input_size(),
                                g.input_size(),
                                conv.w + c * g.kernel_size(),
                                conv.bias != nullptr ? conv.bias + c : nullptr,
                                conv.y + begin * g.output_size(),
                                g.output_size(),
                                run_end - begin};
    depthwise_stride_two_3x3_avx512(g, run, clamp, zero_padding);
    begin = run_end;
  }
}

bool depthwise_stride_two_direct(const WindowGeometry& g, int64_t multiplier, bool avx512) {
  return avx512 && multiplier == 1 && depthwise_stride_two_3x3_fits(g) && !fits_small_plane(g);
}

DepthwiseBand depthwise_band(const WindowGeometry& g, int64_t first, int64_t end) {
  const int64_t top = first * g.stride[1] - g.pad_begin[1];
  const int64_t bottom =
      (end - 1) * g.stride[1] - g.pad_begin[1] + (g.kernel[1] - 1) * g.dilation[1];
  DepthwiseBand band;
  band.first_input_row = std::clamp<int64_t>(top, 0, g.input[1]);
  band.end_input_row = std::clamp<int64_t>(bottom + 1, 0, g.input[1]);
  WindowGeometry& b = band.geometry;
  b = g;
  b.input[1] = band.end_input_row - band.first_input_row;
  b.output[1] = end - first;
  b.pad_begin[1] = g.pad_begin[1] + band.first_input_row - first * g.stride[1];
  b.pad_end[1] = (b.output[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1 -
                 b.input[1] - b.pad_begin[1];
  return band;
}

void depthwise_conv(const WindowGeometry& g, const DepthwiseConv& conv,
                    const Activation& activation, ThreadPool& threads) {
  const int64_t out_channels = conv.channels * conv.multiplier;
  const int64_t planes = conv.batch * out_channels;
  if (depthwise_stride_two_direct(g, conv.multiplier, conv.avx512)) {
    const bool in_registers = clamp_fits(activation);
    const ClampBounds clamp = in_registers ? clamp_bounds(activation) : ClampBounds{};
    threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
      depthwise_stride_two_planes(g, conv, begin, end, clamp, false);
      for (int64_t plane = begin; plane < end && !in_registers; ++plane) {
        apply_activation(activation, conv.y + plane * g.output_size(), g.output_size());
      }
    });
    return;
  }
  threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / out_channels;
      const int64_t m = plane % out_channels;
      const int64_t c = m / conv.multiplier;
      float* y = conv.y + plane * g.output_size();
      depthwise_conv_plane(g, conv.x + (n * conv.channels + c) * g.input_size(),
                           conv.w + m * g.kernel_size(), conv.bias ? conv.bias[m] : 0.0f, y);
      apply_activation(activation, y, g.output_size());
    }
  });
}

}  // namespace onepool::cpu::nn
