// MatMul (numpy semantics, batched, broadcast batch dims) and Gemm (transA / transB / alpha /
// beta / C) on cuBLAS with the node's planned workspace, plus the fused activation the optimizer
// may attach. float32, and float16 / bfloat16 natively (cublasGemmEx accumulating in float32);
// a half node with a fused activation takes the float32 path (runtime/cuda/half_compute.h).
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/gemm.h"
#include "runtime/cuda/kernels/ops_util.h"

namespace onepool::cuda {

namespace {

// The element type of a GEMM node: float32, or float16 / bfloat16 on every operand and Y.
struct GemmType {
  bool half = false;
  cudaDataType_t cuda = CUDA_R_32F;
  size_t bytes = sizeof(float);
};

// The type of inputs [0, inputs) present and output 0; they must agree.
Expected<GemmType> gemm_type(const CudaNodeContext& node, size_t inputs) {
  const DType dtype = node.input(0).dtype;
  for (size_t i = 0; i < inputs; ++i) {
    if (node.has_input(i) && node.input(i).dtype != dtype) {
      return node.unsupported("operands of different dtypes");
    }
  }
  if (node.output(0).dtype != dtype) return node.unsupported("output dtype differs from A's");
  if (dtype == DType::kFloat32) return GemmType{};
  if (dtype == DType::kFloat16) return GemmType{true, CUDA_R_16F, 2};
  if (dtype == DType::kBFloat16) return GemmType{true, CUDA_R_16BF, 2};
  return node.unsupported("dtype (float32, float16, bfloat16)");
}

// A MatMul as GEMM calls: one (possibly strided-batched) call, or one call per broadcast batch
// entry with precomputed element offsets when the batch dims broadcast irregularly.
struct MatMulPlan {
  GemmCall gemm;
  GemmType type;
  std::vector<std::pair<int64_t, int64_t>> offsets;  // (a, b) per batch entry; empty: one call
  int64_t out_matrix = 0;                            // M * N
  int64_t out_count = 0;
  UnaryParams activation;
  size_t cublas_bytes = 0;
};

// Batch dims of `shape` (all but the last two) right-aligned to `rank` dims (1 where missing).
std::vector<int64_t> batch_dims(const Shape& shape, int rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  const int own = shape.rank() - 2;
  for (int d = 0; d < own; ++d) dims[static_cast<size_t>(rank - own + d)] = shape[d];
  return dims;
}

// Element offsets of every batch entry of A and B (strides 0 along broadcast dims).
std::vector<std::pair<int64_t, int64_t>> batch_offsets(const std::vector<int64_t>& out,
                                                       const std::vector<int64_t>& a,
                                                       const std::vector<int64_t>& b,
                                                       int64_t a_matrix, int64_t b_matrix) {
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<std::pair<int64_t, int64_t>> offsets;
  offsets.reserve(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, a_off = 0, b_off = 0, a_stride = a_matrix, b_stride = b_matrix;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t index = rest % out[d];
      rest /= out[d];
      if (a[d] != 1) a_off += index * a_stride;
      if (b[d] != 1) b_off += index * b_stride;
      a_stride *= a[d];
      b_stride *= b[d];
    }
    offsets.emplace_back(a_off, b_off);
  }
  return offsets;
}

// Half MatMul: the same calls through run_gemm_half, offsets in 2-byte elements.
Status enqueue_half_matmul(const MatMulPlan& p, const CudaRunContext& c) {
  const auto* a = static_cast<const std::byte*>(c.inputs[0].data);
  const auto* b = static_cast<const std::byte*>(c.inputs[1].data);
  auto* y = static_cast<std::byte*>(c.outputs[0].data);
  constexpr int64_t kBytes = 2;
  if (p.offsets.empty()) return run_gemm_half(c, p.gemm, p.type.cuda, a, b, y, p.cublas_bytes);
  for (size_t i = 0; i < p.offsets.size(); ++i) {
    ONEPOOL_RETURN_IF_ERROR(run_gemm_half(
        c, p.gemm, p.type.cuda, a + p.offsets[i].first * kBytes, b + p.offsets[i].second * kBytes,
        y + static_cast<int64_t>(i) * p.out_matrix * kBytes, p.cublas_bytes));
  }
  return Status::ok();
}

Status enqueue_matmul(const MatMulPlan& p, const CudaRunContext& c) {
  if (p.type.half) return enqueue_half_matmul(p, c);
  const auto* a = static_cast<const float*>(c.inputs[0].data);
  const auto* b = static_cast<const float*>(c.inputs[1].data);
  auto* y = static_cast<float*>(c.outputs[0].data);
  if (p.offsets.empty()) {
    ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.gemm, a, b, y, p.cublas_bytes));
  } else {
    for (size_t i = 0; i < p.offsets.size(); ++i) {
      ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.gemm, a + p.offsets[i].first, b + p.offsets[i].second,
                                       y + static_cast<int64_t>(i) * p.out_matrix, p.cublas_bytes));
    }
  }
  return ONEPOOL_CUDA_STATUS(
      launch_bias_activation(y, nullptr, 1, 1, p.out_count, p.activation, c.stream));
}

}  // namespace

