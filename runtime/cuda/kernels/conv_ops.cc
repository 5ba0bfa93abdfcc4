// Node preparation for Conv and ConvTranspose (1-D / 2-D):
//   - depthwise (group == C == M): one direct kernel with bias and activation fused;
//   - 1x1, stride 1, no pad, group 1: one strided-batched GEMM over the images, no im2col;
//   - otherwise: per image and group, im2col into the planned workspace + one SGEMM;
//   - ConvTranspose: per image and group, SGEMM into columns + col2im.
// Bias and the fused activation are one epilogue kernel over the output.
// Conv takes float32, and float16 / bfloat16 natively (every operand and Y of one type): im2col
// moves half bits, cublasGemmEx multiplies the half operands into a float32 slice of the
// workspace (CUBLAS_COMPUTE_32F), and the epilogue adds the widened bias, applies the activation
// and rounds each output once, as the CPU's float32 kernel on widened copies does; the depthwise
// kernel has a half variant with the same single rounding. ConvTranspose is float32 only (a half
// node runs through runtime/cuda/half_compute.h).
// Workspace layout: [cuBLAS workspace][columns][half Conv: float32 GEMM output], each 256-byte
// aligned.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "planner/core/onepool_ops.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/gemm.h"
#include "runtime/cuda/kernels/ops_util.h"
#include "runtime/cuda/kernels/window.h"

namespace onepool::cuda {

namespace {

// The element type of a conv node: float32, or float16 / bfloat16 on X, W, B and Y.
struct ConvType {
  bool half = false;
  ElemType elem = ElemType::kFloat32;
  cudaDataType_t cuda = CUDA_R_32F;
  size_t bytes = sizeof(float);
};

// Everything a conv needs at enqueue time, computed once.
struct ConvPlan {
  ConvGeometry geometry;  // one group of one image
  GemmCall gemm;
  UnaryParams activation;
  ConvType type;
  int64_t batch = 0, groups = 1;
  int64_t in_group_elems = 0;   // elements of one group of one input image
  int64_t out_group_elems = 0;  // elements of one group of one output image
  int64_t weight_group_elems = 0;
  int64_t out_channels = 0, out_spatial = 0;
  size_t cublas_bytes = 0;
  size_t columns_offset = 0;  // workspace bytes: im2col / col2im columns
  size_t acc_offset = 0;      // workspace bytes: a half Conv's float32 GEMM output
  bool depthwise = false, direct_gemm = false;
  bool residual = false;  // input 3: a fused Add's other input (planner/optimize/fuse_residual.cc)
};

// X, W (and B) present with Y, of equal rank; their dtype: float32, or with `allow_half`
// float16 / bfloat16 on every operand and Y alike.
Expected<ConvType> check_conv_inputs(const CudaNodeContext& node, bool allow_half) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected X, W and Y");
  }
  const DType dtype = node.input(0).dtype;
  ConvType type;
  if (allow_half && dtype == DType::kFloat16) {
    type = ConvType{true, ElemType::kFloat16, CUDA_R_16F, 2};
  } else if (allow_half && dtype == DType::kBFloat16) {
    type = ConvType{true, ElemType::kBFloat16, CUDA_R_16BF, 2};
  } else if (dtype != DType::kFloat32) {
    return node.unsupported(allow_half ? "dtype (float32, float16, bfloat16)"
                                       : "dtype (float32 only)");
  }
  for (size_t i = 1; i < 3; ++i) {
    if (node.has_input(i) && node.input(i).dtype != dtype) {
      return node.unsupported("operands of different dtypes");
    }
  }
  if (node.output(0).dtype != dtype) return node.unsupported("output dtype differs from X's");
  if (node.input(1).shape.rank() != node.input(0).shape.rank()) {
    return node.error(StatusCode::kInvalidModel, "W and X differ in rank");
  }
  return type;
}

