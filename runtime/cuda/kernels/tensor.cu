// Data-movement kernels: one generic strided copy (Transpose, Slice, Concat, Split, Expand, Tile,
// DepthToSpace, Reshape-family copies), fill, Pad, Gather, Resize and per-channel BatchNorm.
// Kernels move elements by size (1, 2, 4 or 8 bytes), so each is instantiated at most 4 times.
#include <cstring>

#include "runtime/cuda/kernels/device_util.cuh"

namespace onepool::cuda {

namespace {

template <class T>
__global__ void strided_copy_kernel(CopyShape s, const T* src, T* dst) {
  ONEPOOL_GRID_LOOP(i, s.count) {
    int64_t rest = i;
    int64_t src_offset = 0;
    int64_t dst_offset = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t index = rest % s.dims[d];
      rest /= s.dims[d];
      src_offset += index * s.src_strides[d];
      dst_offset += index * s.dst_strides[d];
    }
    dst[dst_offset] = src[src_offset];
  }
}

template <class T>
__global__ void fill_kernel(T* dst, T value, int64_t count) {
  ONEPOOL_GRID_LOOP(i, count) { dst[i] = value; }
}

// Source index along one dim for an output index `o`, or -1 for the constant.
__device__ inline int64_t pad_source(int64_t o, int64_t pad, int64_t in, PadMode mode) {
  int64_t i = o - pad;
  if (i >= 0 && i < in) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kEdge) return i < 0 ? 0 : in - 1;
  if (in == 1) return 0;
  const int64_t period = 2 * (in - 1);  // reflect without repeating the edge
  i %= period;
  if (i < 0) i += period;
  return i < in ? i : period - i;
}

template <class T>
__global__ void pad_kernel(PadParams p, const T* src, T* dst, T value) {
  ONEPOOL_GRID_LOOP(i, p.count) {
    int64_t rest = i;
    int64_t src_offset = 0;
    int64_t src_stride = 1;
    bool constant = false;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t o = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      const int64_t s = pad_source(o, p.pads_begin[d], p.in_dims[d], p.mode);
      if (s < 0) constant = true;
      src_offset += s * src_stride;
      src_stride *= p.in_dims[d];
    }
    dst[i] = constant ? value : src[src_offset];
  }
}

template <class T>
__global__ void gather_kernel(GatherParams p, const T* data, const void* indices, T* out) {
  const int64_t count = p.outer * p.index_count * p.inner;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t inner = i % p.inner;
    const int64_t j = (i / p.inner) % p.index_count;
    const int64_t outer = i / (p.inner * p.index_count);
    int64_t index = p.index_is_int64 ? static_cast<const int64_t*>(indices)[j]
                                     : static_cast<const int32_t*>(indices)[j];
    if (index < 0) index += p.axis_dim;
    // Out-of-range indices are invalid input; clamp so the kernel never reads outside `data`.
    index = index < 0 ? 0 : (index >= p.axis_dim ? p.axis_dim - 1 : index);
    out[i] = data[(outer * p.axis_dim + index) * p.inner + inner];
  }
}

__device__ inline float resize_source(ResizeCoord mode, int64_t o, float scale, int64_t in,
                                      int64_t out) {
  switch (mode) {
    case ResizeCoord::kAsymmetric:
      return o / scale;
    case ResizeCoord::kAlignCorners:
      return out > 1 ? o * static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    case ResizeCoord::kPytorchHalfPixel:
      return out > 1 ? (o + 0.5f) / scale - 0.5f : 0.0f;
    case ResizeCoord::kHalfPixel:
      return (o + 0.5f) / scale - 0.5f;
  }
  return 0.0f;
}

__device__ inline int64_t nearest_index(ResizeNearest mode, float x, float scale, int64_t in) {
  int64_t i = static_cast<int64_t>(floorf(x));
  if (x == floorf(x)) mode = ResizeNearest::kFloor;  // exact: every mode picks x
  switch (mode) {
    case ResizeNearest::kRoundPreferFloor:
      i = (x - floorf(x) == 0.5f) ? static_cast<int64_t>(floorf(x)) : llrintf(x);
      break;
    case ResizeNearest::kRoundPreferCeil:
      i = (x - floorf(x) == 0.5f) ? static_cast<int64_t>(ceilf(x)) : llrintf(x);
      break;
    case ResizeNearest::kFloor:
      i = static_cast<int64_t>(floorf(x));
      break;
    case ResizeNearest::kCeil:
      i = static_cast<int64_t>(ceilf(x));
      break;
    case ResizeNearest::kSimple:
      i = static_cast<int64_t>(scale < 1.0f ? ceilf(x) : floorf(x));
      break;
  }
  return i < 0 ? 0 : (i >= in ? in - 1 : i);
}

__global__ void resize_kernel(ResizeParams p, const float* x, float* y) {
  const int64_t count = p.planes * p.out_h * p.out_w;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t ow = i % p.out_w;
    const int64_t oh = (i / p.out_w) % p.out_h;
    const float* plane = x + (i / (p.out_w * p.out_h)) * p.in_h * p.in_w;
    const float sy = resize_source(p.coord, oh, p.scale_h, p.in_h, p.out_h);
    const float sx = resize_source(p.coord, ow, p.scale_w, p.in_w, p.out_w);
    if (!p.linear) {
      y[i] = plane[nearest_index(p.nearest, sy, p.scale_h, p.in_h) * p.in_w +
                   nearest_index(p.nearest, sx, p.scale_w, p.in_w)];
      continue;
    }
    const float cy = fminf(fmaxf(sy, 0.0f), static_cast<float>(p.in_h - 1));
    const float cx = fminf(fmaxf(sx, 0.0f), static_cast<float>(p.in_w - 1));
    const int64_t y0 = static_cast<int64_t>(floorf(cy));
    const int64_t x0 = static_cast<int64_t>(floorf(cx));
    const int64_t y1 = y0 + 1 < p.in_h ? y0 + 1 : y0;
    const int64_t x1 = x0 + 1 < p.in_w ? x0 + 1 : x0;
    const float fy = cy - y0;
    const float fx = cx - x0;
    const float top = plane[y0 * p.in_w + x0] * (1 - fx) + plane[y0 * p.in_w + x1] * fx;
    const float bottom = plane[y1 * p.in_w + x0] * (1 - fx) + plane[y1 * p.in_w + x1] * fx;
    y[i] = top * (1 - fy) + bottom * fy;
  }
}

