// Scan (opset 9+): the body is a nested plan inside the node's workspace, run once per step of
// the scanned axis.
//
// Import gave the node its body as a Graph (planner/import/import_runtime_scan.h) whose inputs line
// up with the node's: N states, M scan-input slices, then the captured outer values. Workspace: the
// body's region, then one staging slot per state.
// Run: states and captured values are copied into the body once; each step copies row t (or
//   L-1-t, scan_input_directions) of each scan input into the body's slice input, runs the body,
//   copies each scan-output slice into row t (or L-1-t) of the node's output, and moves the state
//   outputs back into the state inputs through the staging slots. No allocation.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "planner/core/control_flow_attributes.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/nested_graph.h"

namespace onepool::cpu {

namespace {

// Row `index` of a tensor along one axis, as `outer` blocks of `inner` bytes `length` rows apart.
struct AxisSlicing {
  size_t outer = 1;
  size_t inner = 0;  // bytes
  int64_t length = 0;
  bool reverse = false;

  static AxisSlicing of(const Value& value, int axis, bool reverse) {
    AxisSlicing slicing;
    slicing.inner = dtype_size(value.dtype);
    for (int d = 0; d < value.shape.rank(); ++d) {
      if (d < axis) slicing.outer *= static_cast<size_t>(value.shape[d]);
      if (d > axis) slicing.inner *= static_cast<size_t>(value.shape[d]);
    }
    slicing.length = value.shape[axis];
    slicing.reverse = reverse;
    return slicing;
  }
  size_t offset(size_t block, int64_t step) const {
    const int64_t row = reverse ? length - 1 - step : step;
    return (block * static_cast<size_t>(length) + static_cast<size_t>(row)) * inner;
  }
};

int attribute_axis(const Node& node, const char* name, size_t i, int rank) {
  const std::vector<int64_t> axes = node.attributes.get_ints(name);
  const int64_t axis = i < axes.size() ? axes[i] : 0;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

bool attribute_reverse(const Node& node, const char* name, size_t i) {
  const std::vector<int64_t> directions = node.attributes.get_ints(name);
  return i < directions.size() && directions[i] != 0;
}

class ScanKernel final : public Kernel {
 public:
  explicit ScanKernel(std::string label) : label_(std::move(label)) {}

  Status prepare(const NodeContext& node) {
    const auto& graphs = node.node().subgraphs;
    if (graphs.size() != 1 || graphs[0] == nullptr) {
      return node.error(StatusCode::kInvalidModel, "expected one body graph");
    }
    const int64_t scans = node.node().attributes.get_int("num_scan_inputs", -1);
    ONEPOOL_ASSIGN_OR_RETURN(NestedGraph body,
                             NestedGraph::prepare(node, "body", *graphs[0], &threads_));
    body_.emplace(std::move(body));
    const Graph& graph = body_->graph();
    if (scans < 1 || graph.inputs.size() != node.input_count() ||
        graph.outputs.size() != node.output_count()) {
      return node.error(StatusCode::kInvalidModel, "its body does not fit its inputs and outputs");
    }
    return layout(node, static_cast<size_t>(scans));
  }

  size_t workspace_bytes() const { return workspace_bytes_; }
  size_t body_pool_bytes() const { return body_->pool_bytes(); }
  NestedPlan nested_plan(const std::string& node) const { return body_->summary(node); }

  Status bind(std::byte* workspace, size_t workspace_bytes) override {
    return states_values_.bind(*body_, workspace, workspace_bytes);
  }

  Status run(const RunContext& context) override {
    threads_ = context.threads;
    Status status = run_scan(context);
    threads_ = nullptr;
    return status.is_ok() ? status : status.with_context(label_);
  }

 private:
  Status layout(const NodeContext& node, size_t scans) {
    // Inputs: states, scans, captured values; outputs: states, scan outputs.
    states_ = static_cast<size_t>(node.node().attributes.get_int(kScanStatesAttribute, -1));
    if (states_ + scans > node.input_count() || states_ > node.output_count()) {
      return node.error(StatusCode::kInvalidModel, "its state and scan counts do not fit");
    }
    first_captured_ = states_ + scans;
    for (size_t m = 0; m < scans; ++m) {
      const Value& input = node.input(states_ + m);
      const int axis = attribute_axis(node.node(), "scan_input_axes", m, input.shape.rank());
      scan_inputs_.push_back(
          AxisSlicing::of(input, axis, attribute_reverse(node.node(), "scan_input_directions", m)));
    }
    for (size_t k = states_; k < node.output_count(); ++k) {
      const Value& output = node.output(k);
      const int axis =
          attribute_axis(node.node(), "scan_output_axes", k - states_, output.shape.rank());
      scan_outputs_.push_back(AxisSlicing::of(
          output, axis, attribute_reverse(node.node(), "scan_output_directions", k - states_)));
    }
    workspace_bytes_ = states_values_.layout(*body_, 0, 0, states_);
    return Status::ok();
  }

  void copy_step(const RunContext& context, int64_t step) {
    const auto& inputs = body_->graph().inputs;
    for (size_t m = 0; m < scan_inputs_.size(); ++m) {
      const AxisSlicing& slicing = scan_inputs_[m];
      auto* target = static_cast<std::byte*>(body_->view(inputs[states_ + m]).data);
      const auto* source = static_cast<const std::byte*>(context.inputs[states_ + m].data);
      if (target == nullptr) continue;
      for (size_t o = 0; o < slicing.outer; ++o) {
        std::memcpy(target + o * slicing.inner, source + slicing.offset(o, step), slicing.inner);
      }
    }
  }

  void store_step(const RunContext& context, int64_t step) {
    const auto& outputs = body_->graph().outputs;
    for (size_t k = 0; k < scan_outputs_.size(); ++k) {
      auto* target = static_cast<std::byte*>(context.outputs[states_ + k].data);
      const auto* source = static_cast<const std::byte*>(body_->view(outputs[states_ + k]).data);
      if (target == nullptr || source == nullptr) continue;
      const AxisSlicing& slicing = scan_outputs_[k];
      for (size_t o = 0; o < slicing.outer; ++o) {
        std::memcpy(target + slicing.offset(o, step), source + o * slicing.inner, slicing.inner);
      }
    }
  }

  Status run_scan(const RunContext& context) {
    const auto& inputs = body_->graph().inputs;
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (j >= states_ && j < first_captured_) continue;
      ONEPOOL_RETURN_IF_ERROR(body_->copy_in(inputs[j], context.inputs[j]));
    }
    const int64_t length = scan_inputs_.front().length;
    for (int64_t step = 0; step < length; ++step) {
      copy_step(context, step);
      ONEPOOL_RETURN_IF_ERROR(body_->execute());
      store_step(context, step);
      states_values_.carry(*body_);
    }
    for (size_t c = 0; c < states_; ++c) {
      if (context.outputs[c].data == nullptr) continue;
      ONEPOOL_RETURN_IF_ERROR(body_->copy_out(inputs[c], context.outputs[c]));
    }
    return Status::ok();
  }

  std::string label_;
  size_t states_ = 0;
  size_t first_captured_ = 0;
  std::optional<NestedGraph> body_;
  std::vector<AxisSlicing> scan_inputs_;
  std::vector<AxisSlicing> scan_outputs_;
  CarriedValues states_values_;
  size_t workspace_bytes_ = 0;
  ThreadPool* threads_ = nullptr;  // the Session's pool while run() runs
};

Expected<PreparedKernel> make_scan(const NodeContext& node) {
  auto kernel = std::make_unique<ScanKernel>(describe_node(node.node()));
  ONEPOOL_RETURN_IF_ERROR(kernel->prepare(node));
  PreparedKernel prepared;
  prepared.workspace_bytes = kernel->workspace_bytes();
  prepared.implementation = str_cat("Scan (nested plan: body ", kernel->body_pool_bytes(), " B)");
  prepared.nested_plans = {kernel->nested_plan(node.node().name)};
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

void register_scan_kernel(KernelRegistry& registry) { registry.add("Scan", &make_scan); }

}  // namespace onepool::cpu
