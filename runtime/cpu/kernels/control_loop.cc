// Loop: the body is a nested plan inside the node's workspace, reused by every iteration.
//
// Import gave the node its body as a Graph (planner/import_runtime_loop.h) whose inputs are the
// iteration number, the condition, the carried values, then the captured outer values: the
// node's inputs [M, cond, carried..., captured...] line up with the body's from the carried
// values on. Workspace: the body's region, then one staging slot per carried value.
// Run: the carried initial values and captured values are copied into the body's inputs once;
//   each iteration writes the iteration number and condition into the body's inputs, runs the
//   body, copies each scan output into its row of the node's scan output, and moves the carried
//   outputs back into the carried inputs through the staging slots (a body may swap two carried
//   values through views of its inputs). At the end the carried inputs are copied to the node's
//   outputs. No allocation. A run that stops before M with scan outputs planned for M rows
//   fails, naming the node and both counts.
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "planner/import_runtime_loop.h"
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
    ONEPOOL_ASSIGN_OR_RETURN(NestedGraph body,
                             NestedGraph::prepare(node, "body", *graphs[0], &threads_));
    body_.emplace(std::move(body));
    ONEPOOL_RETURN_IF_ERROR(check_shapes(node));
    workspace_bytes_ = carried_values_.layout(*body_, 2, 1, carried_);
    return Status::ok();
  }

  size_t workspace_bytes() const { return workspace_bytes_; }
  size_t body_pool_bytes() const { return body_->pool_bytes(); }
  NestedPlan nested_plan(const std::string& node) const { return body_->summary(node); }

  Status bind(std::byte* workspace, size_t workspace_bytes) override {
    return carried_values_.bind(*body_, workspace, workspace_bytes);
  }

  Status run(const RunContext& context) override {
    threads_ = context.threads;
    Status status = run_loop(context);
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

  Status run_loop(const RunContext& context) {
    const auto& inputs = body_->graph().inputs;
    const bool has_trip = context.inputs[0].data != nullptr;
    const int64_t trip =
        has_trip ? *context.inputs[0].as<const int64_t>() : std::numeric_limits<int64_t>::max();
    bool keep_going = context.inputs[1].data == nullptr || *context.inputs[1].as<const bool>();
    for (size_t j = 2; j < inputs.size(); ++j) {
      ONEPOOL_RETURN_IF_ERROR(body_->copy_in(inputs[j], context.inputs[j]));
    }
    auto* iteration = body_->view(inputs[0]).as<int64_t>();
    auto* condition = body_->view(inputs[1]).as<bool>();
    int64_t done = 0;
    for (; done < trip && keep_going; ++done) {
      if (iteration != nullptr) *iteration = done;
      if (condition != nullptr) *condition = keep_going;
      ONEPOOL_RETURN_IF_ERROR(body_->execute());
      keep_going = *body_->view(body_->graph().outputs[0]).as<const bool>();
      if (!scan_fits(context, done)) break;
      copy_scan_rows(context, done);
      carried_values_.carry(*body_);
    }
    ONEPOOL_RETURN_IF_ERROR(check_scan_rows(context, done));
    for (size_t c = 0; c < carried_; ++c) {
      if (context.outputs[c].data == nullptr) continue;
      ONEPOOL_RETURN_IF_ERROR(body_->copy_out(inputs[2 + c], context.outputs[c]));
    }
    return Status::ok();
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
  prepared.implementation = str_cat("Loop (nested plan: body ", kernel->body_pool_bytes(), " B)");
  prepared.nested_plans = {kernel->nested_plan(node.node().name)};
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

void register_loop_kernel(KernelRegistry& registry) { registry.add("Loop", &make_loop); }

}  // namespace onepool::cpu
