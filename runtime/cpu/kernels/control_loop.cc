// Loop: the body is a nested plan inside the node's workspace, reused by every iteration.
//
// Import gave the node its body as a Graph (planner/import/import_runtime_loop.h) whose inputs are
// the iteration number, the condition, the carried values, then the captured outer values: the
// node's inputs [M, cond, carried..., captured...] line up with the body's from the carried
// values on. Workspace: the body's region, then one staging slot per carried value.
// Run: the carried initial values and captured values are copied into the body's inputs once;
//   each iteration writes the iteration number and condition into the body's inputs, runs the
//   body, copies each scan output into its row of the node's scan output, and moves the carried
//   outputs back into the carried inputs through the staging slots (a body may swap two carried
//   values through views of its inputs). At the end the carried inputs are copied to the node's
//   outputs. No allocation. A run that stops before M with scan outputs planned for M rows
//   fails, naming the node and both counts.
// Scan outputs planned at a --bound B (kLoopScanBoundAttribute): the loop runs its M (a runtime
//   input, or absent) until its condition stops it; rows land densely from the start of each
//   scan output and the actual shapes [rows, ...] are reported (a data-dependent kernel). A loop
//   that runs past B stores nothing more, counts its remaining iterations (the body runs on, as
//   its carried values decide when it stops) and fails with the tensor, the bound and the count.
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "planner/core/control_flow_attributes.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/nested_graph.h"

namespace onepool::cpu {

namespace {

class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(std::string label) : label_(std::move(label)) {}

  Status prepare(const NodeContext& node) {
    const auto& graphs = node.node().subgraphs;
    if (graphs.size() != 1 || graphs[0] == nullptr) {
      return node.error(StatusCode::kInvalidModel, "expected one body graph");
    }
    carried_ = static_cast<size_t>(node.node().attributes.get_int(kLoopCarriedAttribute, -1));
    scan_bound_ = node.node().attributes.get_int(kLoopScanBoundAttribute, -1);
    for (size_t k = carried_; k < node.output_count(); ++k) {
      scan_names_.push_back(node.has_output(k) ? node.output(k).name : std::string());
    }
    ONEPOOL_ASSIGN_OR_RETURN(NestedGraph body,
                             NestedGraph::prepare(node, "body", *graphs[0], &threads_));
    body_.emplace(std::move(body));
    ONEPOOL_RETURN_IF_ERROR(check_shapes(node));
    workspace_bytes_ = carried_values_.layout(*body_, 2, 1, carried_);
    return Status::ok();
  }

  size_t workspace_bytes() const { return workspace_bytes_; }
  bool scan_outputs_bounded() const { return scan_bound_ >= 0; }
  size_t body_pool_bytes() const { return body_->pool_bytes(); }
  NestedPlan nested_plan(const std::string& node) const { return body_->summary(node); }

  Status bind(std::byte* workspace, size_t workspace_bytes) override {
    return carried_values_.bind(*body_, workspace, workspace_bytes);
  }

  Status run(const RunContext& context) override {
    threads_ = context.threads;
    Status status = scan_outputs_bounded() ? run_bounded_loop(context) : run_loop(context);
    threads_ = nullptr;
    return status.is_ok() ? status : status.with_context(label_);
  }

 private:
  Status check_shapes(const NodeContext& node) const {
    const Graph& graph = body_->graph();
    if (carried_ > node.output_count() || graph.inputs.size() != node.input_count() ||
        graph.outputs.size() != 1 + node.output_count()) {
      return node.error(StatusCode::kInvalidModel, "its body does not fit its ", node.input_count(),
                        " inputs and ", node.output_count(), " outputs");
    }
    for (size_t j = 2; j < node.input_count(); ++j) {
      const Value& inner = graph.values[static_cast<size_t>(graph.inputs[j])];
      if (!node.has_input(j) || node.input(j).bytes() != inner.bytes()) {
        return node.error(StatusCode::kInvalidModel, "body input '", inner.name,
                          "' does not match the node's input ", j);
      }
    }
    return Status::ok();
  }

  void copy_scan_rows(const RunContext& context, int64_t row) {
    const size_t outputs = context.outputs.size();
    for (size_t k = carried_; k < outputs; ++k) {
      const TensorView& target = context.outputs[k];
      const TensorView slice = body_->view(body_->graph().outputs[1 + k]);
      if (target.data == nullptr || slice.bytes() == 0) continue;
      std::memcpy(static_cast<std::byte*>(target.data) + static_cast<size_t>(row) * slice.bytes(),
                  slice.data, slice.bytes());
    }
  }

  // The body's inputs: carried initial and captured values; then the trip count (or "none") and
  // the first condition.
  struct LoopStart {
    int64_t trip = std::numeric_limits<int64_t>::max();
    bool keep_going = true;
  };
  Expected<LoopStart> start_loop(const RunContext& context) {
    const auto& inputs = body_->graph().inputs;
    LoopStart start;
    if (context.inputs[0].data != nullptr) start.trip = *context.inputs[0].as<const int64_t>();
    start.keep_going = context.inputs[1].data == nullptr || *context.inputs[1].as<const bool>();
    for (size_t j = 2; j < inputs.size(); ++j) {
      ONEPOOL_RETURN_IF_ERROR(body_->copy_in(inputs[j], context.inputs[j]));
    }
    return start;
  }