Expected<CudaPreparedKernel> make_matmul_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected A, B and Y");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const GemmType type, gemm_type(node, 2));
  // Step 1. Promote 1-D operands: A [K] is [1, K], B [K] is [K, 1] (same bytes).
  Shape a = node.input(0).shape;
  Shape b = node.input(1).shape;
  if (a.rank() == 1) a = Shape{1, a[0]};
  if (b.rank() == 1) b = Shape{b[0], 1};
  if (a.rank() < 2 || b.rank() < 2) return node.error(StatusCode::kInvalidModel, "rank-0 operand");
  const int64_t m = a[a.rank() - 2], k = a[a.rank() - 1], n = b[b.rank() - 1];
  if (b[b.rank() - 2] != k) {
    return node.error(StatusCode::kInvalidModel, "inner dims differ: A ", a.to_string(), ", B ",
                      b.to_string());
  }
  MatMulPlan p;
  p.type = type;
  ONEPOOL_ASSIGN_OR_RETURN(p.activation, parse_activation(node.node().attributes));
  if (type.half && p.activation.op != UnaryOp::kIdentity) {
    return node.unsupported("a fused activation on half operands (runs in float32)");
  }
  p.cublas_bytes = align_256(node.options().cublas_workspace_bytes);
  p.out_matrix = m * n;
  p.out_count = node.output(0).shape.element_count();
  // Step 2. Pick the call: fold A's batch into M when B has none; strided batches when the
  // batch dims match (or one side has none); per-entry offsets otherwise.
  const int rank = std::max(a.rank(), b.rank()) - 2;
  const std::vector<int64_t> a_batch = batch_dims(a, rank);
  const std::vector<int64_t> b_batch = batch_dims(b, rank);
  std::vector<int64_t> out_batch(static_cast<size_t>(rank));
  int64_t batch = 1, a_count = 1, b_count = 1;
  for (size_t d = 0; d < out_batch.size(); ++d) {
    if (a_batch[d] != b_batch[d] && a_batch[d] != 1 && b_batch[d] != 1) {
      return node.error(StatusCode::kInvalidModel, "batch dims do not broadcast: A ", a.to_string(),
                        ", B ", b.to_string());
    }
    out_batch[d] = std::max(a_batch[d], b_batch[d]);
    batch *= out_batch[d];
    a_count *= a_batch[d];
    b_count *= b_batch[d];
  }
  Expected<GemmCall> call = make_status(StatusCode::kInternal, "unset");
  if (b_count == 1) {
    call = row_major_gemm(batch * m, n, k, false, false, 1, 0, 0, 0);
  } else if (a_batch == b_batch || a_count == 1) {
    call = row_major_gemm(m, n, k, false, false, batch, a_count == 1 ? 0 : m * k, k * n, m * n);
  } else {
    call = row_major_gemm(m, n, k, false, false, 1, 0, 0, 0);
    p.offsets = batch_offsets(out_batch, a_batch, b_batch, m * k, k * n);
  }
  if (!call) return node.error(call.status().code(), call.status().message());
  p.gemm = *call;
  return make_kernel([p = std::move(p)](const CudaRunContext& c) { return enqueue_matmul(p, c); },
                     align_256(node.options().cublas_workspace_bytes));
}

