#include "runtime/cpu/kernels/conv_im2col.h"

#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::nn {
namespace {

// The image row a kernel tap reads for output row (od, oh), or nullptr when it lies in padding.
template <class T>
T* tap_row(const WindowGeometry& g, T* plane, int64_t od, int64_t oh, int64_t kd, int64_t kh) {
  const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
  const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
  if (id < 0 || id >= g.input[0] || ih < 0 || ih >= g.input[1]) return nullptr;
  return plane + (id * g.input[1] + ih) * g.input[2];
}

// Writes one output row (OW values) of column row `row` (c, kd, kh, kw).
void im2col_row(const WindowGeometry& g, const float* src, int64_t kw, float* dst) {
  const int64_t ow_count = g.output[2];
  if (src == nullptr) {
    std::fill(dst, dst + ow_count, 0.0f);
    return;
  }
  const int64_t offset = kw * g.dilation[2] - g.pad_begin[2];
  const int64_t stride = g.stride[2];
  const ValidRange range = valid_output_range(offset, stride, g.input[2], ow_count);
  std::fill(dst, dst + range.first, 0.0f);
  if (stride == 1) {
    std::memcpy(dst + range.first, src + range.first + offset,
                static_cast<size_t>(range.last - range.first) * sizeof(float));
  } else if (stride == 2) {
    // Its own loop, which the compiler turns into vector permutes; over a run-time stride it
    // stays one element at a time (a ninth of ResNet-50's stride-2 1x1 downsample convolutions).
    for (int64_t ow = range.first; ow < range.last; ++ow) dst[ow] = src[ow * 2 + offset];
  } else {
    for (int64_t ow = range.first; ow < range.last; ++ow) dst[ow] = src[ow * stride + offset];
  }
  std::fill(dst + range.last, dst + ow_count, 0.0f);
}

}  // namespace

void im2col(const WindowGeometry& g, const float* image, int64_t channels, float* col,
            ThreadPool& threads) {
  im2col_rows(g, image, channels, 0, g.output[0] * g.output[1], col, threads);
}

void im2col_rows(const WindowGeometry& g, const float* image, int64_t channels, int64_t first_row,
                 int64_t row_count, float* col, ThreadPool& threads) {
  const int64_t tile_size = row_count * g.output[2];
  const int64_t rows = channels * g.kernel_size();
  const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, tile_size));
  threads.parallel_for(rows, min_rows, [&](int64_t begin, int64_t end) {
    im2col_matrix_rows(g, image, first_row, row_count, begin, end, col);
  });
}

ONEPOOL_ISA_CLONES void im2col_matrix_rows(const WindowGeometry& g, const float* image,
                                           int64_t first_row, int64_t row_count, int64_t begin,
                                           int64_t end, float* col) {
  const int64_t kernel_size = g.kernel_size();
  const int64_t tile_size = row_count * g.output[2];
  for (int64_t row = begin; row < end; ++row) {
    const int64_t c = row / kernel_size;
    const int64_t tap = row % kernel_size;
    const int64_t kd = tap / (g.kernel[1] * g.kernel[2]);
    const int64_t kh = tap / g.kernel[2] % g.kernel[1];
    const int64_t kw = tap % g.kernel[2];
    const float* plane = image + c * g.input_size();
    float* dst = col + row * tile_size;
    for (int64_t r = 0; r < row_count; ++r) {
      const int64_t od = (first_row + r) / g.output[1];
      const int64_t oh = (first_row + r) % g.output[1];
      im2col_row(g, tap_row(g, plane, od, oh, kd, kh), kw, dst + r * g.output[2]);
    }
  }
}

void col2im_add_rows(const WindowGeometry& g, const float* col, int64_t channels, int64_t first_row,
                     int64_t row_count, float* image, ThreadPool& threads) {
  const int64_t kernel_size = g.kernel_size();
  const int64_t columns = row_count * g.output[2];
  threads.parallel_for(channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      float* plane = image + c * g.input_size();
      for (int64_t tap = 0; tap < kernel_size; ++tap) {
        const int64_t kd = tap / (g.kernel[1] * g.kernel[2]);
        const int64_t kh = tap / g.kernel[2] % g.kernel[1];
        const int64_t kw = tap % g.kernel[2];
        const float* src_row = col + (c * kernel_size + tap) * columns;
        const int64_t offset = kw * g.dilation[2] - g.pad_begin[2];
        const int64_t stride = g.stride[2];
        const ValidRange range = valid_output_range(offset, stride, g.input[2], g.output[2]);
        for (int64_t row = first_row; row < first_row + row_count; ++row) {
          float* dst = tap_row(g, plane, row / g.output[1], row % g.output[1], kd, kh);
          if (dst == nullptr) continue;
          const float* src = src_row + (row - first_row) * g.output[2];
          for (int64_t ow = range.first; ow < range.last; ++ow)
            dst[ow * stride + offset] += src[ow];
        }
      }
    }
  });
}

void col2im_add(const WindowGeometry& g, const float* col, int64_t channels, float* image,
                ThreadPool& threads) {
  col2im_add_rows(g, col, channels, 0, g.output[0] * g.output[1], image, threads);
}

}  // namespace onepool::cpu::nn