// Appends a 256-byte aligned slice of `elems` elements of `elem_bytes` to the workspace `total`,
// at `offset`; false when the sizes overflow.
bool add_slice(int64_t elems, size_t elem_bytes, size_t& total, size_t& offset) {
  size_t bytes = 0;
  if (elems < 0 || __builtin_mul_overflow(static_cast<size_t>(elems), elem_bytes, &bytes) ||
      bytes > SIZE_MAX - 255) {
    return false;
  }
  offset = total;
  return !__builtin_add_overflow(total, align_256(bytes), &total);
}

// a * b * c, false on overflow.
bool checked_product(int64_t a, int64_t b, int64_t c, int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out) && !__builtin_mul_overflow(out, c, &out);
}

ConvGeometry geometry_of(const Window2d& w, int64_t channels) {
  ConvGeometry g;
  g.channels = channels;
  g.in_h = w.in_h;
  g.in_w = w.in_w;
  g.out_h = w.out_h;
  g.out_w = w.out_w;
  g.k_h = w.k_h;
  g.k_w = w.k_w;
  g.s_h = w.s_h;
  g.s_w = w.s_w;
  g.p_h = w.p_h;
  g.p_w = w.p_w;
  g.d_h = w.d_h;
  g.d_w = w.d_w;
  return g;
}

// A half Conv: im2col on half bits, GEMMs with half operands into the float32 slice `acc` (the
// whole output), then one epilogue that adds the bias, applies the activation and rounds once.
Status enqueue_half_conv(const ConvPlan& p, const CudaRunContext& c) {
  const auto* x = static_cast<const std::byte*>(c.inputs[0].data);
  const auto* w = static_cast<const std::byte*>(c.inputs[1].data);
  const void* bias = c.inputs.size() > 2 ? c.inputs[2].data : nullptr;
  void* y = c.outputs[0].data;
  const auto bytes = static_cast<int64_t>(p.type.bytes);
  if (p.depthwise) {
    return ONEPOOL_CUDA_STATUS(launch_depthwise_conv_half(p.geometry, p.batch, p.type.elem, x, w,
                                                          bias, p.activation, y, c.stream));
  }
  auto* acc = reinterpret_cast<float*>(c.workspace + p.acc_offset);
  if (p.direct_gemm) {
    ONEPOOL_RETURN_IF_ERROR(run_gemm_mixed(c, p.gemm, p.type.cuda, w, x, acc, p.cublas_bytes));
  } else {
    std::byte* col = c.workspace + p.columns_offset;
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t g = 0; g < p.groups; ++g) {
        const int64_t image = n * p.groups + g;
        ONEPOOL_LAUNCH_RETURN_IF_ERROR(
            launch_im2col_half(p.geometry, x + image * p.in_group_elems * bytes, col, c.stream));
        ONEPOOL_RETURN_IF_ERROR(run_gemm_mixed(c, p.gemm, p.type.cuda,
                                               w + g * p.weight_group_elems * bytes, col,
                                               acc + image * p.out_group_elems, p.cublas_bytes));
      }
    }
  }
  return ONEPOOL_CUDA_STATUS(launch_bias_activation_half(
      acc, bias, p.type.elem, p.batch, p.out_channels, p.out_spatial, p.activation, y, c.stream));
}

