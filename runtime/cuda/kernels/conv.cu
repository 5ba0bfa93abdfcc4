// Convolution helpers around cuBLAS: im2col into the planned workspace, col2im (the adjoint, for
// ConvTranspose, as a gather so it is deterministic), and a direct depthwise kernel. float32, and
// for Conv float16 / bfloat16 natively: im2col moves the half bits, the depthwise kernel and the
// bias + activation epilogue (after a GEMM with a float32 result) sum in float32 and round each
// output once.
#include "runtime/cuda/kernels/device_util.cuh"
#include "runtime/cuda/kernels/half_util.cuh"

namespace onepool::cuda {

namespace {

// col[(c * k_h + kh) * k_w + kw, oh * out_w + ow] = x[c, ih, iw] (0 outside the image; T is
// float, or unsigned short for the half types, whose zero bits are +0).
template <class T>
__global__ void im2col_kernel(ConvGeometry g, const T* x, T* col) {
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
    col[i] = inside ? x[(c * g.in_h + ih) * g.in_w + iw] : T(0);
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

// depthwise_kernel on half bits: widened loads, a float32 sum, one rounding of the output.
template <ElemType kType>
__global__ void depthwise_half_kernel(ConvGeometry g, int64_t batch, const unsigned short* x,
                                      const unsigned short* w, const unsigned short* bias,
                                      UnaryParams act, unsigned short* y) {
  const int64_t count = batch * g.channels * g.out_h * g.out_w;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t plane = i / (g.out_w * g.out_h);  // n * channels + c
    const int64_t c = plane % g.channels;
    const unsigned short* image = x + plane * g.in_h * g.in_w;
    const unsigned short* kernel = w + c * g.k_h * g.k_w;
    float sum = bias != nullptr ? half_to_float<kType>(bias[c]) : 0.0f;
    for (int kh = 0; kh < g.k_h; ++kh) {
      const int64_t ih = oh * g.s_h - g.p_h + kh * g.d_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int kw = 0; kw < g.k_w; ++kw) {
        const int64_t iw = ow * g.s_w - g.p_w + kw * g.d_w;
        if (iw < 0 || iw >= g.in_w) continue;
        sum += half_to_float<kType>(image[ih * g.in_w + iw]) *
               half_to_float<kType>(kernel[kh * g.k_w + kw]);
      }
    }
    y[i] = float_to_half<kType>(apply_unary(act, sum));
  }
}

// y[i] = round(act(acc[i] + bias[c])): the epilogue of a half conv whose GEMM wrote float32.
template <ElemType kType>
__global__ void bias_activation_half_kernel(const float* acc, const unsigned short* bias,
                                            int64_t count, int64_t channels, int64_t inner,
                                            UnaryParams act, unsigned short* y) {
  ONEPOOL_GRID_LOOP(i, count) {
    float v = acc[i];
    if (bias != nullptr) v += half_to_float<kType>(bias[(i / inner) % channels]);
    y[i] = float_to_half<kType>(apply_unary(act, v));
  }
}

}  // namespace

cudaError_t launch_im2col(const ConvGeometry& g, const float* x, float* col, cudaStream_t stream) {
  const int64_t count = g.channels * g.k_h * g.k_w * g.out_h * g.out_w;
  if (count == 0) return cudaSuccess;
  im2col_kernel<float><<<grid_for(count), kBlock, 0, stream>>>(g, x, col);
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

cudaError_t launch_im2col_half(const ConvGeometry& g, const void* x, void* col,
                               cudaStream_t stream) {
  const int64_t count = g.channels * g.k_h * g.k_w * g.out_h * g.out_w;
  if (count == 0) return cudaSuccess;
  im2col_kernel<unsigned short><<<grid_for(count), kBlock, 0, stream>>>(
      g, static_cast<const unsigned short*>(x), static_cast<unsigned short*>(col));
  return cudaGetLastError();
}

cudaError_t launch_depthwise_conv_half(const ConvGeometry& g, int64_t batch, ElemType type,
                                       const void* x, const void* w, const void* bias,
                                       const UnaryParams& act, void* y, cudaStream_t stream) {
  const int64_t count = batch * g.channels * g.out_h * g.out_w;
  if (count == 0) return cudaSuccess;
  const auto* in = static_cast<const unsigned short*>(x);
  const auto* kernel = static_cast<const unsigned short*>(w);
  const auto* b = static_cast<const unsigned short*>(bias);
  auto* out = static_cast<unsigned short*>(y);
  return launch_for_half_type(type, [&](auto half) {
    depthwise_half_kernel<decltype(half)::value>
        <<<grid_for(count), kBlock, 0, stream>>>(g, batch, in, kernel, b, act, out);
  });
}

cudaError_t launch_bias_activation_half(const float* acc, const void* bias, ElemType type,
                                        int64_t outer, int64_t channels, int64_t inner,
                                        const UnaryParams& act, void* y, cudaStream_t stream) {
  // Unlike the float32 epilogue this always runs: it is the store that rounds to the half type.
  const int64_t count = outer * channels * inner;
  if (count == 0) return cudaSuccess;
  const auto* b = static_cast<const unsigned short*>(bias);
  auto* out = static_cast<unsigned short*>(y);
  const int64_t inner_or_1 = inner < 1 ? 1 : inner;
  return launch_for_half_type(type, [&](auto half) {
    bias_activation_half_kernel<decltype(half)::value>
        <<<grid_for(count), kBlock, 0, stream>>>(acc, b, count, channels, inner_or_1, act, out);
  });
}

}  // namespace onepool::cuda
