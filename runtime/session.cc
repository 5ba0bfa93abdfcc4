// Session: backend + plan + bound views.
#include "onepool/session.h"

#include <chrono>

#include "planner/analysis/build_plan.h"
#include "planner/core/graph.h"
#include "runtime/backend.h"
#include "runtime/session_impl.h"
#include "runtime/session_with_backend.h"
#include "runtime/shape_input_feeds.h"

namespace onepool {

namespace {
double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}
// The testing aid SessionOptions::debug_perturb_node: the node's execution index, checked.
Expected<size_t> find_perturbed_node(const Graph& graph, const SessionOptions& options) {
  const std::string& name = options.debug_perturb_node;
  if (options.profile) {
    return make_status(StatusCode::kInvalidArgument,
                       "debug_perturb_node and profile cannot be combined");
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (node.name != name) continue;
    const ValueId out = node.outputs.empty() ? kNoValue : node.outputs[0];
    const Value* value = out == kNoValue ? nullptr : &graph.values[static_cast<size_t>(out)];
    if (value == nullptr || value->bytes() == 0 ||
        (value->dtype != DType::kFloat32 && value->dtype != DType::kFloat64)) {
      const std::string got =
          value == nullptr ? "none"
                           : str_cat(dtype_name(value->dtype), " ", value->shape.to_string());
      return make_status(StatusCode::kInvalidArgument, "debug_perturb_node: ", describe_node(node),
                         ": expected a non-empty float32 or float64 output 0, got ", got);
    }
    return n;
  }
  return make_status(StatusCode::kInvalidArgument, "debug_perturb_node: no node named '", name,
                     "' in the model as loaded (optimization may have fused or removed it)");
}

Status set_debug_perturbation(Backend& backend, const Graph& graph, const SessionOptions& options) {
  ONEPOOL_ASSIGN_OR_RETURN(const size_t node, find_perturbed_node(graph, options));
  if (backend.set_debug_perturbation(node, options.debug_perturb_value)) return Status::ok();
  return make_status(StatusCode::kUnsupported, "debug_perturb_node is not supported on ",
                     backend.device().to_string());
}
}  // namespace

namespace {
// Session::create's messages for SessionOptions::logger: the kernel of each node (kDebug), then
// one summary line (kInfo).
void log_session(const SessionImpl& impl, const Logger& logger) {
  if (!logger) return;
  const Graph& graph = impl.model->graph();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const std::string implementation = impl.backend->node_implementation(n);
    logger(LogLevel::kDebug,
           str_cat("kernel of ", describe_node(graph.nodes[n]), ": ",
                   implementation.empty() ? graph.nodes[n].op_type : implementation));
  }
  logger(LogLevel::kInfo,
         str_cat("session on ", impl.backend->device().to_string(), ": ", graph.nodes.size(),
                 " nodes, pool ", impl.plan.pool_bytes, " bytes; prepare ", impl.timings.prepare_ms,
                 " ms, plan ", impl.timings.plan_ms, " ms, allocate ", impl.timings.allocate_ms,
                 " ms"));
}
}  // namespace

Status check_tensor_matches(const TensorInfo& info, const TensorView& view, const char* role) {
  if (view.dtype != info.dtype) {
    return make_status(StatusCode::kInvalidArgument, role, " '", info.name, "': expected dtype ",
                       dtype_name(info.dtype), ", got ", dtype_name(view.dtype));
  }
  if (view.shape.rank() != info.shape.rank()) {
    return make_status(StatusCode::kInvalidArgument, role, " '", info.name, "': expected shape ",
                       info.shape.to_string(), " (rank ", info.shape.rank(), "), got ",
                       view.shape.to_string(), " (rank ", view.shape.rank(), ")");
  }
  for (int axis = 0; axis < info.shape.rank(); ++axis) {
    if (view.shape[axis] != info.shape[axis]) {
      return make_status(StatusCode::kInvalidArgument, role, " '", info.name, "': expected shape ",
                         info.shape.to_string(), ", got ", view.shape.to_string(), "; axis ", axis,
                         " differs (expected ", info.shape[axis], ", got ", view.shape[axis], ")");
    }
  }
  if (view.data == nullptr && view.bytes() > 0) {
    return make_status(StatusCode::kInvalidArgument, role, " '", info.name, "': data is null");
  }
  return Status::ok();
}

namespace {
// Session::create's steps 1 and 2, which Plan::build shares: every kernel prepared (all
// unsupported nodes reported at once), then the plan built, or a saved one verified.
Expected<Plan> prepare_and_plan(Backend& backend, const Model& model, const SessionOptions& options,
                                SessionTimings& timings) {
  auto start = std::chrono::steady_clock::now();
  NodeMemoryNeeds needs;
  ONEPOOL_RETURN_IF_ERROR(backend.prepare(model, needs));
  timings.prepare_ms = elapsed_ms(start);
  // Step 2. Plan (or adopt a saved plan) and verify it.
  start = std::chrono::steady_clock::now();
  Plan plan;
  if (options.plan_override != nullptr) {
    plan = *options.plan_override;
    ONEPOOL_RETURN_IF_ERROR(plan.verify().with_context("the given plan"));
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(plan, build_plan(model.graph(), options.plan, needs));
  }
  timings.plan_ms = elapsed_ms(start);
  return plan;
}
}  // namespace

