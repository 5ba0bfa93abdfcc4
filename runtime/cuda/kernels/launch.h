// The device-code contract: plain parameter structs and one launcher per kernel family.
//
// Every launcher enqueues on `stream`, allocates nothing, and returns cudaGetLastError() after
// its launch (so a bad configuration is reported at the node that caused it). Parameters are
// prepared once per node on the host (runtime/cuda/kernels/*_ops.cc); the .cu files include only
// this header, which keeps nvcc's work (and the CI compile time) small.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace onepool::cuda {

constexpr int kMaxDims = 8;

/// Element types the device kernels know. The half types (bits in uint16_t) are read and written
/// by Cast, the binary and unary ops, the GEMMs and Conv (float32 math, the narrow type in
/// memory); other float kernels see them as float32 through runtime/cuda/half_compute.h.
enum class ElemType : int32_t {
  kFloat32 = 0,
  kInt64 = 1,
  kBool = 2,
  kInt32 = 3,
  kFloat16 = 4,
  kBFloat16 = 5
};

// --- elementwise.cu --------------------------------------------------------------------------

/// Output dims (collapsed where every operand is contiguous) and each operand's element strides
/// (0 along a broadcast dim). Operand 0..2: a, b, c (Where: condition, x, y).
struct BroadcastShape {
  int rank = 0;
  int64_t count = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[3][kMaxDims] = {};
};

enum class BinaryOp : int32_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kPRelu,
  kMod,   // ONNX Mod, fmod = 0: integers only, the remainder takes the divisor's sign
  kFmod,  // ONNX Mod, fmod = 1: the remainder takes the dividend's sign (C fmod / %)
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,  // comparisons: bool output
  kAnd,
  kOr,
  kXor,  // bool inputs and output
};

enum class UnaryOp : int32_t {
  kIdentity,
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kNeg,
  kAbs,
  kErf,
  kLeakyRelu,
  kHardSigmoid,
  kHardSwish,
  kHardSigmoidMul,
  kClip,
  kReciprocal,
  kFloor,
  kCeil,
  kSoftplus,
  kElu,
  kSin,
  kCos,
  kRound,
  kSign,
  kSelu,
  kScale,
  kGelu,
  kGeluTanh,
};

/// A unary op with its parameters (LeakyRelu/Elu alpha; HardSigmoid alpha, beta; Clip min =
/// alpha, max = beta; Selu alpha, gamma = beta; Scale multiplies by alpha; Gelu is approximate
/// "none", GeluTanh approximate "tanh").
struct UnaryParams {
  UnaryOp op = UnaryOp::kIdentity;
  float alpha = 0.0f;
  float beta = 0.0f;
};

cudaError_t launch_binary(BinaryOp op, ElemType type, const BroadcastShape& shape, const void* a,
                          const void* b, void* out, cudaStream_t stream);
/// out = cond ? x : y; elements of `elem_bytes` (1, 2, 4 or 8; see where_elem_bytes_ok).
constexpr bool where_elem_bytes_ok(size_t elem_bytes) {
  return elem_bytes == 1 || elem_bytes == 2 || elem_bytes == 4 || elem_bytes == 8;
}
cudaError_t launch_where(const BroadcastShape& shape, size_t elem_bytes, const bool* cond,
                         const void* x, const void* y, void* out, cudaStream_t stream);
cudaError_t launch_unary_float(const UnaryParams& op, const float* x, float* y, int64_t count,
                               cudaStream_t stream);
/// The float unary ops on float16 / bfloat16 (`type`) bits: float32 math, one rounding.
cudaError_t launch_unary_half(const UnaryParams& op, ElemType type, const void* x, void* y,
                              int64_t count, cudaStream_t stream);
/// int64 Relu, Neg, Abs, Sign, Identity; bool Not when type is kBool (op ignored).
cudaError_t launch_unary_int(UnaryOp op, ElemType type, const void* x, void* y, int64_t count,
                             cudaStream_t stream);
cudaError_t launch_cast(ElemType from, ElemType to, const void* x, void* y, int64_t count,
                        cudaStream_t stream);
/// y[o, c, i] = act(y[o, c, i] + bias[c] + residual[o, c, i]) over [outer, channels, inner],
/// rounded after each addition; bias and residual (a fused Add's other input) may be null.
cudaError_t launch_bias_activation(float* y, const float* bias, int64_t outer, int64_t channels,
                                   int64_t inner, const UnaryParams& act, cudaStream_t stream,
                                   const float* residual = nullptr);

// --- tensor.cu -------------------------------------------------------------------------------

/// dst[Σ i_d * dst_strides[d]] = src[Σ i_d * src_strides[d]] over the index space `dims`.
struct CopyShape {
  int rank = 0;
  int64_t count = 0;
  int64_t dims[kMaxDims] = {};
  int64_t src_strides[kMaxDims] = {};
  int64_t dst_strides[kMaxDims] = {};
};
cudaError_t launch_strided_copy(const CopyShape& shape, size_t elem_bytes, const void* src,
                                void* dst, cudaStream_t stream);
/// Fills `count` elements of `elem_bytes` with the low bytes of `bits`.
cudaError_t launch_fill(void* dst, size_t elem_bytes, uint64_t bits, int64_t count,
                        cudaStream_t stream);

enum class PadMode : int32_t { kConstant = 0, kReflect = 1, kEdge = 2 };
struct PadParams {
  int rank = 0;
  int64_t count = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t in_dims[kMaxDims] = {};
  int64_t pads_begin[kMaxDims] = {};
  PadMode mode = PadMode::kConstant;
  uint64_t value_bits = 0;
};
cudaError_t launch_pad(const PadParams& params, size_t elem_bytes, const void* src, void* dst,
                       cudaStream_t stream);