__global__ void batch_norm_kernel(const float* x, const float* scale, const float* bias,
                                  const float* mean, const float* var, float epsilon, int64_t count,
                                  int64_t channels, int64_t inner, float* y) {
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t c = (i / inner) % channels;
    y[i] = (x[i] - mean[c]) * rsqrtf(var[c] + epsilon) * scale[c] + bias[c];
  }
}

template <class T>
T bits_as(uint64_t bits) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  return value;
}

}  // namespace

cudaError_t launch_strided_copy(const CopyShape& shape, size_t elem_bytes, const void* src,
                                void* dst, cudaStream_t stream) {
  if (shape.count == 0) return cudaSuccess;
  const unsigned grid = grid_for(shape.count);
  switch (elem_bytes) {
    case 1:
      strided_copy_kernel<<<grid, kBlock, 0, stream>>>(shape, static_cast<const uint8_t*>(src),
                                                       static_cast<uint8_t*>(dst));
      break;
    case 2:
      strided_copy_kernel<<<grid, kBlock, 0, stream>>>(shape, static_cast<const uint16_t*>(src),
                                                       static_cast<uint16_t*>(dst));
      break;
    case 4:
      strided_copy_kernel<<<grid, kBlock, 0, stream>>>(shape, static_cast<const uint32_t*>(src),
                                                       static_cast<uint32_t*>(dst));
      break;
    case 8:
      strided_copy_kernel<<<grid, kBlock, 0, stream>>>(shape, static_cast<const uint64_t*>(src),
                                                       static_cast<uint64_t*>(dst));
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_fill(void* dst, size_t elem_bytes, uint64_t bits, int64_t count,
                        cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  switch (elem_bytes) {
    case 1:
      fill_kernel<<<grid, kBlock, 0, stream>>>(static_cast<uint8_t*>(dst), bits_as<uint8_t>(bits),
                                               count);
      break;
    case 2:
      fill_kernel<<<grid, kBlock, 0, stream>>>(static_cast<uint16_t*>(dst), bits_as<uint16_t>(bits),
                                               count);
      break;
    case 4:
      fill_kernel<<<grid, kBlock, 0, stream>>>(static_cast<uint32_t*>(dst), bits_as<uint32_t>(bits),
                                               count);
      break;
    case 8:
      fill_kernel<<<grid, kBlock, 0, stream>>>(static_cast<uint64_t*>(dst), bits, count);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_pad(const PadParams& params, size_t elem_bytes, const void* src, void* dst,
                       cudaStream_t stream) {
  if (params.count == 0) return cudaSuccess;
  const unsigned grid = grid_for(params.count);
  switch (elem_bytes) {
    case 1:
      pad_kernel<<<grid, kBlock, 0, stream>>>(params, static_cast<const uint8_t*>(src),
                                              static_cast<uint8_t*>(dst),
                                              bits_as<uint8_t>(params.value_bits));
      break;
    case 4:
      pad_kernel<<<grid, kBlock, 0, stream>>>(params, static_cast<const uint32_t*>(src),
                                              static_cast<uint32_t*>(dst),
                                              bits_as<uint32_t>(params.value_bits));
      break;
    case 8:
      pad_kernel<<<grid, kBlock, 0, stream>>>(params, static_cast<const uint64_t*>(src),
                                              static_cast<uint64_t*>(dst), params.value_bits);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_gather(const GatherParams& params, size_t elem_bytes, const void* data,
                          const void* indices, void* out, cudaStream_t stream) {
  const int64_t count = params.outer * params.index_count * params.inner;
  if (count == 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  switch (elem_bytes) {
    case 1:
      gather_kernel<<<grid, kBlock, 0, stream>>>(params, static_cast<const uint8_t*>(data), indices,
                                                 static_cast<uint8_t*>(out));
      break;
    case 4:
      gather_kernel<<<grid, kBlock, 0, stream>>>(params, static_cast<const uint32_t*>(data),
                                                 indices, static_cast<uint32_t*>(out));
      break;
    case 8:
      gather_kernel<<<grid, kBlock, 0, stream>>>(params, static_cast<const uint64_t*>(data),
                                                 indices, static_cast<uint64_t*>(out));
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_resize(const ResizeParams& params, const float* x, float* y,
                          cudaStream_t stream) {
  const int64_t count = params.planes * params.out_h * params.out_w;
  if (count == 0) return cudaSuccess;
  resize_kernel<<<grid_for(count), kBlock, 0, stream>>>(params, x, y);
  return cudaGetLastError();
}

cudaError_t launch_batch_norm(const float* x, const float* scale, const float* bias,
                              const float* mean, const float* var, float epsilon, int64_t outer,
                              int64_t channels, int64_t inner, float* y, cudaStream_t stream) {
  const int64_t count = outer * channels * inner;
  if (count == 0) return cudaSuccess;
  batch_norm_kernel<<<grid_for(count), kBlock, 0, stream>>>(x, scale, bias, mean, var, epsilon,
                                                            count, channels, inner, y);
  return cudaGetLastError();
}

}  // namespace onepool::cuda
