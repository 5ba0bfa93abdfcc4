// Winograd F(4x4, 3x3) (conv_winograd.h): the portable input and output transforms, compiled for
// each instruction set, and the filter transform. Each 4x4 block of output comes from a 6x6 block
// of input in 36 multiplications per (input, output) channel pair instead of 144: 4x fewer
// multiply-adds than the implicit GEMM, against 2.25x for F(2x2, 3x3).
//
// The matrices (Lavin and Gray's, interpolation points 0, 1, -1, 2, -2 and infinity):
//   B^T = [4  0 -5  0 1 0; 0 -4 -4  1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0;
//          0  4  0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
// Every product below is by a power of two (exact), so each transform rounds in its adds only,
// and the AVX-512 transforms (conv_winograd_f4_avx512.cc) perform the same adds in the same order:
// both apply the 1-D transform along each row's columns first, then along the rows.
#include <cstring>

#include "runtime/cpu/kernels/conv_winograd_transforms.h"
#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::nn {
namespace {

constexpr int64_t kLanes = kWinogradLanes;

// out[k][l] = (B^T in)[k][l] for the six rows in[0..5] of kLanes lanes each.
inline void input_1d(const float (*in)[kLanes], float (*out)[kLanes]) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float d0 = in[0][l], d1 = in[1][l], d2 = in[2][l];
    const float d3 = in[3][l], d4 = in[4][l], d5 = in[5][l];
    out[0][l] = (d0 - d2) * 4.0f + (d4 - d2);
    out[1][l] = (d3 + d4) - (d1 + d2) * 4.0f;
    out[2][l] = (d4 - d3) + (d1 - d2) * 4.0f;
    out[3][l] = (d4 - d2) + (d3 - d1) * 2.0f;
    out[4][l] = (d4 - d2) - (d3 - d1) * 2.0f;
    out[5][l] = (d1 - d3) * 4.0f + (d5 - d3);
  }
}

// out[k][l] = (A^T in)[k][l] for the six rows in[0..5].
inline void output_1d(const float (*in)[kLanes], float (*out)[kLanes]) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float m0 = in[0][l], m1 = in[1][l], m2 = in[2][l];
    const float m3 = in[3][l], m4 = in[4][l], m5 = in[5][l];
    const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    out[0][l] = (m0 + s12) + s34;
    out[1][l] = d12 + d34 * 2.0f;
    out[2][l] = s12 + s34 * 4.0f;
    out[3][l] = (d12 + d34 * 8.0f) + m5;
  }
}

// V = B^T d B for the tiles of `run` in input channel `channel`, stored at their slots of the 36
// matrices. False when an input read is NaN, Inf or above 2^40.
bool transform_input_run(const WinogradImage& image, const TileRun& run, int64_t channel,
                         float* v) {
  const WindowGeometry& g = image.g;
  const float* plane = image.x + channel * g.input_size();
  float buffer[kWinograd4RowFloats];
  float d[6][kLanes];
  float w[6][6][kLanes];  // w[r] = (row r of d) B: each row's columns first
  int bad = 0;
  for (int r = 0; r < 6; ++r) {
    const float* row = winograd_input_row(g, plane, 4 * run.ty - g.pad_begin[1] + r,
                                          4 * run.tx - g.pad_begin[2], buffer, kWinograd4RowFloats);
    for (int j = 0; j < 6; ++j) {
      for (int64_t l = 0; l < kLanes; ++l) d[j][l] = row[4 * l + j];
      for (int64_t l = 0; l < kLanes; ++l) bad |= within_winograd_limit(d[j][l]) ? 0 : 1;
    }
    input_1d(d, w[r]);
  }
  const int64_t stride = image.plan.v_stride;  // between positions
  float* out = v + channel * image.plan.block_tiles + run.slot;
  const int64_t lanes = run.count;
  for (int k = 0; k < 6; ++k) {  // B^T w, column k of the tile
    float column[6][kLanes];
    float transformed[6][kLanes];
    for (int r = 0; r < 6; ++r) std::memcpy(column[r], w[r][k], sizeof(column[r]));
    input_1d(column, transformed);
    for (int i = 0; i < 6; ++i) {
      float* position = out + (6 * i + k) * stride;
      for (int64_t l = 0; l < lanes; ++l) position[l] = transformed[i][l];
    }
  }
  return bad == 0;
}

// Y = A^T m A + bias, then the residual and the activation, for the tiles of `run` in output
// channel `channel`.
void transform_output_run(const WinogradImage& image, const TileRun& run, int64_t channel,
                          const float* m) {
  const WindowGeometry& g = image.g;
  const int64_t stride = image.plan.m_stride;  // between positions
  const float* in = m + channel * image.plan.block_tiles + run.slot;
  float t[6][4][kLanes];  // t[r] = (row r of m) A
  for (int r = 0; r < 6; ++r) {
    float row[6][kLanes];
    for (int j = 0; j < 6; ++j) std::memcpy(row[j], in + (6 * r + j) * stride, sizeof(row[j]));
    output_1d(row, t[r]);
  }
  const float bias = image.bias != nullptr ? image.bias[channel] : 0.0f;
  const int64_t out_w = g.output[2];
  const int64_t x0 = 4 * run.tx;
  const int64_t columns = std::min(4 * run.count, out_w - x0);
  float o[4][4][kLanes];  // o[k] = A^T (column k of t): output row i of every tile
  for (int k = 0; k < 4; ++k) {
    float column[6][kLanes];
    for (int r = 0; r < 6; ++r) std::memcpy(column[r], t[r][k], sizeof(column[r]));
    output_1d(column, o[k]);
  }
  for (int i = 0; i < 4; ++i) {
    const int64_t oy = 4 * run.ty + i;
    if (oy >= g.output[1]) break;
    const int64_t at = channel * g.output_size() + oy * out_w + x0;
    float* dst = image.y + at;
    for (int64_t column = 0; column < columns; ++column) {
      dst[column] = o[column % 4][i][column / 4] + bias;
    }
    if (image.residual != nullptr) add_residual(dst, image.residual + at, columns);
    apply_activation(image.activation, dst, columns);
  }
}

}  // namespace

ONEPOOL_ISA_CLONES bool transform4_input_portable(const WinogradImage& image,
                                                  const TileBlock& block, int64_t first,
                                                  int64_t end) {
  return for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    return transform_input_run(image, run, channel, block.v);
  });
}

ONEPOOL_ISA_CLONES void transform4_output_portable(const WinogradImage& image,
                                                   const TileBlock& block, int64_t first,
                                                   int64_t end) {
  for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    transform_output_run(image, run, channel, block.m);
    return true;
  });
}

void transform4_filter(const float* filter, float* u, int64_t stride) {
  static constexpr double kG[6][3] = {{0.25, 0.0, 0.0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0.0, 0.0, 1.0}};
  double t[6][3];  // G g
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 3; ++j) {
      t[i][j] = kG[i][0] * filter[j] + kG[i][1] * filter[3 + j] + kG[i][2] * filter[6 + j];
    }
  }
  for (int i = 0; i < 6; ++i) {  // (G g) G^T
    for (int k = 0; k < 6; ++k) {
      const double value = t[i][0] * kG[k][0] + t[i][1] * kG[k][1] + t[i][2] * kG[k][2];
      u[(6 * i + k) * stride] = static_cast<float>(value);
    }
  }
}

}  // namespace onepool::cpu::nn
