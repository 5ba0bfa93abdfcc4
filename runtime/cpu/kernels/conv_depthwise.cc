#include "runtime/cpu/kernels/conv_depthwise.h"

#include <algorithm>

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
      for (int64_t ow = range.first; ow < range.last; ++ow) y_row[ow] += weight * src[ow];
      continue;
    }
    for (int64_t ow = range.first; ow < range.last; ++ow) {
      y_row[ow] += weight * x_row[ow * stride + offset];
    }
  }
}

// One output position with bounds checks on W (the edges of a 3x3 row).
float edge_3x3(const WindowGeometry& g, const float* const rows[3], const float* w, float bias,
               int64_t ow) {
  float sum = bias;
  for (int64_t kh = 0; kh < 3; ++kh) {
    for (int64_t kw = 0; kw < 3; ++kw) {
      const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw;
      if (iw >= 0 && iw < g.input[2]) sum += w[kh * 3 + kw] * rows[kh][iw];
    }
  }
  return sum;
}

// 2-D 3x3 with dilation 1 when all three input rows exist (MobileNet's case): one pass over the
// output row with the nine taps in registers instead of nine passes. Returns false otherwise.
bool row_3x3(const WindowGeometry& g, const float* x, const float* w, float bias, int64_t oh,
             float* y_row) {
  if (g.input[0] != 1 || g.kernel[1] != 3 || g.kernel[2] != 3 || g.dilation[1] != 1 ||
      g.dilation[2] != 1) {
    return false;
  }
  const int64_t ih = oh * g.stride[1] - g.pad_begin[1];
  if (ih < 0 || ih + 2 >= g.input[1]) return false;
  const float* const rows[3] = {x + ih * g.input[2], x + (ih + 1) * g.input[2],
                                x + (ih + 2) * g.input[2]};
  const int64_t stride = g.stride[2];
  const int64_t pad = g.pad_begin[2];
  const int64_t first = valid_output_range(-pad, stride, g.input[2], g.output[2]).first;
  const int64_t last =
      std::max(first, valid_output_range(2 - pad, stride, g.input[2], g.output[2]).last);
  for (int64_t ow = 0; ow < first; ++ow) y_row[ow] = edge_3x3(g, rows, w, bias, ow);
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6],
              w7 = w[7], w8 = w[8];
  for (int64_t ow = first; ow < last; ++ow) {
    const int64_t iw = ow * stride - pad;
    const float* r0 = rows[0] + iw;
    const float* r1 = rows[1] + iw;
    const float* r2 = rows[2] + iw;
    y_row[ow] = bias + w0 * r0[0] + w1 * r0[1] + w2 * r0[2] + w3 * r1[0] + w4 * r1[1] + w5 * r1[2] +
                w6 * r2[0] + w7 * r2[1] + w8 * r2[2];
  }
  for (int64_t ow = last; ow < g.output[2]; ++ow) y_row[ow] = edge_3x3(g, rows, w, bias, ow);
  return true;
}

// One output plane: y = conv(x plane, w taps) + bias.
void depthwise_plane(const WindowGeometry& g, const float* x, const float* w, float bias,
                     float* y) {
  for (int64_t od = 0; od < g.output[0]; ++od) {
    for (int64_t oh = 0; oh < g.output[1]; ++oh) {
      float* y_row = y + (od * g.output[1] + oh) * g.output[2];
      if (row_3x3(g, x, w, bias, oh, y_row)) continue;
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
  }
}

}  // namespace

void depthwise_conv(const WindowGeometry& g, const DepthwiseConv& conv,
                    const Activation& activation, ThreadPool& threads) {
  const int64_t out_channels = conv.channels * conv.multiplier;
  const int64_t planes = conv.batch * out_channels;
  threads.parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / out_channels;
      const int64_t m = plane % out_channels;
      const int64_t c = m / conv.multiplier;
      float* y = conv.y + plane * g.output_size();
      depthwise_plane(g, conv.x + (n * conv.channels + c) * g.input_size(),
                      conv.w + m * g.kernel_size(), conv.bias ? conv.bias[m] : 0.0f, y);
      apply_activation(activation, y, g.output_size());
    }
  });
}

}  // namespace onepool::cpu::nn
