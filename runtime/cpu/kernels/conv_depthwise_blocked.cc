#include "runtime/cpu/kernels/conv_depthwise_blocked.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/cpu/kernels/avx512_lanes.h"

// GCC 12's AVX-512 shuffle intrinsics start from _mm512_undefined_ps(), which the uninitialized
// warnings report wherever they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace onepool::cpu::nn {
namespace {

#define ONEPOOL_AVX512 __attribute__((target("avx512f")))
#define ONEPOOL_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

constexpr int64_t kLanes = 16;
// One band's transposed, zero-padded input rows, and its outputs (channel-minor), on the stack:
// 48 KiB together (64 KiB of tile measured no faster on 112x112 maps).
constexpr int64_t kTileFloats = 8192;
constexpr int64_t kOutFloats = 4096;
// Output rows up to this wide take the blocked path: at stride 1 the per-plane flat path runs
// full vectors on wider rows and the transposes cost more than they save (MobileNet's 56x56
// maps: 0.21 -> 0.25 ms); at stride 2 its strided reads keep it slower a little further (a 3x3
// over 96 channels, 96x96 -> 48x48: 0.21 -> 0.17 ms, but 112x112 -> 56x56 even and 128x128 ->
// 64x64 0.37 -> 0.42 ms).
constexpr int64_t kWidestStrideOneRow = 32;
constexpr int64_t kWidestStrideTwoRow = 48;

// How a plane is cut into bands of output rows.
struct Bands {
  int64_t padded_w = 0;  // tile columns: (OW - 1) * S + K
  int64_t out_rows = 0;  // output rows per band (0: the plane does not fit)
  int64_t count = 0;
};

Bands plan_bands(const WindowGeometry& g) {
  const int64_t k = g.kernel[1];
  const int64_t s = g.stride[1];
  Bands bands;
  bands.padded_w = (g.output[2] - 1) * s + k;
  const int64_t tile_rows = kTileFloats / (bands.padded_w * kLanes);
  if (tile_rows < k) return bands;
  const int64_t most =
      std::min({(tile_rows - k) / s + 1, kOutFloats / (g.output[2] * kLanes), g.output[1]});
  if (most < 1) return bands;
  bands.count = (g.output[1] + most - 1) / most;
  bands.out_rows = (g.output[1] + bands.count - 1) / bands.count;
  return bands;
}

// rows[i] lane j -> rows[j] lane i (inlined: the 16 rows stay in registers).
ONEPOOL_AVX512_INLINE void transpose16(__m512 rows[16]) {
  __m512 pairs[16];
  for (int i = 0; i < 16; i += 2) {
    pairs[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
    pairs[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
  }
  // quads[4 g + m], 128-bit lane L: rows 4 g .. 4 g + 3 at column 4 L + m.
  __m512 quads[16];
  for (int g = 0; g < 4; ++g) {
    const __m512d a = _mm512_castps_pd(pairs[4 * g]);
    const __m512d b = _mm512_castps_pd(pairs[4 * g + 1]);
    const __m512d c = _mm512_castps_pd(pairs[4 * g + 2]);
    const __m512d d = _mm512_castps_pd(pairs[4 * g + 3]);
    quads[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    quads[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    quads[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    quads[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int m = 0; m < 4; ++m) {
    const __m512 even_low = _mm512_shuffle_f32x4(quads[m], quads[4 + m], 0x88);
    const __m512 odd_low = _mm512_shuffle_f32x4(quads[m], quads[4 + m], 0xDD);
    const __m512 even_high = _mm512_shuffle_f32x4(quads[8 + m], quads[12 + m], 0x88);
    const __m512 odd_high = _mm512_shuffle_f32x4(quads[8 + m], quads[12 + m], 0xDD);
    rows[m] = _mm512_shuffle_f32x4(even_low, even_high, 0x88);
    rows[8 + m] = _mm512_shuffle_f32x4(even_low, even_high, 0xDD);
    rows[4 + m] = _mm512_shuffle_f32x4(odd_low, odd_high, 0x88);
    rows[12 + m] = _mm512_shuffle_f32x4(odd_low, odd_high, 0xDD);
  }
}

// One band of one block of channels: which rows, where the planes are, the tile's shape.
struct BandJob {
  const float* x = nullptr;  // the block's first input plane
  float* y = nullptr;        // the block's first output plane
  int64_t channels = 0;      // planes in the block (1..16)
  int64_t first_out_row = 0;
  int64_t out_rows = 0;
  int64_t first_tile_row = 0;  // in padded coordinates: first_out_row * S
  int64_t tile_rows = 0;       // (out_rows - 1) * S + K
  int64_t padded_w = 0;
};

// tile[r][q][c] = x plane c at row first_tile_row + r - pad_top, column q - pad_left, and 0
// outside the plane (and for lanes past the block's channels).
ONEPOOL_AVX512 void fill_tile(const WindowGeometry& g, const BandJob& job, float* tile) {
  const int64_t width = g.input[2];
  const int64_t plane = g.input_size();
  const int64_t pad_top = g.pad_begin[1], pad_left = g.pad_begin[2];
  const __m512 zero = _mm512_setzero_ps();
  // Rows of the input the tile holds, and the columns of each (the padded width may end before
  // the row does when the last columns are never read).
  const int64_t first_iy = std::max<int64_t>(0, job.first_tile_row - pad_top);
  const int64_t end_iy = std::min(g.input[1], job.first_tile_row + job.tile_rows - pad_top);
  const int64_t end_ix = std::min(width, job.padded_w - pad_left);
  for (int64_t r = 0; r < job.tile_rows; ++r) {
    const int64_t iy = job.first_tile_row + r - pad_top;
    float* row = tile + r * job.padded_w * kLanes;
    const bool inside = iy >= first_iy && iy < end_iy;
    const int64_t zero_before = inside ? std::min(pad_left, job.padded_w) : job.padded_w;
    for (int64_t q = 0; q < zero_before; ++q) _mm512_store_ps(row + q * kLanes, zero);
    if (!inside) continue;
    for (int64_t q = pad_left + end_ix; q < job.padded_w; ++q) {
      _mm512_store_ps(row + q * kLanes, zero);
    }
  }
  if (end_iy <= first_iy || end_ix <= 0) return;
  // The rows' positions as one flat run of each plane, 16 at a time: 16 channels x 16 positions
  // loaded, transposed, and each position's 16 channels stored into its tile slot.
  const int64_t first = first_iy * width;
  const int64_t end = end_iy * width;
  const int64_t row_gap = (job.padded_w - width) * kLanes;  // from a row's end to the next's
  __m512 block[16];
  for (int64_t p = first; p < end; p += kLanes) {
    const __mmask16 mask = first_lanes(end - p);
    for (int64_t c = 0; c < kLanes; ++c) {
      block[c] = c < job.channels ? _mm512_maskz_loadu_ps(mask, job.x + c * plane + p) : zero;
    }
    transpose16(block);
    const int64_t count = std::min(kLanes, end - p);
    int64_t ix = p % width;
    float* slot =
        tile + ((p / width + pad_top - job.first_tile_row) * job.padded_w + ix + pad_left) * kLanes;
    for (int64_t j = 0; j < count; ++j) {
      if (ix < end_ix) _mm512_store_ps(slot, block[j]);
      slot += kLanes;
      if (++ix == width) {
        ix = 0;
        slot += row_gap;
      }
    }
  }
}

// out[(row * OW + ow)][c] = bias[c] + the K x K taps, row by row, over the tile.
template <int K>
ONEPOOL_AVX512 void multiply_tile(const WindowGeometry& g, const BandJob& job,
                                  const __m512 taps[K * K], __m512 bias, const float* tile,
                                  float* out) {
  const int64_t stride = g.stride[1];
  const int64_t out_w = g.output[2];
  for (int64_t row = 0; row < job.out_rows; ++row) {
    const float* window_row = tile + row * stride * job.padded_w * kLanes;
    float* out_row = out + row * out_w * kLanes;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const float* window = window_row + ow * stride * kLanes;
      __m512 sum = bias;
      for (int kh = 0; kh < K; ++kh) {
        for (int kw = 0; kw < K; ++kw) {
          sum = _mm512_fmadd_ps(taps[kh * K + kw],
                                _mm512_load_ps(window + (kh * job.padded_w + kw) * kLanes), sum);
        }
      }
      _mm512_store_ps(out_row + ow * kLanes, sum);
    }
  }
}

// The band's outputs back into the block's planes: out[q][c] -> y plane c at position q of the
// band's rows.
ONEPOOL_AVX512 void store_band(const WindowGeometry& g, const BandJob& job, const float* out) {
  const int64_t plane = g.output_size();
  const int64_t count = job.out_rows * g.output[2];
  float* y = job.y + job.first_out_row * g.output[2];
  const __m512 zero = _mm512_setzero_ps();
  __m512 block[16];
  for (int64_t q = 0; q < count; q += kLanes) {
    const int64_t positions = std::min(kLanes, count - q);
    for (int64_t j = 0; j < kLanes; ++j) {
      block[j] = j < positions ? _mm512_load_ps(out + (q + j) * kLanes) : zero;
    }
    transpose16(block);
    const __mmask16 mask = first_lanes(positions);
    for (int64_t c = 0; c < job.channels; ++c) {
      _mm512_mask_storeu_ps(y + c * plane + q, mask, block[c]);
    }
  }
}

template <int K>
ONEPOOL_AVX512 void run_band(const WindowGeometry& g, const BandJob& job, const float* w,
                             const float* bias, const Activation& activation) {
  alignas(64) float tap_lanes[K * K][kLanes] = {};
  alignas(64) float bias_lanes[kLanes] = {};
  for (int64_t c = 0; c < job.channels; ++c) {
    for (int t = 0; t < K * K; ++t) tap_lanes[t][c] = w[c * K * K + t];
    bias_lanes[c] = bias != nullptr ? bias[c] : 0.0f;
  }
  __m512 taps[K * K];
  for (int t = 0; t < K * K; ++t) taps[t] = _mm512_load_ps(tap_lanes[t]);
  alignas(64) float tile[kTileFloats];
  alignas(64) float out[kOutFloats];
  fill_tile(g, job, tile);
  multiply_tile<K>(g, job, taps, _mm512_load_ps(bias_lanes), tile, out);
  apply_activation(activation, out, job.out_rows * g.output[2] * kLanes);
  store_band(g, job, out);
}

}  // namespace

bool depthwise_blocked_fits(const WindowGeometry& g, int64_t multiplier) {
  const bool square_2d = g.input[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == g.kernel[2] &&
                         (g.kernel[1] == 3 || g.kernel[1] == 5) && g.dilation[1] == 1 &&
                         g.dilation[2] == 1;
  const bool strides = g.stride[1] == g.stride[2] && (g.stride[1] == 1 || g.stride[1] == 2);
  const bool narrow = g.output[2] <= (g.stride[1] == 1 ? kWidestStrideOneRow : kWidestStrideTwoRow);
  return multiplier == 1 && square_2d && strides && narrow && plan_bands(g).out_rows > 0;
}

void depthwise_conv_blocked(const WindowGeometry& g, const DepthwiseConv& conv,
                            const Activation& activation, ThreadPool& threads) {
  const Bands bands = plan_bands(g);
  const int64_t blocks = (conv.channels + kLanes - 1) / kLanes;
  const int64_t per_image = blocks * bands.count;
  const int64_t k = g.kernel[1];
  threads.parallel_for(conv.batch * per_image, 1, [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t n = unit / per_image;
      const int64_t block = unit % per_image / bands.count;
      const int64_t band = unit % bands.count;
      const int64_t first_channel = block * kLanes;
      BandJob job;
      job.x = conv.x + (n * conv.channels + first_channel) * g.input_size();
      job.y = conv.y + (n * conv.channels + first_channel) * g.output_size();
      job.channels = std::min(kLanes, conv.channels - first_channel);
      job.first_out_row = band * bands.out_rows;
      job.out_rows = std::min(bands.out_rows, g.output[1] - job.first_out_row);
      job.first_tile_row = job.first_out_row * g.stride[1];
      job.tile_rows = (job.out_rows - 1) * g.stride[1] + k;
      job.padded_w = bands.padded_w;
      const float* w = conv.w + first_channel * k * k;
      const float* bias = conv.bias != nullptr ? conv.bias + first_channel : nullptr;
      if (k == 3) {
        run_band<3>(g, job, w, bias, activation);
      } else {
        run_band<5>(g, job, w, bias, activation);
      }
    }
  });
}

}  // namespace onepool::cpu::nn
