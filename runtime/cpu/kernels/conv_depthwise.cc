#include "runtime/cpu/kernels/conv_depthwise.h"

#include <algorithm>

namespace onepool::cpu::nn {
namespace {

// Accumulates one kernel row (all kw taps) of input row `x_row` into output row `y_row`.
void accumulate_row(const WindowGeometry& g, const float* x_row, const float* w_row,
                    float* y_row) {
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

// One output plane: y = conv(x plane, w taps) + bias.
void depthwise_plane(const WindowGeometry& g, const float* x, const float* w, float bias,
                     float* y) {
  std::fill(y, y + g.output_size(), bias);
  for (int64_t od = 0; od < g.output[0]; ++od) {
    for (int64_t oh = 0; oh < g.output[1]; ++oh) {
      float* y_row = y + (od * g.output[1] + oh) * g.output[2];
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