  // One iteration: the iteration number and condition in, the body run; returns the body's
  // condition.
  Expected<bool> run_iteration(int64_t done, bool keep_going) {
    const auto& inputs = body_->graph().inputs;
    if (auto* iteration = body_->view(inputs[0]).as<int64_t>()) *iteration = done;
    if (auto* condition = body_->view(inputs[1]).as<bool>()) *condition = keep_going;
    ONEPOOL_RETURN_IF_ERROR(body_->execute());
    return *body_->view(body_->graph().outputs[0]).as<const bool>();
  }

  Status copy_carried_out(const RunContext& context) {
    const auto& inputs = body_->graph().inputs;
    for (size_t c = 0; c < carried_; ++c) {
      if (context.outputs[c].data == nullptr) continue;
      ONEPOOL_RETURN_IF_ERROR(body_->copy_out(inputs[2 + c], context.outputs[c]));
    }
    return Status::ok();
  }

  Status run_loop(const RunContext& context) {
    ONEPOOL_ASSIGN_OR_RETURN(LoopStart start, start_loop(context));
    bool keep_going = start.keep_going;
    int64_t done = 0;
    for (; done < start.trip && keep_going; ++done) {
      ONEPOOL_ASSIGN_OR_RETURN(keep_going, run_iteration(done, keep_going));
      if (!scan_fits(context, done)) break;
      copy_scan_rows(context, done);
      carried_values_.carry(*body_);
    }
    ONEPOOL_RETURN_IF_ERROR(check_scan_rows(context, done));
    return copy_carried_out(context);
  }

  // Scan outputs planned at the bound: as many rows as the loop runs, up to the bound.
  Status run_bounded_loop(const RunContext& context) {
    if (context.output_shapes == nullptr) {
      return Status(StatusCode::kInternal, "run without RunContext::output_shapes");
    }
    ONEPOOL_ASSIGN_OR_RETURN(LoopStart start, start_loop(context));
    bool keep_going = start.keep_going;
    int64_t done = 0;
    for (; done < start.trip && keep_going; ++done) {
      ONEPOOL_ASSIGN_OR_RETURN(keep_going, run_iteration(done, keep_going));
      if (done < scan_bound_) copy_scan_rows(context, done);
      carried_values_.carry(*body_);
    }
    if (done > scan_bound_) {
      const std::string name = scan_names_.empty() ? std::string() : scan_names_.front();
      return make_status(StatusCode::kOutOfRange, "scan output '", name, "' has room for ",
                         scan_bound_, " iterations (--bound ", name, "=", scan_bound_,
                         ") but the loop ran ", done, ": give a larger --bound");
    }
    for (size_t k = carried_; k < context.outputs.size(); ++k) {
      context.output_shapes[k] = context.outputs[k].shape;
      context.output_shapes[k][0] = done;
    }
    return copy_carried_out(context);
  }

  // True while scan outputs have a row for iteration `row` (none: always).
  bool scan_fits(const RunContext& context, int64_t row) const {
    for (size_t k = carried_; k < context.outputs.size(); ++k) {
      if (row >= context.outputs[k].shape[0]) return false;
    }
    return true;
  }

  Status check_scan_rows(const RunContext& context, int64_t done) const {
    for (size_t k = carried_; k < context.outputs.size(); ++k) {
      const int64_t rows = context.outputs[k].shape[0];
      if (done != rows) {
        return make_status(StatusCode::kOutOfRange, "scan output ", k - carried_,
                           " is planned for ", rows, " iterations (M) but the loop ran ", done,
                           "; a loop that stops early has a data-dependent scan length, which is "
                           "not supported yet");
      }
    }
    return Status::ok();
  }

  std::string label_;
  size_t carried_ = 0;
  int64_t scan_bound_ = -1;  // rows the scan outputs have room for; -1: exactly M
  std::vector<std::string> scan_names_;
  std::optional<NestedGraph> body_;
  CarriedValues carried_values_;
  size_t workspace_bytes_ = 0;
  ThreadPool* threads_ = nullptr;  // the Session's pool while run() runs
};

Expected<PreparedKernel> make_loop(const NodeContext& node) {
  if (node.input_count() < 2) {
    return node.error(StatusCode::kInvalidModel, "needs inputs M and cond (either may be empty)");
  }
  if (node.has_input(0) &&
      (node.input(0).dtype != DType::kInt64 || node.input(0).shape.element_count() != 1)) {
    return node.error(StatusCode::kInvalidModel, "M must be one int64");
  }
  if (node.has_input(1) &&
      (node.input(1).dtype != DType::kBool || node.input(1).shape.element_count() != 1)) {
    return node.error(StatusCode::kInvalidModel, "cond must be one bool");
  }
  auto kernel = std::make_unique<LoopKernel>(describe_node(node.node()));
  ONEPOOL_RETURN_IF_ERROR(kernel->prepare(node));
  PreparedKernel prepared;
  prepared.workspace_bytes = kernel->workspace_bytes();
  prepared.data_dependent_outputs = kernel->scan_outputs_bounded();
  prepared.implementation = str_cat("Loop (nested plan: body ", kernel->body_pool_bytes(), " B)");
  prepared.nested_plans = {kernel->nested_plan(node.node().name)};
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

void register_loop_kernel(KernelRegistry& registry) { registry.add("Loop", &make_loop); }

}  // namespace onepool::cpu