namespace {

struct GemmPlan {
  GemmCall gemm;
  GemmType type;
  bool has_c = false;
  CopyShape c_broadcast;  // C broadcast into Y before the GEMM accumulates onto it
  int64_t out_count = 0;
  UnaryParams activation;
  size_t cublas_bytes = 0;
};

Status enqueue_gemm(const GemmPlan& p, const CudaRunContext& c) {
  if (p.has_c) {
    ONEPOOL_LAUNCH_RETURN_IF_ERROR(launch_strided_copy(
        p.c_broadcast, p.type.bytes, c.inputs[2].data, c.outputs[0].data, c.stream));
  }
  if (p.type.half) {
    return run_gemm_half(c, p.gemm, p.type.cuda, c.inputs[0].data, c.inputs[1].data,
                         c.outputs[0].data, p.cublas_bytes);
  }
  auto* y = static_cast<float*>(c.outputs[0].data);
  ONEPOOL_RETURN_IF_ERROR(run_gemm(c, p.gemm, static_cast<const float*>(c.inputs[0].data),
                                   static_cast<const float*>(c.inputs[1].data), y, p.cublas_bytes));
  return ONEPOOL_CUDA_STATUS(
      launch_bias_activation(y, nullptr, 1, 1, p.out_count, p.activation, c.stream));
}

}  // namespace

Expected<CudaPreparedKernel> make_gemm_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected A, B and Y");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const GemmType type, gemm_type(node, 3));
  const Shape& a = node.input(0).shape;
  const Shape& b = node.input(1).shape;
  const Shape& y = node.output(0).shape;
  if (a.rank() != 2 || b.rank() != 2 || y.rank() != 2) {
    return node.error(StatusCode::kInvalidModel, "A, B and Y must be 2-D");
  }
  const AttributeMap& attributes = node.node().attributes;
  const bool trans_a = attributes.get_int("transA", 0) != 0;
  const bool trans_b = attributes.get_int("transB", 0) != 0;
  const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
  const int64_t n = trans_b ? b[0] : b[1];
  if ((trans_b ? b[1] : b[0]) != k || y[0] != m || y[1] != n) {
    return node.error(StatusCode::kInvalidModel, "shapes do not multiply: A ", a.to_string(),
                      ", B ", b.to_string(), ", Y ", y.to_string());
  }
  GemmPlan p;
  p.type = type;
  ONEPOOL_ASSIGN_OR_RETURN(p.activation, parse_activation(attributes));
  if (type.half && p.activation.op != UnaryOp::kIdentity) {
    return node.unsupported("a fused activation on half operands (runs in float32)");
  }
  ONEPOOL_ASSIGN_OR_RETURN(p.gemm, row_major_gemm(m, n, k, trans_a, trans_b, 1, 0, 0, 0));
  p.gemm.alpha = attributes.get_float("alpha", 1.0f);
  const float beta = attributes.get_float("beta", 1.0f);
  p.has_c = node.has_input(2) && beta != 0.0f;
  p.gemm.beta = p.has_c ? beta : 0.0f;
  p.out_count = m * n;
  p.cublas_bytes = align_256(node.options().cublas_workspace_bytes);
  if (p.has_c) {
    const Shape operands[] = {node.input(2).shape};
    Expected<BroadcastShape> shape = make_broadcast(y, operands);
    if (!shape) return node.error(shape.status().code(), shape.status().message());
    p.c_broadcast.rank = shape->rank;
    p.c_broadcast.count = shape->count;
    int64_t stride = 1;
    for (int d = shape->rank - 1; d >= 0; --d) {
      p.c_broadcast.dims[d] = shape->dims[d];
      p.c_broadcast.src_strides[d] = shape->strides[0][d];
      p.c_broadcast.dst_strides[d] = stride;
      stride *= shape->dims[d];
    }
  }
  return make_kernel([p](const CudaRunContext& c) { return enqueue_gemm(p, c); }, p.cublas_bytes);
}

void register_matmul_kernels(CudaKernelRegistry& registry) {
  registry.add("MatMul", &make_matmul_kernel);
  registry.add("Gemm", &make_gemm_kernel);
}

}  // namespace onepool::cuda