Status enqueue_conv(const ConvPlan& p, const CudaRunContext& c) {
  if (p.type.half) return enqueue_half_conv(p, c);
  const auto* x = static_cast<const float*>(c.inputs[0].data);
  const auto* w = static_cast<const float*>(c.inputs[1].data);
  const auto* bias = c.inputs.size() > 2 ? static_cast<const float*>(c.inputs[2].data) : nullptr;
  const auto* residual = p.residual ? static_cast<const float*>(c.inputs[3].data) : nullptr;
  auto* y = static_cast<float*>(c.outputs[0].data);
  if (p.depthwise) {
    return ONEPOOL_CUDA_STATUS(
        launch_depthwise_conv(p.geometry, p.batch, x, w, bias, p.activation, y, c.stream));
  }
  if (p.direct_gemm) {
    ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.gemm, w, x, y, p.cublas_bytes));
  } else {
    auto* col = reinterpret_cast<float*>(c.workspace + p.columns_offset);
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t g = 0; g < p.groups; ++g) {
        const int64_t image = n * p.groups + g;
        ONEPOOL_LAUNCH_RETURN_IF_ERROR(
            launch_im2col(p.geometry, x + image * p.in_group_elems, col, c.stream));
        ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.gemm, w + g * p.weight_group_elems, col,
                                         y + image * p.out_group_elems, p.cublas_bytes));
      }
    }
  }
  return ONEPOOL_CUDA_STATUS(launch_bias_activation(y, bias, p.batch, p.out_channels, p.out_spatial,
                                                    p.activation, c.stream, residual));
}

// The fused residual input (index 3) when there is one: only a float32, non-depthwise Conv takes
// it (the optimizer fuses no other), with the output's exact shape.
Status check_residual(const CudaNodeContext& node, const ConvPlan& p) {
  if (!node.has_input(3)) return Status::ok();
  if (p.type.half || p.depthwise || node.input(3).dtype != DType::kFloat32) {
    return node.unsupported("a fused residual input on a half or depthwise Conv");
  }
  if (node.input(3).shape != node.output(0).shape) {
    return node.error(StatusCode::kInvalidModel, "residual input '", node.input(3).name,
                      "': expected the output's shape ", node.output(0).shape.to_string(), ", got ",
                      node.input(3).shape.to_string());
  }
  return Status::ok();
}

}  // namespace

Expected<CudaPreparedKernel> make_conv_kernel(const CudaNodeContext& node) {
  ConvPlan p;
  ONEPOOL_ASSIGN_OR_RETURN(p.type, check_conv_inputs(node, true));
  const Shape& x = node.input(0).shape;
  const Shape& wshape = node.input(1).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const Window2d window, read_window(node, &wshape, false));
  ONEPOOL_ASSIGN_OR_RETURN(p.activation, parse_activation(node.node().attributes));
  p.batch = x[0];
  p.groups = node.node().attributes.get_int("group", 1);
  const int64_t channels = x[1];
  p.out_channels = wshape[0];
  if (p.groups < 1 || channels % p.groups != 0 || p.out_channels % p.groups != 0 ||
      wshape[1] != channels / p.groups) {
    return node.error(StatusCode::kInvalidModel, "group ", p.groups, " does not divide C ",
                      channels, " and M ", p.out_channels, " (W ", wshape.to_string(), ")");
  }
  const int64_t cg = channels / p.groups;
  const int64_t mg = p.out_channels / p.groups;
  const int64_t kernel_elems = int64_t{window.k_h} * window.k_w;
  p.out_spatial = window.out_h * window.out_w;
  p.in_group_elems = cg * window.in_h * window.in_w;
  p.out_group_elems = mg * p.out_spatial;
  p.weight_group_elems = mg * cg * kernel_elems;
  p.geometry = geometry_of(window, cg);
  p.depthwise = p.groups == channels && p.out_channels == channels && p.groups > 1;
  ONEPOOL_RETURN_IF_ERROR(check_residual(node, p));
  p.residual = node.has_input(3);
  if (p.depthwise) {
    p.geometry = geometry_of(window, channels);  // the depthwise kernel walks every channel
    return make_kernel([p](const CudaRunContext& c) { return enqueue_conv(p, c); });
  }
  p.cublas_bytes = align_256(node.options().cublas_workspace_bytes);
  p.direct_gemm = p.groups == 1 && kernel_elems == 1 && window.s_h == 1 && window.s_w == 1 &&
                  window.p_h == 0 && window.p_w == 0 && window.end_h == 0 && window.end_w == 0 &&
                  window.out_h == window.in_h && window.out_w == window.in_w;
  size_t workspace = p.cublas_bytes;
  int64_t columns = 0, acc = 0;
  bool fits = checked_product(cg, kernel_elems, p.out_spatial, columns) &&
              checked_product(p.batch, p.out_channels, p.out_spatial, acc);
  if (p.direct_gemm) {
    // Y_n[M, S] = W[M, C] · X_n[C, S] for every image n.
    ONEPOOL_ASSIGN_OR_RETURN(
        p.gemm, row_major_gemm(p.out_channels, p.out_spatial, channels, false, false, p.batch, 0,
                               channels * p.out_spatial, p.out_channels * p.out_spatial));
  } else {
    // Y_{n,g}[Mg, S] = W_g[Mg, Cg·k] · col[Cg·k, S].
    ONEPOOL_ASSIGN_OR_RETURN(
        p.gemm, row_major_gemm(mg, p.out_spatial, cg * kernel_elems, false, false, 1, 0, 0, 0));
    fits = fits && add_slice(columns, p.type.bytes, workspace, p.columns_offset);
  }
  // A half Conv's GEMMs write float32 (the whole output) for the epilogue to round once.
  if (p.type.half) fits = fits && add_slice(acc, sizeof(float), workspace, p.acc_offset);
  if (!fits) {
    return node.error(StatusCode::kOutOfRange, "workspace for X ", x.to_string(), ", W ",
                      wshape.to_string(), " and output ", window.out_h, "x", window.out_w,
                      " overflows");
  }
  return make_kernel([p](const CudaRunContext& c) { return enqueue_conv(p, c); }, workspace);
}

