// CUDA backend: prepare kernels, bind views into one device pool, enqueue (or replay) in order.
#include "runtime/cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <utility>
#include <vector>

#include "planner/core/graph.h"
#include "planner/core/onepool_ops.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/half_compute.h"
#include "runtime/device_resource_cache.h"
#include "runtime/node_bindings.h"

namespace onepool::cuda {

namespace {

constexpr size_t kPoolAlignment = 256;

class CudaBackend final : public Backend {
 public:
  CudaBackend(int index, const CudaBackendOptions& options) : index_(index), options_(options) {
    stats_.enabled = options.cuda_graph;
  }
  ~CudaBackend() override;

  Status create_stream();
  Device device() const override { return Device{DeviceKind::kCuda, index_}; }
  Status prepare(const Model& model, NodeMemoryNeeds& needs) override;
  Status bind(const Model& model, const Plan& plan, void* caller_pool,
              size_t caller_capacity) override;
  TensorView value_view(int32_t id) const override { return value_views_[static_cast<size_t>(id)]; }
  Status copy_in(int32_t id, const TensorView& source) override;
  Status copy_out(int32_t id, const TensorView& destination) override;
  Status execute() override;
  Status run(std::span<const int32_t> input_ids, std::span<const TensorView> inputs,
             std::span<const int32_t> output_ids, std::span<const TensorView> outputs) override;
  size_t owned_pool_bytes() const override { return owned_pool_.data() ? plan_pool_bytes_ : 0; }
  CudaGraphStats cuda_graph_stats() const override { return stats_; }
  void set_logger(Logger logger) { logger_ = std::move(logger); }
  Status set_external_data(int32_t id, void* data) override;

 private:
  Status check_external_pointer(int32_t id, const void* data) const;
  void drop_captured_graph();
  Status adopt_pool(size_t bytes, void* caller_pool, size_t caller_capacity);
  Status bind_node_views(const Plan& plan);
  Status enqueue_copy_in(int32_t id, const TensorView& source);
  Status enqueue_copy_out(int32_t id, const TensorView& destination);
  Status enqueue_execute();
  Status enqueue_all(bool check_cancel);
  void try_capture();

