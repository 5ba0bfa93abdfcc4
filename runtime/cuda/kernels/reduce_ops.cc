// Node preparation for reductions: Reduce* over any axes, Softmax / LogSoftmax, and
// LayerNormalization over the trailing dims.
#include <string>
#include <vector>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/ops_util.h"

namespace onepool::cuda {

namespace {

struct ReduceEntry {
  const char* name;
  ReduceOp op;
};

constexpr ReduceEntry kReduceOps[] = {
    {"ReduceSum", ReduceOp::kSum},   {"ReduceMean", ReduceOp::kMean},
    {"ReduceMax", ReduceOp::kMax},   {"ReduceMin", ReduceOp::kMin},
    {"ReduceProd", ReduceOp::kProd}, {"ReduceSumSquare", ReduceOp::kSumSquare},
    {"ReduceL2", ReduceOp::kL2},     {"ReduceL1", ReduceOp::kL1},
};

// The reduced axes as flags: from the `axes` input (ReduceSum-13, every Reduce-18) or attribute.
Expected<std::vector<bool>> reduced_axes(const CudaNodeContext& node, int rank) {
  std::vector<int64_t> axes = node.node().attributes.get_ints("axes");
  if (node.has_input(1)) {
    const HostTensor* constant = node.constant_input(1);
    if (constant == nullptr) return node.unsupported("axes must be a constant");
    for (int64_t k = 0; k < constant->element_count(); ++k) axes.push_back(constant->int_at(k));
  }
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    const bool noop = node.node().attributes.get_int("noop_with_empty_axes", 0) != 0;
    reduced.assign(static_cast<size_t>(rank), !noop);
  }
  for (int64_t axis : axes) {
    Expected<int> normalized = normalize_axis(axis, rank);
    if (!normalized) return node.error(StatusCode::kInvalidModel, normalized.status().message());
    reduced[static_cast<size_t>(*normalized)] = true;
  }
  return reduced;
}

}  // namespace

Expected<CudaPreparedKernel> make_reduce_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != DType::kFloat32) return node.unsupported("dtype");
  ReduceOp op = ReduceOp::kSum;
  bool found = false;
  for (const ReduceEntry& entry : kReduceOps) {
    if (node.node().op_type == entry.name) {
      op = entry.op;
      found = true;
    }
  }
  if (!found) return node.unsupported("unknown reduction");
  const Shape& in = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_axes(node, in.rank()));
  const std::vector<int64_t> strides = contiguous_strides(in);
  ReduceShape shape;
  shape.outputs = 1;
  shape.reduce_count = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (in[d] == 1) continue;
    if (reduced[static_cast<size_t>(d)]) {
      shape.reduce_dims[shape.reduce_rank] = in[d];
      shape.reduce_strides[shape.reduce_rank++] = strides[static_cast<size_t>(d)];
      shape.reduce_count *= in[d];
    } else {
      shape.out_dims[shape.out_rank] = in[d];
      shape.out_strides[shape.out_rank++] = strides[static_cast<size_t>(d)];
      shape.outputs *= in[d];
    }
  }
  if (shape.reduce_count == 0) return node.unsupported("reducing an empty axis");
  return make_kernel([op, shape](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(launch_reduce(op, shape, static_cast<const float*>(c.inputs[0].data),
                                             static_cast<float*>(c.outputs[0].data), c.stream));
  });
}

// Softmax / LogSoftmax: opset 13+ normalizes along one axis (default -1); earlier opsets over
// the flattened dims from `axis` (default 1) on.
Expected<CudaPreparedKernel> make_softmax_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != DType::kFloat32) return node.unsupported("dtype");
  const Shape& in = node.input(0).shape;
  const bool legacy = node.graph().opset < 13;
  ONEPOOL_ASSIGN_OR_RETURN(
      const int axis,
      normalize_axis(node.node().attributes.get_int("axis", legacy ? 1 : -1), in.rank()));
  const int64_t outer = dims_product(in, 0, axis);
  const int64_t axis_dim = legacy ? dims_product(in, axis, in.rank()) : in[axis];
  const int64_t inner = legacy ? 1 : dims_product(in, axis + 1, in.rank());
  const bool log = node.node().op_type == "LogSoftmax";
  return make_kernel([=](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(launch_softmax(static_cast<const float*>(c.inputs[0].data),
                                              static_cast<float*>(c.outputs[0].data), outer,
                                              axis_dim, inner, log, c.stream));
  });
}

Expected<CudaPreparedKernel> make_layer_norm_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected X, Scale and Y");
  }
  if (node.input(0).dtype != DType::kFloat32) return node.unsupported("dtype");
  if (node.has_output(1) || node.has_output(2)) return node.unsupported("Mean / InvStdDev outputs");
  const Shape& in = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const int axis,
                           normalize_axis(node.node().attributes.get_int("axis", -1), in.rank()));
  const int64_t rows = dims_product(in, 0, axis);
  const int64_t cols = dims_product(in, axis, in.rank());
  if (node.input(1).shape.element_count() != cols ||
      (node.has_input(2) && node.input(2).shape.element_count() != cols)) {
    return node.unsupported("Scale / B that broadcast (not of the normalized size)");
  }
  const float epsilon = node.node().attributes.get_float("epsilon", 1e-5f);
  return make_kernel([=](const CudaRunContext& c) -> Status {
    const auto* bias = c.inputs.size() > 2 ? static_cast<const float*>(c.inputs[2].data) : nullptr;
    return ONEPOOL_CUDA_STATUS(launch_layer_norm(
        static_cast<const float*>(c.inputs[0].data), static_cast<const float*>(c.inputs[1].data),
        bias, static_cast<float*>(c.outputs[0].data), rows, cols, epsilon, c.stream));
  });
}

void register_reduce_kernels(CudaKernelRegistry& registry) {
  registry.add("ReduceSum", &make_reduce_kernel);
  registry.add("ReduceMean", &make_reduce_kernel);
  registry.add("ReduceMax", &make_reduce_kernel);
  registry.add("ReduceMin", &make_reduce_kernel);
  registry.add("ReduceProd", &make_reduce_kernel);
  registry.add("ReduceSumSquare", &make_reduce_kernel);
  registry.add("ReduceL2", &make_reduce_kernel);
  registry.add("ReduceL1", &make_reduce_kernel);
  registry.add("Softmax", &make_softmax_kernel);
  registry.add("LogSoftmax", &make_softmax_kernel);
}

}  // namespace onepool::cuda
