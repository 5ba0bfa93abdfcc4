// CPU backend: prepare kernels, bind views into one pool, execute in order.
#include "runtime/cpu/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <thread>

#include "planner/core/graph.h"
#include "planner/core/onepool_ops.h"
#include "runtime/cpu/blas_threads.h"
#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/half_compute.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/conv_dnnl.h"
#include "runtime/huge_pages.h"
#include "runtime/node_bindings.h"
#include "runtime/node_flops.h"

namespace onepool::cpu {

namespace {

constexpr size_t kPoolAlignment = 256;

// A Session's thread count: `threads`, or every hardware thread for 0 (or less).
int session_threads(int threads) {
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// kUnsupported when the node reads a tensor of data-dependent size (Value::bound) but its kernel
// was prepared for static shapes only (PreparedKernel::accepts_bounded_inputs).
Status check_bounded_inputs(const Graph& graph, const Node& node, const PreparedKernel& kernel) {
  if (kernel.accepts_bounded_inputs) return Status::ok();
  for (ValueId id : node.inputs) {
    if (id == kNoValue) continue;
    const Value& value = graph.values[static_cast<size_t>(id)];
    if (value.bound.empty()) continue;
    return make_status(StatusCode::kUnsupported, describe_node(node), ": input '", value.name,
                       "' has a data-dependent shape (planned at its bound ",
                       value.shape.to_string(), ": ", value.bound, "); the CPU kernel of ",
                       node.op_type,
                       " needs static shapes (Gather, GatherND, Transpose, Squeeze, Unsqueeze, "
                       "Flatten, Reshape and Identity take such inputs)");
  }
  return Status::ok();
}

// The node's kernel, or kUnsupported naming the node and op when the CPU has none.
Expected<PreparedKernel> prepare_kernel(const KernelRegistry& registry, const Graph& graph,
                                        const Node& node, int threads, CpuIsa isa = CpuIsa::kAuto,
                                        PackedWeightCache* packed_weights = nullptr) {
  const std::string key = kernel_key(node.domain, node.op_type);
  const KernelFactory factory = key.empty() ? nullptr : registry.find(key);
  if (factory == nullptr) {
    return make_status(StatusCode::kUnsupported, describe_node(node), ": op '",
                       node.domain.empty() ? "" : node.domain + ".", node.op_type,
                       "' has no CPU kernel");
  }
  // Preparation builds tables proportional to a node's shapes (Pad, Resize, Expand, Tile): a
  // failed allocation is this node's error, never an exception through the API.
  try {
    ONEPOOL_ASSIGN_OR_RETURN(
        PreparedKernel kernel,
        prepare_cpu_kernel(factory, graph, node, threads, isa, packed_weights));
    ONEPOOL_RETURN_IF_ERROR(check_bounded_inputs(graph, node, kernel));
    return kernel;
  } catch (const std::bad_alloc&) {
    return make_status(StatusCode::kResourceExhausted, describe_node(node),
                       ": out of memory while preparing the kernel");
  }
}

// Appends one node's workspace and sharing, as the planner reads them.
void add_memory_needs(const PreparedKernel& kernel, NodeMemoryNeeds& needs) {
  needs.workspace_bytes.push_back(kernel.workspace_bytes);
  needs.workspace_preferred_bytes.push_back(
      std::max(kernel.workspace_bytes, kernel.workspace_preferred_bytes));
  needs.aliasing.push_back(NodeAliasing{kernel.in_place_inputs, kernel.in_place_grows,
                                        kernel.output_is_view, kernel.concat_in_place});
  needs.nested.insert(needs.nested.end(), kernel.nested_plans.begin(), kernel.nested_plans.end());
}

// Adds `value` to the first element of a float32 or float64 view (the Session checked which).
void perturb_first_element(const TensorView& view, double value) {
  if (view.dtype == DType::kFloat32) {
    *static_cast<float*>(static_cast<void*>(view.data)) += static_cast<float>(value);
    return;
  }
  *static_cast<double*>(static_cast<void*>(view.data)) += value;
}

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

class CpuBackend final : public Backend {
 public:
  /// `shared_threads`: where a nested backend (an If branch) finds the thread pool of the Session
  /// it runs in, read at every node; it then starts no threads of its own.
  CpuBackend(int threads, CpuIsa isa, ThreadPool* const* shared_threads)
      : threads_(std::max(1, threads)),
        isa_(isa),
        thread_pool_(shared_threads != nullptr ? 1 : threads_),
        shared_threads_(shared_threads) {}
  /// A Session on the threads of `process_pool` (SessionOptions::thread_pool): starts none.
  CpuBackend(CpuIsa isa, std::shared_ptr<CpuThreadPool> process_pool)
      : threads_(process_pool->threads()),
        isa_(isa),
        thread_pool_(1),
        process_pool_(std::move(process_pool)) {}

  Device device() const override { return Device{DeviceKind::kCpu, 0}; }

  Status prepare(const Model& model, NodeMemoryNeeds& needs) override;
  Status bind(const Model& model, const Plan& plan, void* caller_pool,
              size_t caller_capacity) override;
  TensorView value_view(int32_t id) const override { return value_views_[static_cast<size_t>(id)]; }
  Status copy_in(int32_t id, const TensorView& source) override;
  Status copy_out(int32_t id, const TensorView& destination) override;
  Status execute() override;
  size_t owned_pool_bytes() const override { return owned_pool_ ? owned_pool_bytes_ : 0; }
  bool enable_profiling() override;
  SessionProfile profile() const override;
  void reset_profile() override;
  bool set_debug_perturbation(size_t node, double value) override;
  std::string node_implementation(size_t n) const override { return kernels_[n].implementation; }
  Status set_external_data(int32_t id, void* data) override {
    // An empty caller tensor may come without storage: kernels still get a valid address, as
    // every pooled tensor has one (memcpy and friends reject null even for 0 bytes).
    if (data == nullptr) data = empty_external_;
    point_external_value(id, data, external_uses_, value_views_, views_);
    return Status::ok();
  }

 private:
  Status allocate_pool(size_t bytes, void* caller_pool, size_t caller_capacity);
  Status bind_node_views(const Plan& plan);
  Status run_node(size_t n);
  Status run_data_dependent_node(size_t n, RunContext& context);
  void index_actual_shapes();
  Status execute_profiled();
  Status execute_perturbed();

  ThreadPool* run_threads() {
    if (shared_threads_ != nullptr && *shared_threads_ != nullptr) return *shared_threads_;
    return process_pool_ != nullptr ? &process_pool_->workers() : &thread_pool_;
  }

  int threads_;
  CpuIsa isa_;  // resolved: never kAuto
  ThreadPool thread_pool_;
  ThreadPool* const* shared_threads_ = nullptr;
  std::shared_ptr<CpuThreadPool> process_pool_;  // shared by Sessions; null: thread_pool_
  const Graph* graph_ = nullptr;
  std::vector<PreparedKernel> kernels_;
  std::unique_ptr<std::byte[], FreeDeleter> owned_pool_;
  size_t owned_pool_bytes_ = 0;
  std::byte* pool_ = nullptr;
  std::vector<TensorView> value_views_;
  std::vector<TensorView> views_;  // every node's inputs then outputs, contiguous
  std::vector<BoundNode> bound_nodes_;
  std::vector<std::vector<size_t>> external_uses_;  // NodeBindings::external_uses
  alignas(64) std::byte empty_external_[64] = {};   // where empty external tensors point
  // Data-dependent nodes (PreparedKernel::data_dependent_outputs): where run() reports each
  // output's actual shape, indexed by the node's first slot; sized at bind.
  std::vector<Shape> actual_shapes_;
  std::vector<size_t> actual_shape_slot_;  // per node; SIZE_MAX for the others
  // Per value of data-dependent size: the entries of views_ where nodes read it, which take its
  // actual shape after each run of its producer.
  std::vector<std::vector<size_t>> bounded_input_views_;
  // Profiling (SessionOptions::profile): sized once by enable_profiling(), so that a profiled
  // run allocates nothing either. Nanoseconds of steady_clock.
  struct NodeTime {
    int64_t total_ns = 0;
    int64_t last_start_ns = 0;
    int64_t last_ns = 0;
  };
  bool profiling_ = false;
  std::vector<NodeTime> node_times_;
  // Per node, threads_ counters: each thread's time in the node's parallel parts (ThreadPool::
  // BusyScope), the caller's first.
  std::vector<int64_t> node_busy_ns_;
  int64_t profiled_runs_ = 0;
  int64_t profiled_run_ns_ = 0;
  // SessionOptions::debug_perturb_node: its execution index, or none.
  size_t perturb_node_ = std::numeric_limits<size_t>::max();
  double perturb_value_ = 0.0;
};

Status CpuBackend::prepare(const Model& model, NodeMemoryNeeds& needs) {
  graph_ = &model.graph();
  const KernelRegistry registry = KernelRegistry::with_all_kernels();
  std::string problems;
  int problem_count = 0;
  int invalid_count = 0;
  kernels_.clear();
  kernels_.resize(graph_->nodes.size());
  needs = NodeMemoryNeeds{};
  // oneDNN primitives (when built in) fix their work split at creation from this count.
  nn::set_dnnl_threads(threads_);
  for (size_t n = 0; n < graph_->nodes.size(); ++n) {
    Expected<PreparedKernel> prepared = prepare_kernel(registry, *graph_, graph_->nodes[n],
                                                       threads_, isa_, &model.packed_weights());
    if (prepared) {
      kernels_[n] = std::move(prepared).value();
      add_memory_needs(kernels_[n], needs);
      continue;
    }
    ++problem_count;
    const StatusCode code = prepared.status().code();
    // kOutOfRange at prepare: a constant input checked at load (a Gather index past its axis).
    if (code == StatusCode::kInvalidModel || code == StatusCode::kOutOfRange) ++invalid_count;
    problems += "\n  " + prepared.status().message();
  }
  // A branch or loop body hands its outputs to the node around it at their static shapes.
  if (shared_threads_ != nullptr) {
    for (ValueId id : graph_->outputs) {
      const Value& value = graph_->values[static_cast<size_t>(id)];
      if (value.bound.empty()) continue;
      ++problem_count;
      problems += str_cat("\n  output '", value.name,
                          "' of a nested graph (If branch, Loop or "
                          "Scan body) has a data-dependent shape (",
                          value.bound, ")");
    }
  }
  // A malformed node (a Reshape whose output cannot hold its input, a constant Gather index out
  // of range) makes the model invalid on every backend: say so, not that the CPU lacks something.
  if (invalid_count > 0) {
    return make_status(StatusCode::kInvalidModel, "the model is invalid: ", invalid_count,
                       " node(s) are malformed", problems);
  }
  if (problem_count > 0) {
    return make_status(StatusCode::kUnsupported, problem_count,
                       " node(s) cannot run on the CPU backend:", problems);
  }
  // GEMMs are split across the Session's own threads (see gemm_blas.h); OpenBLAS itself runs
  // single-threaded because its threaded driver allocates on every call.
  use_single_threaded_blas();
  return Status::ok();
}

Status CpuBackend::allocate_pool(size_t bytes, void* caller_pool, size_t caller_capacity) {
  if (caller_pool != nullptr) {
    if (caller_capacity < bytes) {
      return make_status(StatusCode::kInvalidArgument, "caller pool holds ", caller_capacity,
                         " bytes but the plan needs ", bytes);
    }
    if (reinterpret_cast<uintptr_t>(caller_pool) % kPoolAlignment != 0) {
      return make_status(StatusCode::kInvalidArgument, "caller pool must be ", kPoolAlignment,
                         "-byte aligned");
    }
    pool_ = static_cast<std::byte*>(caller_pool);
    return Status::ok();
  }
  const size_t allocation = std::max<size_t>(
      kPoolAlignment, (bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment);
  owned_pool_.reset(static_cast<std::byte*>(std::aligned_alloc(kPoolAlignment, allocation)));
  if (!owned_pool_) {
    return make_status(StatusCode::kResourceExhausted, "cannot allocate a pool of ", allocation,
                       " bytes");
  }
  advise_huge_pages(owned_pool_.get(), allocation);
  owned_pool_bytes_ = bytes;
  pool_ = owned_pool_.get();
  return Status::ok();
}

Status CpuBackend::bind(const Model& model, const Plan& plan, void* caller_pool,
                        size_t caller_capacity) {
  ONEPOOL_RETURN_IF_ERROR(allocate_pool(plan.pool_bytes, caller_pool, caller_capacity));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<ValueLocation> locations, locate_values(model, plan));
  value_views_.assign(graph_->values.size(), TensorView{});
  for (size_t id = 0; id < graph_->values.size(); ++id) {
    const Value& value = graph_->values[id];
    TensorView& view = value_views_[id];
    view.dtype = value.dtype;
    view.shape = value.shape;
    if (locations[id].region == ValueLocation::Region::kPool) {
      view.data = pool_ + locations[id].offset;
    } else if (locations[id].region == ValueLocation::Region::kWeights) {
      view.data = const_cast<std::byte*>(model.weights_base()) + locations[id].offset;
    }
  }
  return bind_node_views(plan);
}

Status CpuBackend::bind_node_views(const Plan& plan) {
  std::vector<size_t> needed(kernels_.size());
  for (size_t n = 0; n < kernels_.size(); ++n) needed[n] = kernels_[n].workspace_bytes;
  ONEPOOL_ASSIGN_OR_RETURN(NodeBindings bindings,
                           bind_nodes(*graph_, value_views_, plan, pool_, needed, 1));
  views_ = std::move(bindings.views);
  bound_nodes_ = std::move(bindings.nodes);
  external_uses_ = std::move(bindings.external_uses);
  index_actual_shapes();
  for (size_t n = 0; n < kernels_.size(); ++n) {
    const Status bound =
        kernels_[n].kernel->bind(bound_nodes_[n].workspace, bound_nodes_[n].workspace_bytes);
    if (!bound.is_ok()) return bound.with_context(describe_node(graph_->nodes[n]));
  }
  return Status::ok();
}

void CpuBackend::index_actual_shapes() {
  bounded_input_views_.assign(graph_->values.size(), {});
  for (size_t n = 0; n < kernels_.size(); ++n) {
    const Node& node = graph_->nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId id = node.inputs[i];
      if (id == kNoValue || graph_->values[static_cast<size_t>(id)].bound.empty()) continue;
      bounded_input_views_[static_cast<size_t>(id)].push_back(bound_nodes_[n].first_input + i);
    }
  }
  actual_shapes_.clear();
  actual_shape_slot_.assign(kernels_.size(), std::numeric_limits<size_t>::max());
  for (size_t n = 0; n < kernels_.size(); ++n) {
    if (!kernels_[n].data_dependent_outputs) continue;
    actual_shape_slot_[n] = actual_shapes_.size();
    actual_shapes_.resize(actual_shapes_.size() + bound_nodes_[n].output_count);
  }
}

// Runs a data-dependent node, then gives each output value the actual shape it reported
// (checked against the planned bound: the kernel must not have written past it).
Status CpuBackend::run_data_dependent_node(size_t n, RunContext& context) {
  const size_t slot = actual_shape_slot_[n];
  Shape* shapes = actual_shapes_.data() + slot;
  for (size_t i = 0; i < context.outputs.size(); ++i) shapes[i] = context.outputs[i].shape;
  context.output_shapes = shapes;
  ONEPOOL_RETURN_IF_ERROR(kernels_[n].kernel->run(context));
  const Node& node = graph_->nodes[n];
  for (size_t i = 0; i < context.outputs.size(); ++i) {
    const ValueId id = i < node.outputs.size() ? node.outputs[i] : kNoValue;
    if (id == kNoValue) continue;
    const Shape& bound = context.outputs[i].shape;
    bool within = shapes[i].rank() == bound.rank();
    for (int axis = 0; within && axis < bound.rank(); ++axis) {
      within = shapes[i][axis] >= 0 && shapes[i][axis] <= bound[axis];
    }
    if (!within) {
      return make_status(StatusCode::kInternal, "output '",
                         graph_->values[static_cast<size_t>(id)].name, "': actual shape ",
                         shapes[i].to_string(), " exceeds its bound ", bound.to_string());
    }
    value_views_[static_cast<size_t>(id)].shape = shapes[i];
    for (size_t view : bounded_input_views_[static_cast<size_t>(id)])
      views_[view].shape = shapes[i];
  }
  return Status::ok();
}

Status CpuBackend::copy_in(int32_t id, const TensorView& source) {
  const TensorView& target = value_views_[static_cast<size_t>(id)];
  // An empty tensor may have no storage at all: memcpy with a null pointer is undefined.
  if (target.bytes() == 0) return Status::ok();
  if (target.data != source.data) std::memcpy(target.data, source.data, target.bytes());
  return Status::ok();
}

Status CpuBackend::copy_out(int32_t id, const TensorView& destination) {
  const TensorView& source = value_views_[static_cast<size_t>(id)];
  if (source.bytes() == 0) return Status::ok();
  if (source.data == nullptr) {
    return make_status(StatusCode::kInternal, "output '",
                       graph_->values[static_cast<size_t>(id)].name, "' has no storage");
  }
  if (destination.data != source.data) std::memcpy(destination.data, source.data, source.bytes());
  return Status::ok();
}

Status CpuBackend::run_node(size_t n) {
  ONEPOOL_RETURN_IF_ERROR(cancelled_before(*graph_, n));
  const BoundNode& bound = bound_nodes_[n];
  RunContext context;
  context.inputs = bound.inputs(views_);
  context.outputs = bound.outputs(views_);
  context.workspace = bound.workspace;
  context.workspace_bytes = bound.workspace_bytes;
  context.threads = run_threads();
  Status status = kernels_[n].data_dependent_outputs ? run_data_dependent_node(n, context)
                                                     : kernels_[n].kernel->run(context);
  if (status.is_ok()) return status;
  // Kernels that name their node themselves (Gather's index errors) get no second prefix.
  const std::string node_label = describe_node(graph_->nodes[n]);
  if (status.message().rfind(node_label, 0) == 0) return status;
  return status.with_context(node_label);
}

Status CpuBackend::execute() {
  if (profiling_) return execute_profiled();
  if (perturb_node_ < kernels_.size()) return execute_perturbed();
  for (size_t n = 0; n < kernels_.size(); ++n) ONEPOOL_RETURN_IF_ERROR(run_node(n));
  return Status::ok();
}

// The testing aid's loop, kept apart so the plain loop pays one branch per run for it.
Status CpuBackend::execute_perturbed() {
  for (size_t n = 0; n < kernels_.size(); ++n) {
    ONEPOOL_RETURN_IF_ERROR(run_node(n));
    if (n == perturb_node_) {
      perturb_first_element(views_[bound_nodes_[n].first_output], perturb_value_);
    }
  }
  return Status::ok();
}

bool CpuBackend::set_debug_perturbation(size_t node, double value) {
  perturb_node_ = node;
  perturb_value_ = value;
  return true;
}

// One clock read between consecutive nodes (each node's end is the next one's start), so the
// node times add up to the run's time but for the loop's own few nanoseconds per node.
Status CpuBackend::execute_profiled() {
  using Clock = std::chrono::steady_clock;
  const auto ns = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  };
  const Clock::time_point run_start = Clock::now();
  Clock::time_point start = run_start;
  for (size_t n = 0; n < kernels_.size(); ++n) {
    {
      const ThreadPool::BusyScope busy(node_busy_ns_.data() + n * static_cast<size_t>(threads_),
                                       threads_);
      ONEPOOL_RETURN_IF_ERROR(run_node(n));
    }
    const Clock::time_point end = Clock::now();
    NodeTime& time = node_times_[n];
    time.last_start_ns = ns(start - run_start);
    time.last_ns = ns(end - start);
    time.total_ns += time.last_ns;
    start = end;
  }
  ++profiled_runs_;
  profiled_run_ns_ += ns(start - run_start);
  return Status::ok();
}

bool CpuBackend::enable_profiling() {
  profiling_ = true;
  node_times_.assign(kernels_.size(), NodeTime{});
  node_busy_ns_.assign(kernels_.size() * static_cast<size_t>(threads_), 0);
  return true;
}

void CpuBackend::reset_profile() {
  node_times_.assign(node_times_.size(), NodeTime{});
  node_busy_ns_.assign(node_busy_ns_.size(), 0);
  profiled_runs_ = 0;
  profiled_run_ns_ = 0;
}

SessionProfile CpuBackend::profile() const {
  SessionProfile result;
  if (!profiling_) return result;
  result.runs = profiled_runs_;
  result.total_run_ms = static_cast<double>(profiled_run_ns_) * 1e-6;
  for (size_t n = 0; n < kernels_.size(); ++n) {
    const Node& node = graph_->nodes[n];
    NodeProfile record;
    record.node = node.name;
    record.op_type = node.op_type;
    record.implementation =
        kernels_[n].implementation.empty() ? node.op_type : kernels_[n].implementation;
    for (ValueId id : node.inputs) {
      record.input_shapes.push_back(id == kNoValue ? Shape{}
                                                   : graph_->values[static_cast<size_t>(id)].shape);
    }
    record.flops = node_flops(*graph_, node);
    record.total_ms = static_cast<double>(node_times_[n].total_ns) * 1e-6;
    record.last_start_ms = static_cast<double>(node_times_[n].last_start_ns) * 1e-6;
    record.last_ms = static_cast<double>(node_times_[n].last_ns) * 1e-6;
    const int64_t* busy = node_busy_ns_.data() + n * static_cast<size_t>(threads_);
    for (int t = 0; t < threads_; ++t) {
      record.thread_busy_ms.push_back(static_cast<double>(busy[t]) * 1e-6);
    }
    result.nodes.push_back(std::move(record));
  }
  return result;
}

}  // namespace

