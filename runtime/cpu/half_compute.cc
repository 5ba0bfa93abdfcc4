// The float32-compute adapter for half-type nodes (see half_compute.h).
#include "runtime/cpu/half_compute.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "planner/core/float32_shadow.h"
#include "runtime/cpu/half_convert.h"
#include "runtime/half_adapter_context.h"

namespace onepool::cpu {
namespace {

constexpr size_t kBufferAlignment = 64;
constexpr int64_t kConversionChunk = 16384;  // elements per thread-pool part

// Runs convert(source, destination, count) over the thread pool in chunks.
template <class From, class To>
void convert_in_parallel(void (*convert)(const From*, To*, size_t), const From* source,
                         To* destination, size_t count, ThreadPool& threads) {
  threads.parallel_for(
      static_cast<int64_t>(count), kConversionChunk, [&](int64_t begin, int64_t end) {
        convert(source + begin, destination + begin, static_cast<size_t>(end - begin));
      });
}

void widen(const HalfConversion& conversion, const uint16_t* half, float* wide,
           ThreadPool& threads) {
  convert_in_parallel(
      conversion.half_dtype == DType::kFloat16 ? &half_to_float_array : &bfloat_to_float_array,
      half, wide, static_cast<size_t>(conversion.count), threads);
}

void narrow(const HalfConversion& conversion, const float* wide, uint16_t* half,
            ThreadPool& threads) {
  convert_in_parallel(
      conversion.half_dtype == DType::kFloat16 ? &float_to_half_array : &float_to_bfloat_array,
      wide, half, static_cast<size_t>(conversion.count), threads);
}

class Float32ComputeKernel final : public Kernel {
 public:
  Float32ComputeKernel(const Graph& graph, const Node& node, std::unique_ptr<Float32Shadow> shadow,
                       std::unique_ptr<Kernel> inner)
      : shadow_(std::move(shadow)), inner_(std::move(inner)) {
    inputs_ = plan_half_conversions(graph, node.inputs, false, kBufferAlignment, conversion_bytes_);
    outputs_ =
        plan_half_conversions(graph, node.outputs, false, kBufferAlignment, conversion_bytes_);
    inner_inputs_ = shadow_views(shadow_->graph(), shadow_->node().inputs, Device{}, true);
    inner_outputs_ = shadow_views(shadow_->graph(), shadow_->node().outputs, Device{}, true);
  }
  size_t conversion_bytes() const { return conversion_bytes_; }

  Status run(const RunContext& context) override {
    std::byte* buffers = context.workspace;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].kind == HalfConversion::Kind::kPassThrough) {
        inner_inputs_[i].data = context.inputs[i].data;
      } else if (inputs_[i].kind == HalfConversion::Kind::kConverted) {
        auto* wide = reinterpret_cast<float*>(buffers + inputs_[i].offset);
        widen(inputs_[i], context.inputs[i].as<const uint16_t>(), wide, *context.threads);
        inner_inputs_[i].data = wide;
      }
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const bool converted = outputs_[i].kind == HalfConversion::Kind::kConverted;
      inner_outputs_[i].data = converted ? buffers + outputs_[i].offset : context.outputs[i].data;
    }
    ONEPOOL_RETURN_IF_ERROR(inner_->run(float32_kernel_context(
        context, inner_inputs_, inner_outputs_, buffers, conversion_bytes_)));
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (outputs_[i].kind != HalfConversion::Kind::kConverted) continue;
      narrow(outputs_[i], reinterpret_cast<const float*>(buffers + outputs_[i].offset),
             context.outputs[i].as<uint16_t>(), *context.threads);
    }
    return Status::ok();
  }

 private:
  std::unique_ptr<Float32Shadow> shadow_;  // owns the widened weights inner_inputs_ point at
  std::unique_ptr<Kernel> inner_;
  std::vector<HalfConversion> inputs_;
  std::vector<HalfConversion> outputs_;
  std::vector<TensorView> inner_inputs_;  // sized at prepare: run() only sets data pointers
  std::vector<TensorView> inner_outputs_;
  size_t conversion_bytes_ = 0;
};

const char* half_names(const Graph& graph, const Node& node) {
  for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs}) {
    for (ValueId id : *ids) {
      if (id != kNoValue && graph.values[static_cast<size_t>(id)].dtype == DType::kBFloat16) {
        return "bfloat16";
      }
    }
  }
  return "float16";
}

Expected<PreparedKernel> prepare_with_float32_compute(KernelFactory factory, const Graph& graph,
                                                      const Node& node, int threads, CpuIsa isa) {
  auto shadow = std::make_unique<Float32Shadow>(graph, node);
  ONEPOOL_ASSIGN_OR_RETURN(PreparedKernel inner,
                           factory(NodeContext(shadow->graph(), shadow->node(), threads, isa)));
  auto kernel = std::make_unique<Float32ComputeKernel>(graph, node, std::move(shadow),
                                                       std::move(inner.kernel));
  const size_t conversion_bytes = kernel->conversion_bytes();
  PreparedKernel prepared;
  prepared.workspace_bytes = conversion_bytes + inner.workspace_bytes;
  prepared.workspace_preferred_bytes =
      conversion_bytes + std::max(inner.workspace_bytes, inner.workspace_preferred_bytes);
  // Every input is read into float32 before any output is written, so an output may take over
  // an input's bytes wherever the float32 kernel allows it; views and growth are not kept.
  prepared.in_place_inputs = inner.in_place_inputs;
  prepared.implementation = std::string(half_names(graph, node)) + " via float32 " +
                            (inner.implementation.empty() ? node.op_type : inner.implementation);
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

Expected<PreparedKernel> prepare_cpu_kernel(KernelFactory factory, const Graph& graph,
                                            const Node& node, int threads, CpuIsa isa,
                                            PackedWeightCache* packed_weights) {
  NodeContext context(graph, node, threads, isa);
  context.share_packed_weights(packed_weights);
  Expected<PreparedKernel> native = factory(context);
  if (native || native.status().code() != StatusCode::kUnsupported ||
      !node_touches_half_types(graph, node)) {
    return native;
  }
  Expected<PreparedKernel> widened =
      prepare_with_float32_compute(factory, graph, node, threads, isa);
  // No float32 kernel either: the native error names the half dtype the user has.
  if (!widened && widened.status().code() == StatusCode::kUnsupported) return native;
  return widened;
}

}  // namespace onepool::cpu