Expected<Plan> Plan::build(const Model& model, const SessionOptions& options) {
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, create_backend(options));
  SessionTimings timings;
  return prepare_and_plan(*backend, model, options, timings);
}

Expected<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model,
                                                   const SessionOptions& options) {
  if (!model) return make_status(StatusCode::kInvalidArgument, "Session::create: null model");
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, create_backend(options));
  return create_session_with_backend(std::move(model), options, std::move(backend));
}

Expected<std::unique_ptr<Session>> create_session_with_backend(std::shared_ptr<const Model> model,
                                                               const SessionOptions& options,
                                                               std::unique_ptr<Backend> backend) {
  if (!model || !backend) {
    return make_status(StatusCode::kInvalidArgument, "Session::create: null model or backend");
  }
  auto impl = std::make_unique<SessionImpl>();
  impl->model = model;
  impl->backend = std::move(backend);
  if (!options.debug_perturb_node.empty()) {
    ONEPOOL_RETURN_IF_ERROR(set_debug_perturbation(*impl->backend, model->graph(), options));
  }
  // Steps 1 and 2 (Plan::build's path): prepare every kernel, then plan (or adopt and verify a
  // saved plan).
  ONEPOOL_ASSIGN_OR_RETURN(impl->plan,
                           prepare_and_plan(*impl->backend, *model, options, impl->timings));
  // Step 3. One pool allocation; views bound once.
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_RETURN_IF_ERROR(
      impl->backend->bind(*model, impl->plan, options.pool, options.pool_capacity));
  impl->timings.allocate_ms = elapsed_ms(start);
  if (options.profile && !impl->backend->enable_profiling()) {
    return make_status(StatusCode::kUnsupported, "profiling is not supported on ",
                       impl->backend->device().to_string());
  }
  const Graph& graph = model->graph();
  impl->input_ids.assign(graph.inputs.begin(), graph.inputs.end());
  impl->output_ids.assign(graph.outputs.begin(), graph.outputs.end());
  impl->feeds.resize(graph.inputs.size());
  index_external_io(*impl);
  log_session(*impl, options.logger);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Status Session::run(std::span<const TensorView> inputs, std::span<const TensorView> outputs) {
  const auto& input_infos = impl_->model->inputs();
  const auto& output_infos = impl_->model->outputs();
  const size_t shape_inputs = impl_->model->shape_inputs().size();
  if (shape_inputs > 0 && inputs.size() == input_infos.size() + shape_inputs) {
    ONEPOOL_RETURN_IF_ERROR(split_full_feed(*impl_->model, inputs, impl_->feeds));
    inputs = impl_->feeds;
  }
  if (inputs.size() != input_infos.size()) {
    return make_status(StatusCode::kInvalidArgument, "expected ", input_infos.size(), " inputs",
                       shape_inputs == 0 ? ""
                                         : str_cat(" (or ", input_infos.size() + shape_inputs,
                                                   " with the shape inputs)"),
                       ", got ", inputs.size());
  }
  if (outputs.size() != output_infos.size()) {
    return make_status(StatusCode::kInvalidArgument, "expected ", output_infos.size(),
                       " outputs, got ", outputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(input_infos[i], inputs[i], "input"));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(output_infos[i], outputs[i], "output"));
  }
  ONEPOOL_RETURN_IF_ERROR(point_external_io(*impl_, inputs, outputs));
  // In-place inputs and outputs are the backend's own views now: their copies are skipped.
  return impl_->backend->run(impl_->input_ids, inputs, impl_->output_ids, outputs);
}

Status Session::run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                    const RunOptions& options) {
  impl_->backend->set_cancel_flag(options.cancel);
  Status status = run(inputs, outputs);
  impl_->backend->set_cancel_flag(nullptr);
  return status;
}

Status Session::run_in_place() {
  for (int32_t id : impl_->external_ids) {
    const TensorView view = impl_->backend->value_view(id);
    if (view.data != nullptr || view.bytes() == 0) continue;
    return make_status(StatusCode::kFailedPrecondition, "external tensor '",
                       impl_->model->graph().values[static_cast<size_t>(id)].name,
                       "' has no buffer yet: bind it (bind_input / bind_output) or run() once "
                       "before run_in_place()");
  }
  return impl_->backend->execute();
}

TensorView Session::input_view(size_t i) const {
  return impl_->backend->value_view(impl_->input_ids[i]);
}

TensorView Session::output_view(size_t i) const {
  return impl_->backend->value_view(impl_->output_ids[i]);
}

Shape Session::output_shape(size_t i) const { return output_view(i).shape; }

const Plan& Session::plan() const { return impl_->plan; }
const Model& Session::model() const { return *impl_->model; }
const SessionTimings& Session::timings() const { return impl_->timings; }
Device Session::device() const { return impl_->backend->device(); }
size_t Session::owned_pool_bytes() const { return impl_->backend->owned_pool_bytes(); }
CudaGraphStats Session::cuda_graph_stats() const { return impl_->backend->cuda_graph_stats(); }
SessionProfile Session::profile() const { return impl_->backend->profile(); }
void Session::reset_profile() { impl_->backend->reset_profile(); }

}  // namespace onepool
