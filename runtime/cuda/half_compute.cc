// The float32-compute adapter for half-type nodes on CUDA (see half_compute.h).
#include "runtime/cuda/half_compute.h"

#include <memory>
#include <utility>
#include <vector>

#include "planner/core/float32_shadow.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels/launch.h"
#include "runtime/half_adapter_context.h"

namespace onepool::cuda {
namespace {

ElemType elem_type(DType half) {
  return half == DType::kFloat16 ? ElemType::kFloat16 : ElemType::kBFloat16;
}

class Float32ComputeKernel final : public CudaKernel {
 public:
  Float32ComputeKernel(const Graph& graph, const Node& node, const Float32Shadow& shadow,
                       std::unique_ptr<CudaKernel> inner)
      : inner_(std::move(inner)) {
    // Weights are converted on every run too: the kernel interface has no upload step.
    inputs_ = plan_half_conversions(graph, node.inputs, true, 256, conversion_bytes_);
    outputs_ = plan_half_conversions(graph, node.outputs, true, 256, conversion_bytes_);
    // The device index is copied from the node's own views on every run.
    const Device device{DeviceKind::kCuda, 0};
    inner_inputs_ = shadow_views(shadow.graph(), shadow.node().inputs, device, false);
    inner_outputs_ = shadow_views(shadow.graph(), shadow.node().outputs, device, false);
  }
  size_t conversion_bytes() const { return conversion_bytes_; }

  Status enqueue(const CudaRunContext& context) override {
    std::byte* buffers = context.workspace;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      inner_inputs_[i].data = context.inputs[i].data;
      inner_inputs_[i].device = context.inputs[i].device;
      if (!converted(inputs_[i])) continue;
      inner_inputs_[i].data = buffers + inputs_[i].offset;
      ONEPOOL_LAUNCH_RETURN_IF_ERROR(
          launch_cast(elem_type(inputs_[i].half_dtype), ElemType::kFloat32, context.inputs[i].data,
                      inner_inputs_[i].data, inputs_[i].count, context.stream));
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      inner_outputs_[i].data =
          converted(outputs_[i]) ? buffers + outputs_[i].offset : context.outputs[i].data;
      inner_outputs_[i].device = context.outputs[i].device;
    }
    ONEPOOL_RETURN_IF_ERROR(inner_->enqueue(float32_kernel_context(
        context, inner_inputs_, inner_outputs_, buffers, conversion_bytes_)));
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (!converted(outputs_[i])) continue;
      ONEPOOL_LAUNCH_RETURN_IF_ERROR(
          launch_cast(ElemType::kFloat32, elem_type(outputs_[i].half_dtype), inner_outputs_[i].data,
                      context.outputs[i].data, outputs_[i].count, context.stream));
    }
    return Status::ok();
  }

 private:
  std::unique_ptr<CudaKernel> inner_;
  static bool converted(const HalfConversion& c) {
    return c.kind == HalfConversion::Kind::kConverted;
  }

  std::vector<HalfConversion> inputs_;
  std::vector<HalfConversion> outputs_;
  std::vector<TensorView> inner_inputs_;  // sized at prepare: enqueue() only sets data pointers
  std::vector<TensorView> inner_outputs_;
  size_t conversion_bytes_ = 0;
};

Expected<CudaPreparedKernel> prepare_with_float32_compute(CudaKernelFactory factory,
                                                          const Graph& graph, const Node& node,
                                                          const CudaBackendOptions& options) {
  const Float32Shadow shadow(graph, node);
  ONEPOOL_ASSIGN_OR_RETURN(CudaPreparedKernel inner,
                           factory(CudaNodeContext(shadow.graph(), shadow.node(), options)));
  auto kernel =
      std::make_unique<Float32ComputeKernel>(graph, node, shadow, std::move(inner.kernel));
  CudaPreparedKernel prepared;
  prepared.workspace_bytes = align_256(kernel->conversion_bytes()) + inner.workspace_bytes;
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

Expected<CudaPreparedKernel> prepare_cuda_kernel(CudaKernelFactory factory, const Graph& graph,
                                                 const Node& node,
                                                 const CudaBackendOptions& options) {
  Expected<CudaPreparedKernel> native = factory(CudaNodeContext(graph, node, options));
  if (native || native.status().code() != StatusCode::kUnsupported ||
      !node_touches_half_types(graph, node)) {
    return native;
  }
  Expected<CudaPreparedKernel> widened =
      prepare_with_float32_compute(factory, graph, node, options);
  // No float32 kernel either: the native error names the half dtype the user has.
  if (!widened && widened.status().code() == StatusCode::kUnsupported) return native;
  return widened;
}

}  // namespace onepool::cuda