namespace {

// PointwiseDepthwiseConv (planner/optimize/fuse_pointwise_depthwise.cc): the 1x1 product as one
// strided-batched GEMM over the images into the workspace, its bias and activation there, then
// the depthwise kernel from it, into Y or (with a projection) into a second workspace slice
// that the projection's GEMM reads into Y, followed by its bias, residual and activation. The
// CPU's gain (the intermediate tensors never leave the caches) has no counterpart here; the node
// runs as the unfused Convs did.
struct PointwiseDepthwisePlan {
  GemmCall expand, project;
  ConvGeometry depthwise;
  UnaryParams pointwise_activation, depthwise_activation, project_activation;
  int64_t batch = 0, channels = 0, spatial = 0;
  int64_t projected = 0, out_spatial = 0;  // (projection) its channels; Y's spatial size
  bool has_expand = false, has_projection = false, residual = false;
  size_t cublas_bytes = 0;
  size_t expanded_offset = 0;   // workspace bytes: the expanded tensor
  size_t depthwise_offset = 0;  // workspace bytes: (projection) the depthwise output
};

const float* optional_data(const CudaRunContext& c, size_t i) {
  return i < c.inputs.size() ? static_cast<const float*>(c.inputs[i].data) : nullptr;
}

Status enqueue_pointwise_depthwise(const PointwiseDepthwisePlan& p, const CudaRunContext& c) {
  const auto* x = static_cast<const float*>(c.inputs[0].data);
  const auto* w1 = optional_data(c, 1);
  const auto* w2 = static_cast<const float*>(c.inputs[3].data);
  auto* y = static_cast<float*>(c.outputs[0].data);
  const float* expanded = x;  // without an expansion the depthwise window reads X
  if (p.has_expand) {
    auto* out = reinterpret_cast<float*>(c.workspace + p.expanded_offset);
    ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.expand, w1, x, out, p.cublas_bytes));
    ONEPOOL_RETURN_IF_ERROR(
        ONEPOOL_CUDA_STATUS(launch_bias_activation(out, optional_data(c, 2), p.batch, p.channels,
                                                   p.spatial, p.pointwise_activation, c.stream)));
    expanded = out;
  }
  auto* depthwise =
      p.has_projection ? reinterpret_cast<float*>(c.workspace + p.depthwise_offset) : y;
  ONEPOOL_RETURN_IF_ERROR(ONEPOOL_CUDA_STATUS(
      launch_depthwise_conv(p.depthwise, p.batch, expanded, w2, optional_data(c, 4),
                            p.depthwise_activation, depthwise, c.stream)));
  if (!p.has_projection) return Status::ok();
  const auto* w3 = static_cast<const float*>(c.inputs[5].data);
  ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.project, w3, depthwise, y, p.cublas_bytes));
  return ONEPOOL_CUDA_STATUS(launch_bias_activation(y, optional_data(c, 6), p.batch, p.projected,
                                                    p.out_spatial, p.project_activation, c.stream,
                                                    p.residual ? optional_data(c, 7) : nullptr));
}