NodeMemoryNeeds memory_needs(const Graph& graph, int* unsupported, int threads) {
  const KernelRegistry registry = KernelRegistry::with_all_kernels();
  NodeMemoryNeeds needs;
  for (const Node& node : graph.nodes) {
    Expected<PreparedKernel> prepared =
        prepare_kernel(registry, graph, node, session_threads(threads));
    if (prepared) {
      add_memory_needs(*prepared, needs);
      continue;
    }
    if (unsupported != nullptr) ++*unsupported;
    add_memory_needs(PreparedKernel{}, needs);
  }
  return needs;
}

Expected<std::unique_ptr<Backend>> create_cpu_backend(int threads, CpuIsa isa,
                                                      std::shared_ptr<CpuThreadPool> shared_pool) {
  ONEPOOL_ASSIGN_OR_RETURN(const CpuIsa resolved, resolve_cpu_isa(isa));
  if (shared_pool == nullptr) {
    return std::unique_ptr<Backend>(
        std::make_unique<CpuBackend>(session_threads(threads), resolved, nullptr));
  }
  if (threads != 0 && threads != shared_pool->threads()) {
    return make_status(StatusCode::kInvalidArgument, "SessionOptions::threads is ", threads,
                       " but SessionOptions::thread_pool runs ", shared_pool->threads(),
                       " threads: leave threads at 0 with a shared pool (or set it to ",
                       shared_pool->threads(), ")");
  }
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(resolved, std::move(shared_pool)));
}

std::unique_ptr<Backend> create_nested_cpu_backend(int threads, CpuIsa isa,
                                                   ThreadPool* const* shared_threads) {
  return std::make_unique<CpuBackend>(session_threads(threads), isa, shared_threads);
}

}  // namespace onepool::cpu
