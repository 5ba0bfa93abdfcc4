// Convolution helpers around cuBLAS: im2col into the planned workspace, col2im (the adjoint, for
// ConvTranspose, as a gather so it is deterministic), and a direct depthwise kernel.
#include "runtime/cuda/kernels/device_util.cuh"

namespace onepool::cuda {

namespace {

// col[(c * k_h + kh) * k_w + kw, oh * out_w + ow] = x[c, ih, iw] (0 outside the image).
__global__ void im2col_kernel(ConvGeometry g, const float* x, float* col) {
  const int64_t spatial = g.out_h * g.out_w;
  const int64_t count = g.channels * g.k_h * g.k_w * spatial;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t row = i / spatial;
    const int64_t kw = row % g.k_w;
    const int64_t kh = (row / g.k_w) % g.k_h;
    const int64_t c = row / (g.k_w * g.k_h);
    const int64_t ih = oh * g.s_h - g.p_h + kh * g.d_h;
    const int64_t iw = ow * g.s_w - g.p_w + kw * g.d_w;
    const bool inside = ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w;
    col[i] = inside ? x[(c * g.in_h + ih) * g.in_w + iw] : 0.0f;
  }
}

// image[c, ih, iw] = Σ over (kh, kw, oh, ow) that im2col maps onto it of col[...].
__global__ void col2im_kernel(ConvGeometry g, const float* col, float* image) {
  const int64_t spatial = g.out_h * g.out_w;
  const int64_t count = g.channels * g.in_h * g.in_w;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t iw = i % g.in_w;
    const int64_t ih = (i / g.in_w) % g.in_h;
    const int64_t c = i / (g.in_w * g.in_h);
    float sum = 0.0f;
    for (int kh = 0; kh < g.k_h; ++kh) {
      const int64_t y = ih + g.p_h - kh * g.d_h;
      if (y < 0 || y % g.s_h != 0 || y / g.s_h >= g.out_h) continue;
      for (int kw = 0; kw < g.k_w; ++kw) {
        const int64_t x = iw + g.p_w - kw * g.d_w;
        if (x < 0 || x % g.s_w != 0 || x / g.s_w >= g.out_w) continue;
        const int64_t row = (c * g.k_h + kh) * g.k_w + kw;
        sum += col[row * spatial + (y / g.s_h) * g.out_w + x / g.s_w];
      }
    }
    image[i] = sum;
  }
}

__global__ void depthwise_kernel(ConvGeometry g, int64_t batch, const float* x, const float* w,
                                 const float* bias, UnaryParams act, float* y) {
  const int64_t count = batch * g.channels * g.out_h * g.out_w;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t plane = i / (g.out_w * g.out_h);  // n * channels + c
    const int64_t c = plane % g.channels;
    const float* image = x + plane * g.in_h * g.in_w;
    const float* kernel = w + c * g.k_h * g.k_w;
    float sum = bias != nullptr ? bias[c] : 0.0f;
    for (int kh = 0; kh < g.k_h; ++kh) {
      const int64_t ih = oh * g.s_h - g.p_h + kh * g.d_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int kw = 0; kw < g.k_w; ++kw) {
        const int64_t iw = ow * g.s_w - g.p_w + kw * g.d_w;
        if (iw < 0 || iw >= g.in_w) continue;
        sum += image[ih * g.in_w + iw] * kernel[kh * g.k_w + kw];
      }
    }
    y[i] = apply_unary(act, sum);
  }
}

}  // namespace

cudaError_t launch_im2col(const ConvGeometry& g, const float* x, float* col, cudaStream_t stream) {
  const int64_t count = g.channels * g.k_h * g.k_w * g.out_h * g.out_w;
  if (count == 0) return cudaSuccess;
  im2col_kernel<<<grid_for(count), kBlock, 0, stream>>>(g, x, col);
  return cudaGetLastError();
}

cudaError_t launch_col2im(const ConvGeometry& g, const float* col, float* image,
                          cudaStream_t stream) {
  const int64_t count = g.channels * g.in_h * g.in_w;
  if (count == 0) return cudaSuccess;
  col2im_kernel<<<grid_for(count), kBlock, 0, stream>>>(g, col, image);
  return cudaGetLastError();
}

cudaError_t launch_depthwise_conv(const ConvGeometry& g, int64_t batch, const float* x,
                                  const float* w, const float* bias, const UnaryParams& act,
                                  float* y, cudaStream_t stream) {
  const int64_t count = batch * g.channels * g.out_h * g.out_w;
  if (count == 0) return cudaSuccess;
  depthwise_kernel<<<grid_for(count), kBlock, 0, stream>>>(g, batch, x, w, bias, act, y);
  return cudaGetLastError();
}

}  // namespace onepool::cuda