// A 1x1 weight (input i) [out, in_channels, 1, 1] and its bias (input i + 1) [out] or none;
// returns out, or -1 when they do not fit.
int64_t pointwise_out_channels(const CudaNodeContext& node, size_t i, int64_t in_channels) {
  const Shape& w = node.input(i).shape;
  if (w.rank() != 4 || w[1] != in_channels || w[2] != 1 || w[3] != 1) return -1;
  if (node.has_input(i + 1) && node.input(i + 1).shape != Shape{w[0]}) return -1;
  return w[0];
}

// X [N, C, H, W], W1 [M, C, 1, 1], B1 [M] or none, W2 [M, 1, kH, kW] (group M, kernel_shape
// as W2's), B2 [M] or none, and with a projection W3 [P, M, 1, 1], B3 [P] or none and a residual
// of Y's shape or none; Y [N, P or M, OH, OW]; all float32. Without W1 (nor B1) X has the M
// channels, and W3 is required.
Status check_pointwise_depthwise(const CudaNodeContext& node) {
  for (size_t i = 0; i < 8; ++i) {
    const bool required = i == 0 || i == 3;
    if (!required && !node.has_input(i)) continue;
    if (!node.has_input(i) || node.input(i).dtype != DType::kFloat32) {
      return node.unsupported("dtype (float32 only; X and W2 required)");
    }
  }
  const Shape& x = node.input(0).shape;
  const Shape& w2 = node.input(3).shape;
  const Shape& y = node.output(0).shape;
  const bool expand = node.has_input(1);
  const bool projection = node.has_input(5);
  const int64_t m = x.rank() != 4                      ? -1
                    : expand                           ? pointwise_out_channels(node, 1, x[1])
                    : node.has_input(2) || !projection ? -1
                                                       : x[1];
  const int64_t out = projection ? pointwise_out_channels(node, 5, m) : m;
  const AttributeMap& attributes = node.node().attributes;
  const bool window_fits =
      w2.rank() == 4 && w2[0] == m && w2[1] == 1 && attributes.get_int("group", 1) == m &&
      attributes.get_ints("kernel_shape", {w2[2], w2[3]}) == std::vector<int64_t>{w2[2], w2[3]} &&
      (!node.has_input(4) || node.input(4).shape == Shape{m});
  const bool residual_fits = !node.has_input(7) || (projection && node.input(7).shape == y);
  if (m < 1 || out < 1 || !window_fits || !residual_fits || y.rank() != 4 || y[0] != x[0] ||
      y[1] != out) {
    return node.error(StatusCode::kInvalidModel, "X ", x.to_string(), ", W2 ", w2.to_string(),
                      ", Y ", y.to_string(), ": expected X [N, C, H, W], W1 [M, C, 1, 1] (or ",
                      "none, then a projection) and B1 [M], W2 [M, 1, kH, kW] with group M and ",
                      "its kernel_shape, B2 [M], a projection [P, M, 1, 1] and B3 [P], a ",
                      "residual of Y's shape, Y [N, P or M, OH, OW]");
  }
  return Status::ok();
}