/// out[o, j, i] = data[o, index[j], i]: data [outer, axis_dim, inner], index_count indices.
struct GatherParams {
  int64_t outer = 0;
  int64_t axis_dim = 0;
  int64_t index_count = 0;
  int64_t inner = 0;
  bool index_is_int64 = true;
};
cudaError_t launch_gather(const GatherParams& params, size_t elem_bytes, const void* data,
                          const void* indices, void* out, cudaStream_t stream);

enum class ResizeCoord : int32_t { kHalfPixel, kAsymmetric, kAlignCorners, kPytorchHalfPixel };
/// kSimple (Resize-10, Upsample): ceil when downscaling, floor otherwise.
enum class ResizeNearest : int32_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
/// Resize of the last two dims of [planes, in_h, in_w] → [planes, out_h, out_w].
struct ResizeParams {
  int64_t planes = 0;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  float scale_h = 1.0f, scale_w = 1.0f;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  bool linear = false;
};
cudaError_t launch_resize(const ResizeParams& params, const float* x, float* y,
                          cudaStream_t stream);

/// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c] over [outer, channels, inner].
cudaError_t launch_batch_norm(const float* x, const float* scale, const float* bias,
                              const float* mean, const float* var, float epsilon, int64_t outer,
                              int64_t channels, int64_t inner, float* y, cudaStream_t stream);

// --- reduce.cu -------------------------------------------------------------------------------

enum class ReduceOp : int32_t { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL2, kL1 };
/// Each output element o reduces `reduce_count` inputs: base(o) + offset(r), where base walks
/// the kept dims and offset walks the reduced dims (both with input strides).
struct ReduceShape {
  int64_t outputs = 0;
  int64_t reduce_count = 0;
  int out_rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};
  int reduce_rank = 0;
  int64_t reduce_dims[kMaxDims] = {};
  int64_t reduce_strides[kMaxDims] = {};
};
cudaError_t launch_reduce(ReduceOp op, const ReduceShape& shape, const float* x, float* y,
                          cudaStream_t stream);
/// Softmax (or LogSoftmax) over the middle dim of [outer, axis_dim, inner].
cudaError_t launch_softmax(const float* x, float* y, int64_t outer, int64_t axis_dim, int64_t inner,
                           bool log, cudaStream_t stream);
/// LayerNormalization of rows [rows, cols]; scale/bias hold `cols` values (bias may be null).
cudaError_t launch_layer_norm(const float* x, const float* scale, const float* bias, float* y,
                              int64_t rows, int64_t cols, float epsilon, cudaStream_t stream);

// --- pool.cu ---------------------------------------------------------------------------------

/// Max / average pooling of [planes, in_h, in_w] → [planes, out_h, out_w] (1-D: h dims = 1).
struct PoolParams {
  int64_t planes = 0;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int k_h = 1, k_w = 1, s_h = 1, s_w = 1, p_h = 0, p_w = 0, d_h = 1, d_w = 1;
  int end_h = 0, end_w = 0;  ///< end pads (count_include_pad counts cells up to them)
  bool is_max = true;
  bool count_include_pad = false;
};
cudaError_t launch_pool(const PoolParams& params, const float* x, float* y, cudaStream_t stream);

// --- conv.cu ---------------------------------------------------------------------------------

/// One group of one image: `channels` planes of in_h x in_w, kernel k_h x k_w, output
/// out_h x out_w. im2col writes col[channels * k_h * k_w, out_h * out_w]; col2im is its adjoint
/// (sums col into the image; used by ConvTranspose with the roles of in/out swapped).
struct ConvGeometry {
  int64_t channels = 0;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int k_h = 1, k_w = 1, s_h = 1, s_w = 1, p_h = 0, p_w = 0, d_h = 1, d_w = 1;
};
cudaError_t launch_im2col(const ConvGeometry& g, const float* x, float* col, cudaStream_t stream);
cudaError_t launch_col2im(const ConvGeometry& g, const float* col, float* image,
                          cudaStream_t stream);
/// Depthwise conv (group == in channels == out channels) of `batch` images, with bias (may be
/// null) and the fused activation; w is [channels, 1, k_h, k_w].
cudaError_t launch_depthwise_conv(const ConvGeometry& g, int64_t batch, const float* x,
                                  const float* w, const float* bias, const UnaryParams& act,
                                  float* y, cudaStream_t stream);

// Native float16 / bfloat16 Conv (`type`: kFloat16 or kBFloat16; tensors are the type's bits):
// float32 accumulation and one rounding of each output, as the float32 kernels on widened copies.

/// launch_im2col on 2-byte elements (it only moves bits; +0 outside the image).
cudaError_t launch_im2col_half(const ConvGeometry& g, const void* x, void* col,
                               cudaStream_t stream);
/// launch_depthwise_conv on half x, w, bias (may be null) and y: float32 sum, y rounded once.
cudaError_t launch_depthwise_conv_half(const ConvGeometry& g, int64_t batch, ElemType type,
                                       const void* x, const void* w, const void* bias,
                                       const UnaryParams& act, void* y, cudaStream_t stream);
/// y[o, c, i] = round(act(acc[o, c, i] + bias[c])) over [outer, channels, inner]: the float32
/// GEMM result `acc`, the half bias (may be null) widened, the half output `y` rounded once.
cudaError_t launch_bias_activation_half(const float* acc, const void* bias, ElemType type,
                                        int64_t outer, int64_t channels, int64_t inner,
                                        const UnaryParams& act, void* y, cudaStream_t stream);

}  // namespace onepool::cuda
