// Node preparation for pooling: MaxPool / AveragePool (1-D, 2-D) and the global pools, which
// are reductions over the spatial dims.
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/ops_util.h"
#include "runtime/cuda/kernels/window.h"

namespace onepool::cuda {

Expected<CudaPreparedKernel> make_pool_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != DType::kFloat32) return node.unsupported("dtype");
  if (node.has_output(1)) return node.unsupported("the MaxPool Indices output");
  ONEPOOL_ASSIGN_OR_RETURN(const Window2d w, read_window(node, nullptr, false));
  PoolParams p;
  const Shape& in = node.input(0).shape;
  p.planes = in[0] * in[1];
  p.in_h = w.in_h;
  p.in_w = w.in_w;
  p.out_h = w.out_h;
  p.out_w = w.out_w;
  p.k_h = w.k_h;
  p.k_w = w.k_w;
  p.s_h = w.s_h;
  p.s_w = w.s_w;
  p.p_h = w.p_h;
  p.p_w = w.p_w;
  p.d_h = w.d_h;
  p.d_w = w.d_w;
  p.end_h = w.end_h;
  p.end_w = w.end_w;
  p.is_max = node.node().op_type == "MaxPool";
  p.count_include_pad = node.node().attributes.get_int("count_include_pad", 0) != 0;
  return make_kernel([p](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(launch_pool(p, static_cast<const float*>(c.inputs[0].data),
                                           static_cast<float*>(c.outputs[0].data), c.stream));
  });
}

// GlobalAveragePool / GlobalMaxPool: [N, C, spatial...] → [N, C, 1...], a contiguous-row reduce.
Expected<CudaPreparedKernel> make_global_pool_kernel(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != DType::kFloat32) return node.unsupported("dtype");
  const Shape& in = node.input(0).shape;
  if (in.rank() < 3) return node.error(StatusCode::kInvalidModel, "input rank below 3");
  ReduceShape shape;
  shape.outputs = in[0] * in[1];
  shape.reduce_count = dims_product(in, 2, in.rank());
  shape.out_rank = 1;
  shape.out_dims[0] = shape.outputs;
  shape.out_strides[0] = shape.reduce_count;
  shape.reduce_rank = 1;
  shape.reduce_dims[0] = shape.reduce_count;
  shape.reduce_strides[0] = 1;
  if (shape.reduce_count == 0) return node.unsupported("empty spatial dims");
  const ReduceOp op = node.node().op_type == "GlobalMaxPool" ? ReduceOp::kMax : ReduceOp::kMean;
  return make_kernel([op, shape](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(launch_reduce(op, shape, static_cast<const float*>(c.inputs[0].data),
                                             static_cast<float*>(c.outputs[0].data), c.stream));
  });
}

}  // namespace onepool::cuda