// The projection's GEMM and the depthwise output's workspace slice.
Status plan_projection(const CudaNodeContext& node, PointwiseDepthwisePlan& p, size_t& workspace) {
  p.has_projection = node.has_input(5);
  if (!p.has_projection) return Status::ok();
  p.residual = node.has_input(7);
  p.projected = node.input(5).shape[0];
  p.out_spatial = p.depthwise.out_h * p.depthwise.out_w;
  ONEPOOL_ASSIGN_OR_RETURN(p.project_activation,
                           parse_activation(node.node().attributes, "onepool_project_"));
  // Y_n[P, S'] = W3[P, M] · D_n[M, S'] for every image n.
  ONEPOOL_ASSIGN_OR_RETURN(
      p.project, row_major_gemm(p.projected, p.out_spatial, p.channels, false, false, p.batch, 0,
                                p.channels * p.out_spatial, p.projected * p.out_spatial));
  int64_t depthwise = 0;
  if (!checked_product(p.batch, p.channels, p.out_spatial, depthwise) ||
      !add_slice(depthwise, sizeof(float), workspace, p.depthwise_offset)) {
    return node.error(StatusCode::kOutOfRange, "depthwise output of ", p.channels,
                      " channels overflows");
  }
  return Status::ok();
}

Expected<CudaPreparedKernel> make_pointwise_depthwise_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_pointwise_depthwise(node));
  const Shape& x = node.input(0).shape;
  PointwiseDepthwisePlan p;
  p.batch = x[0];
  p.has_expand = node.has_input(1);
  p.channels = p.has_expand ? node.input(1).shape[0] : x[1];
  p.spatial = x[2] * x[3];
  // The depthwise window over the expanded tensor, whose spatial dims are X's; Y is the
  // projection's output when there is one, of the depthwise output's spatial dims.
  const Shape& w2 = node.input(3).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const Window2d window, read_window(node, &w2, false));
  p.depthwise = geometry_of(window, p.channels);
  const AttributeMap& attributes = node.node().attributes;
  ONEPOOL_ASSIGN_OR_RETURN(p.pointwise_activation,
                           parse_activation(attributes, "onepool_pointwise_"));
  ONEPOOL_ASSIGN_OR_RETURN(p.depthwise_activation, parse_activation(attributes));
  p.cublas_bytes = align_256(node.options().cublas_workspace_bytes);
  size_t workspace = p.cublas_bytes;
  if (p.has_expand) {
    // E_n[M, S] = W1[M, C] · X_n[C, S] for every image n.
    ONEPOOL_ASSIGN_OR_RETURN(p.expand,
                             row_major_gemm(p.channels, p.spatial, x[1], false, false, p.batch, 0,
                                            x[1] * p.spatial, p.channels * p.spatial));
    int64_t expanded = 0;
    if (!checked_product(p.batch, p.channels, p.spatial, expanded) ||
        !add_slice(expanded, sizeof(float), workspace, p.expanded_offset)) {
      return node.error(StatusCode::kOutOfRange, "expanded tensor of X ", x.to_string(), " and ",
                        p.channels, " channels overflows");
    }
  }
  ONEPOOL_RETURN_IF_ERROR(plan_projection(node, p, workspace));
  return make_kernel([p](const CudaRunContext& c) { return enqueue_pointwise_depthwise(p, c); },
                     workspace);
}

Status enqueue_conv_transpose(const ConvPlan& p, const CudaRunContext& c) {
  const auto* x = static_cast<const float*>(c.inputs[0].data);
  const auto* w = static_cast<const float*>(c.inputs[1].data);
  const auto* bias = c.inputs.size() > 2 ? static_cast<const float*>(c.inputs[2].data) : nullptr;
  auto* y = static_cast<float*>(c.outputs[0].data);
  auto* col = reinterpret_cast<float*>(c.workspace + p.columns_offset);
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t image = n * p.groups + g;
      ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.gemm, w + g * p.weight_group_elems,
                                       x + image * p.in_group_elems, col, p.cublas_bytes));
      ONEPOOL_LAUNCH_RETURN_IF_ERROR(
          launch_col2im(p.geometry, col, y + image * p.out_group_elems, c.stream));
    }
  }
  return ONEPOOL_CUDA_STATUS(launch_bias_activation(y, bias, p.batch, p.out_channels, p.out_spatial,
                                                    p.activation, c.stream));
}

}  // namespace