  int index_;
  CudaBackendOptions options_;
  CudaGraphStats stats_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  bool capture_tried_ = false;
  const Graph* graph_ir_ = nullptr;
  std::vector<CudaPreparedKernel> kernels_;
  DeviceBuffer owned_pool_;
  size_t plan_pool_bytes_ = 0;
  std::byte* pool_ = nullptr;
  std::shared_ptr<const DeviceWeights> weights_;
  std::vector<TensorView> value_views_;
  std::vector<TensorView> views_;  // every node's inputs then outputs, contiguous
  std::vector<BoundNode> bound_nodes_;
  std::vector<std::vector<size_t>> external_uses_;  // NodeBindings::external_uses
  Logger logger_;  // SessionOptions::logger: told once why a capture failed
};

CudaBackend::~CudaBackend() {
  // Nothing here can report an error; each release is attempted on this backend's device.
  ScopedDevice scoped;
  if (!scoped.enter(index_).is_ok()) return;
  if (stream_ != nullptr) (void)cudaStreamSynchronize(stream_);
  if (graph_exec_ != nullptr) (void)cudaGraphExecDestroy(graph_exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

Status CudaBackend::create_stream() {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  ONEPOOL_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  ONEPOOL_CUBLAS_RETURN_IF_ERROR(cublasCreate(&cublas_));
  ONEPOOL_CUBLAS_RETURN_IF_ERROR(cublasSetStream(cublas_, stream_));
  // Float32 stays exact (no TF32) unless asked: matches the CPU reference within 1e-4.
  ONEPOOL_CUBLAS_RETURN_IF_ERROR(
      cublasSetMathMode(cublas_, options_.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  return Status::ok();
}

Status CudaBackend::prepare(const Model& model, NodeMemoryNeeds& needs) {
  graph_ir_ = &model.graph();
  std::string problems;
  int problem_count = 0;
  kernels_.clear();
  kernels_.resize(graph_ir_->nodes.size());
  needs.workspace_bytes.assign(graph_ir_->nodes.size(), 0);
  needs.aliasing.assign(graph_ir_->nodes.size(), NodeAliasing{});
  const CudaKernelRegistry registry = CudaKernelRegistry::with_all_kernels();
  for (size_t n = 0; n < graph_ir_->nodes.size(); ++n) {
    const Node& node = graph_ir_->nodes[n];
    const std::string key = kernel_key(node.domain, node.op_type);
    const CudaKernelFactory factory = key.empty() ? nullptr : registry.find(key);
    Status status;
    if (factory == nullptr) {
      const std::string dtype =
          node.input(0) == kNoValue
              ? "none"
              : dtype_name(graph_ir_->values[static_cast<size_t>(node.input(0))].dtype);
      status = make_status(StatusCode::kUnsupported, describe_node(node), ": op '",
                           node.domain.empty() ? "" : node.domain + ".", node.op_type, "' (dtype ",
                           dtype, ") has no CUDA kernel");
    } else {
      Expected<CudaPreparedKernel> prepared =
          prepare_cuda_kernel(factory, *graph_ir_, node, options_);
      if (prepared) {
        kernels_[n] = std::move(prepared).value();
        needs.workspace_bytes[n] = kernels_[n].workspace_bytes;
        // No in-place elementwise: the CUDA kernels do not promise output == input is safe.
        needs.aliasing[n].output_is_view = kernels_[n].output_is_view;
        needs.aliasing[n].concat_in_place = kernels_[n].concat_in_place;
        continue;
      }
      status = prepared.status();
    }
    ++problem_count;
    problems += "\n  " + status.message();
  }
  if (problem_count > 0) {
    return make_status(StatusCode::kUnsupported, problem_count,
                       " node(s) cannot run on the CUDA backend:", problems);
  }
  return Status::ok();
}

// Caller memory must be device memory on this device, large and aligned enough.
Status CudaBackend::adopt_pool(size_t bytes, void* caller_pool, size_t caller_capacity) {
  plan_pool_bytes_ = bytes;
  if (caller_pool == nullptr) {
    ONEPOOL_ASSIGN_OR_RETURN(owned_pool_, DeviceBuffer::allocate(index_, bytes, "the pool"));
    pool_ = owned_pool_.data();
    return Status::ok();
  }
  if (caller_capacity < bytes) {
    return make_status(StatusCode::kInvalidArgument, "caller pool holds ", caller_capacity,
                       " bytes but the plan needs ", bytes);
  }
  if (reinterpret_cast<uintptr_t>(caller_pool) % kPoolAlignment != 0) {
    return make_status(StatusCode::kInvalidArgument, "caller pool must be ", kPoolAlignment,
                       "-byte aligned");
  }
  cudaPointerAttributes attributes{};
  ONEPOOL_CUDA_RETURN_IF_ERROR(cudaPointerGetAttributes(&attributes, caller_pool));
  const bool on_device =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  if (!on_device || attributes.device != index_) {
    return make_status(StatusCode::kInvalidArgument,
                       "caller pool is not device memory of cuda:", index_);
  }
  pool_ = static_cast<std::byte*>(caller_pool);
  return Status::ok();
}

Status CudaBackend::bind(const Model& model, const Plan& plan, void* caller_pool,
                         size_t caller_capacity) {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  // Step 1. The pool: one allocation (or the caller's memory).
  ONEPOOL_RETURN_IF_ERROR(adopt_pool(plan.pool_bytes, caller_pool, caller_capacity));
  // Step 2. The weights: one upload per Model and device, shared by its Sessions, finished
  // before any kernel can read them.
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const void> shared,
                           model.device_resources().get_or_create(
                               index_, [&]() -> Expected<std::shared_ptr<const void>> {
                                 ONEPOOL_ASSIGN_OR_RETURN(
                                     std::shared_ptr<const DeviceWeights> uploaded,
                                     upload_weights(model, index_, stream_));
                                 return std::shared_ptr<const void>(std::move(uploaded));
                               }));
  weights_ = std::static_pointer_cast<const DeviceWeights>(std::move(shared));
  // Step 3. Every value's view.
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<ValueLocation> locations, locate_values(model, plan));
  value_views_.assign(graph_ir_->values.size(), TensorView{});
  for (size_t id = 0; id < graph_ir_->values.size(); ++id) {
    const Value& value = graph_ir_->values[id];
    TensorView& view = value_views_[id];
    view.dtype = value.dtype;
    view.shape = value.shape;
    view.device = device();
    if (locations[id].region == ValueLocation::Region::kPool) {
      view.data = pool_ + locations[id].offset;
    } else if (locations[id].region == ValueLocation::Region::kWeights) {
      view.data = weights_->buffer.data() + locations[id].offset;
    }
  }
  return bind_node_views(plan);
}

Status CudaBackend::bind_node_views(const Plan& plan) {
  std::vector<size_t> needed(kernels_.size());
  for (size_t n = 0; n < kernels_.size(); ++n) needed[n] = kernels_[n].workspace_bytes;
  ONEPOOL_ASSIGN_OR_RETURN(NodeBindings bindings, bind_nodes(*graph_ir_, value_views_, plan, pool_,
                                                             needed, kPoolAlignment));
  views_ = std::move(bindings.views);
  bound_nodes_ = std::move(bindings.nodes);
  external_uses_ = std::move(bindings.external_uses);
  return Status::ok();
}

// A caller buffer for an external value must be memory of this device (or managed memory).
Status CudaBackend::check_external_pointer(int32_t id, const void* data) const {
  if (data == nullptr) return Status::ok();  // an empty tensor
  cudaPointerAttributes attributes{};
  ONEPOOL_CUDA_RETURN_IF_ERROR(cudaPointerGetAttributes(&attributes, data));
  const bool on_device =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  if (on_device && attributes.device == index_) return Status::ok();
  return make_status(StatusCode::kInvalidArgument, "external tensor '",
                     graph_ir_->values[static_cast<size_t>(id)].name,
                     "': the buffer is not device memory of cuda:", index_,
                     " (an external input or output of a CUDA Session is read and written by its "
                     "kernels in place)");
}

// A new address invalidates the captured graph, which holds the old one: the next run
// captures again (stats_.recaptures counts it).
Status CudaBackend::set_external_data(int32_t id, void* data) {
  if (value_views_[static_cast<size_t>(id)].data == data) return Status::ok();
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  ONEPOOL_RETURN_IF_ERROR(check_external_pointer(id, data));
  point_external_value(id, data, external_uses_, value_views_, views_);
  if (graph_exec_ != nullptr) {
    drop_captured_graph();
    ++stats_.recaptures;
  }
  return Status::ok();
}

void CudaBackend::drop_captured_graph() {
  (void)cudaStreamSynchronize(stream_);
  if (graph_exec_ != nullptr) (void)cudaGraphExecDestroy(graph_exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  graph_exec_ = nullptr;
  graph_ = nullptr;
  capture_tried_ = false;
  stats_.captured = false;
}

// Stream-ordered before the run's kernels; the run waits before it returns, so the caller's
// buffer is not read after run() (cudaMemcpyDefault: host or device source).
Status CudaBackend::enqueue_copy_in(int32_t id, const TensorView& source) {
  const TensorView& target = value_views_[static_cast<size_t>(id)];
  if (target.data == source.data || target.bytes() == 0) return Status::ok();
  return ONEPOOL_CUDA_STATUS(
      cudaMemcpyAsync(target.data, source.data, target.bytes(), cudaMemcpyDefault, stream_));
}

Status CudaBackend::enqueue_copy_out(int32_t id, const TensorView& destination) {
  const TensorView& source = value_views_[static_cast<size_t>(id)];
  if (source.bytes() == 0 || destination.data == source.data) return Status::ok();
  if (source.data == nullptr) {
    return make_status(StatusCode::kInternal, "output '",
                       graph_ir_->values[static_cast<size_t>(id)].name, "' has no storage");
  }
  return ONEPOOL_CUDA_STATUS(
      cudaMemcpyAsync(destination.data, source.data, source.bytes(), cudaMemcpyDefault, stream_));
}

// The graph on every run after a successful capture; node by node otherwise. Counts which.
Status CudaBackend::enqueue_execute() {
  if (options_.cuda_graph && !capture_tried_) try_capture();
  if (graph_exec_ != nullptr) {
    // A captured graph runs as one launch: the flag is read once, before it.
    ONEPOOL_RETURN_IF_ERROR(cancelled_before(*graph_ir_, 0));
    ++stats_.replays;
    return ONEPOOL_CUDA_STATUS(cudaGraphLaunch(graph_exec_, stream_));
  }
  ++stats_.direct_runs;
  return enqueue_all(true);
}

Status CudaBackend::copy_in(int32_t id, const TensorView& source) {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  return enqueue_copy_in(id, source);
}

Status CudaBackend::copy_out(int32_t id, const TensorView& destination) {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  Status status = enqueue_copy_out(id, destination);
  Status synced = ONEPOOL_CUDA_STATUS(cudaStreamSynchronize(stream_));
  return status.is_ok() ? synced : status;
}

Status CudaBackend::execute() {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  Status status = enqueue_execute();
  // Always wait, even after an error: copies already enqueued may still read caller memory.
  Status synced = ONEPOOL_CUDA_STATUS(cudaStreamSynchronize(stream_));
  return status.is_ok() ? synced : status;
}

// Copies in, the graph (or the nodes), copies out, then one wait for all of it.
Status CudaBackend::run(std::span<const int32_t> input_ids, std::span<const TensorView> inputs,
                        std::span<const int32_t> output_ids, std::span<const TensorView> outputs) {
  ScopedDevice scoped;
  ONEPOOL_RETURN_IF_ERROR(scoped.enter(index_));
  Status status;
  for (size_t i = 0; i < inputs.size() && status.is_ok(); ++i) {
    status = enqueue_copy_in(input_ids[i], inputs[i]);
  }
  if (status.is_ok()) status = enqueue_execute();
  for (size_t i = 0; i < outputs.size() && status.is_ok(); ++i) {
    status = enqueue_copy_out(output_ids[i], outputs[i]);
  }
  // Always wait, even after an error: enqueued copies may still use the caller's memory.
  Status synced = ONEPOOL_CUDA_STATUS(cudaStreamSynchronize(stream_));
  return status.is_ok() ? synced : status;
}

// `check_cancel` is off while capturing: a captured graph must hold every node.
Status CudaBackend::enqueue_all(bool check_cancel) {
  for (size_t n = 0; n < kernels_.size(); ++n) {
    if (check_cancel) ONEPOOL_RETURN_IF_ERROR(cancelled_before(*graph_ir_, n));
    const BoundNode& bound = bound_nodes_[n];
    CudaRunContext context;
    context.inputs = bound.inputs(views_);
    context.outputs = bound.outputs(views_);
    context.workspace = bound.workspace;
    context.workspace_bytes = bound.workspace_bytes;
    context.stream = stream_;
    context.cublas = cublas_;
    Status status = kernels_[n].kernel->enqueue(context);
    if (!status.is_ok()) return status.with_context(describe_node(graph_ir_->nodes[n]));
  }
  return Status::ok();
}

// Captures the node sequence once. Any failure leaves direct launches in place and records why
// (the only allocation outside Session creation, and it happens at most once).
void CudaBackend::try_capture() {
  capture_tried_ = true;
  Status status =
      ONEPOOL_CUDA_STATUS(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  if (status.is_ok()) {
    Status enqueued = enqueue_all(false);
    Status ended = ONEPOOL_CUDA_STATUS(cudaStreamEndCapture(stream_, &graph_));
    status = !enqueued.is_ok() ? enqueued : ended;
  }
  if (status.is_ok()) {
    status = ONEPOOL_CUDA_STATUS(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  }
  if (status.is_ok()) {
    stats_.captured = true;
    return;
  }
  (void)cudaGetLastError();
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  graph_ = nullptr;
  graph_exec_ = nullptr;
  stats_.fallback_reason = status.message();
  if (logger_) {
    logger_(LogLevel::kWarning, "CUDA graph capture failed, every run launches node by node: " +
                                    stats_.fallback_reason);
  }
}

}  // namespace

Expected<std::unique_ptr<Backend>> create_cuda_backend(const SessionOptions& options,
                                                       const CudaBackendOptions& cuda_options) {
  if (options.device.kind != DeviceKind::kCuda) {
    return make_status(StatusCode::kInvalidArgument, "the CUDA backend cannot run on ",
                       options.device.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(check_cuda_device(options.device));
  CudaBackendOptions resolved = cuda_options;
  if (resolved.cublas_workspace_bytes == 0) {
    int major = 0;
    ONEPOOL_CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, options.device.index));
    resolved.cublas_workspace_bytes = major >= 9 ? kCublasWorkspaceHopper : kCublasWorkspaceDefault;
  }
  auto backend = std::make_unique<CudaBackend>(options.device.index, resolved);
  backend->set_logger(options.logger);
  ONEPOOL_RETURN_IF_ERROR(backend->create_stream());
  return std::unique_ptr<Backend>(std::move(backend));
}

Expected<std::unique_ptr<Backend>> create_cuda_backend(const SessionOptions& options) {
  return create_cuda_backend(options, CudaBackendOptions{});
}

}  // namespace onepool::cuda