// ConvTranspose: W is [C, M/g, k...]; per image and group col[Mg·k, S_in] = W_gᵀ · X_g, then
// col2im scatters (as a gather) the columns into the output image.
Expected<CudaPreparedKernel> make_conv_transpose_kernel(const CudaNodeContext& node) {
  ConvPlan p;
  ONEPOOL_ASSIGN_OR_RETURN(p.type, check_conv_inputs(node, false));
  const Shape& x = node.input(0).shape;
  const Shape& wshape = node.input(1).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const Window2d window, read_window(node, &wshape, true));
  ONEPOOL_ASSIGN_OR_RETURN(p.activation, parse_activation(node.node().attributes));
  p.batch = x[0];
  p.groups = node.node().attributes.get_int("group", 1);
  const int64_t channels = x[1];
  if (p.groups < 1 || channels % p.groups != 0 || wshape[0] != channels) {
    return node.error(StatusCode::kInvalidModel, "group ", p.groups, " does not fit C ", channels,
                      " and W ", wshape.to_string());
  }
  const int64_t cg = channels / p.groups;
  const int64_t mg = wshape[1];
  p.out_channels = mg * p.groups;
  const int64_t kernel_elems = int64_t{window.k_h} * window.k_w;
  const int64_t in_spatial = window.in_h * window.in_w;
  p.out_spatial = window.out_h * window.out_w;
  p.in_group_elems = cg * in_spatial;
  p.out_group_elems = mg * p.out_spatial;
  p.weight_group_elems = cg * mg * kernel_elems;
  // col2im's image is the ConvTranspose output and its "output" grid the input.
  Window2d adjoint = window;
  adjoint.in_h = window.out_h;
  adjoint.in_w = window.out_w;
  adjoint.out_h = window.in_h;
  adjoint.out_w = window.in_w;
  p.geometry = geometry_of(adjoint, mg);
  p.cublas_bytes = align_256(node.options().cublas_workspace_bytes);
  // col[Mg·k, S_in] = W_g[Cg, Mg·k]ᵀ · X_g[Cg, S_in].
  ONEPOOL_ASSIGN_OR_RETURN(
      p.gemm, row_major_gemm(mg * kernel_elems, in_spatial, cg, true, false, 1, 0, 0, 0));
  size_t workspace = p.cublas_bytes;
  int64_t columns = 0;
  if (!checked_product(mg, kernel_elems, in_spatial, columns) ||
      !add_slice(columns, sizeof(float), workspace, p.columns_offset)) {
    return node.error(StatusCode::kOutOfRange, "workspace for X ", x.to_string(), ", W ",
                      wshape.to_string(), " overflows");
  }
  return make_kernel([p](const CudaRunContext& c) { return enqueue_conv_transpose(p, c); },
                     workspace);
}

void register_conv_pool_kernels(CudaKernelRegistry& registry) {
  registry.add("MaxPool", &make_pool_kernel);
  registry.add("AveragePool", &make_pool_kernel);
  registry.add("GlobalAveragePool", &make_global_pool_kernel);
  registry.add("GlobalMaxPool", &make_global_pool_kernel);
  registry.add("Conv", &make_conv_kernel);
  registry.add("ConvTranspose", &make_conv_transpose_kernel);
  registry.add(kernel_key(kOnePoolDomain, kPointwiseDepthwiseOp), &make_pointwise_depthwise_kernel);
}

}  // namespace onepool::cuda
