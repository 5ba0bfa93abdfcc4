// If with a runtime condition: each branch is a nested plan inside the node's workspace.
//
// Import gave the node its two branches as Graphs (planner/import/import_runtime_if.h), whose graph
// inputs are the outer values they read: the node's inputs after the condition, in order.
// Prepare: each branch becomes a NestedGraph (nested_graph.h). The node's workspace is the larger
//   of the two branch regions: one record of the parent pool, live only at the If's step, that
//   whichever branch runs uses as its own pool.
// Bind: both branches are bound into that region (they never run at once).
// Run: the condition picks a branch; the outer values it reads are copied into its inputs, its
//   nodes run on the Session's threads, and its outputs are copied to the node's outputs. No
//   allocation.
// A branch import found invalid for the loaded input shapes (planner/import/import_runtime_if.h)
// has no Graph: a run that takes it fails with import's reason.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/nested_graph.h"

namespace onepool::cpu {

namespace {

constexpr const char* kBranchNames[2] = {"then_branch", "else_branch"};

// One branch: its nested graph, or why it cannot run with the loaded shapes.
struct Branch {
  const char* name = "";
  std::optional<NestedGraph> nested;
  std::string unavailable;
};

// Branch input j is the node's input j + 1 (import gives both branches every captured value),
// with the same type.
Status check_branch_inputs(const NodeContext& node, const Branch& branch) {
  const Graph& graph = branch.nested->graph();
  if (graph.inputs.size() + 1 != node.input_count()) {
    return node.error(StatusCode::kInvalidModel, branch.name, " has ", graph.inputs.size(),
                      " input(s), the node ", node.input_count(),
                      " (the condition and one per value the branches read)");
  }
  for (size_t j = 0; j < graph.inputs.size(); ++j) {
    const Value& inner = graph.values[static_cast<size_t>(graph.inputs[j])];
    if (!node.has_input(j + 1) || node.input(j + 1).dtype != inner.dtype ||
        node.input(j + 1).shape != inner.shape) {
      return node.error(StatusCode::kInvalidModel, branch.name, " input '", inner.name, "' is ",
                        dtype_name(inner.dtype), " ", inner.shape.to_string(),
                        ", the node's input ", j + 1, " differs");
    }
  }
  return Status::ok();
}

Status check_branch_outputs(const NodeContext& node, const Branch& branch) {
  const Graph& graph = branch.nested->graph();
  if (graph.outputs.size() != node.output_count()) {
    return node.error(StatusCode::kInvalidModel, branch.name, " has ", graph.outputs.size(),
                      " output(s), the node ", node.output_count());
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    if (!node.has_output(i)) continue;
    const Value& inner = graph.values[static_cast<size_t>(graph.outputs[i])];
    const Value& outer = node.output(i);
    // Branches that yield different shapes: the node's output is planned at the larger.
    bool fits = inner.shape == outer.shape;
    if (!outer.bound.empty() && inner.shape.rank() == outer.shape.rank()) {
      fits = true;
      for (int axis = 0; axis < outer.shape.rank(); ++axis) {
        fits = fits && inner.shape[axis] <= outer.shape[axis];
      }
    }
    if (inner.dtype != outer.dtype || !fits) {
      return node.error(StatusCode::kInvalidModel, branch.name, " output ", i, " is ",
                        dtype_name(inner.dtype), " ", inner.shape.to_string(), ", the node's '",
                        outer.name, "' ", dtype_name(outer.dtype), " ", outer.shape.to_string());
    }
  }
  return Status::ok();
}

Expected<Branch> prepare_branch(const NodeContext& node, size_t b,
                                const std::shared_ptr<const Graph>& graph,
                                ThreadPool* const* threads) {
  Branch branch;
  branch.name = kBranchNames[b];
  if (graph == nullptr) {
    branch.unavailable = node.node().attributes.get_string(str_cat(branch.name, "_error"), "");
    if (branch.unavailable.empty()) {
      return node.error(StatusCode::kInvalidModel, "has no ", branch.name);
    }
    return branch;
  }
  ONEPOOL_ASSIGN_OR_RETURN(NestedGraph nested,
                           NestedGraph::prepare(node, branch.name, *graph, threads));
  branch.nested.emplace(std::move(nested));
  ONEPOOL_RETURN_IF_ERROR(check_branch_inputs(node, branch));
  ONEPOOL_RETURN_IF_ERROR(check_branch_outputs(node, branch));
  return branch;
}

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(std::string label) : label_(std::move(label)) {}

  Status prepare(const NodeContext& node) {
    const std::vector<std::shared_ptr<const Graph>>& graphs = node.node().subgraphs;
    if (graphs.size() != 2) {
      return node.error(StatusCode::kInvalidModel, "expected then_branch and else_branch, got ",
                        graphs.size(), " graph(s)");
    }
    for (size_t b = 0; b < 2; ++b) {
      ONEPOOL_ASSIGN_OR_RETURN(branches_[b], prepare_branch(node, b, graphs[b], &threads_));
    }
    return Status::ok();
  }

  size_t region_bytes() const {
    size_t bytes = 0;
    for (const Branch& branch : branches_) {
      if (branch.nested) bytes = std::max(bytes, branch.nested->region_bytes());
    }
    return bytes;
  }

  std::vector<NestedPlan> nested_plans(const std::string& node) const {
    std::vector<NestedPlan> plans;
    for (const Branch& branch : branches_) {
      if (branch.nested) plans.push_back(branch.nested->summary(node));
    }
    return plans;
  }

  std::string describe() const {
    std::string text = "If (nested plans:";
    for (const Branch& branch : branches_) {
      text += branch.nested ? str_cat(" ", branch.name, " ", branch.nested->pool_bytes(), " B")
                            : str_cat(" ", branch.name, " cannot run");
    }
    return text + ")";
  }

  Status bind(std::byte* workspace, size_t workspace_bytes) override {
    for (Branch& branch : branches_) {
      if (branch.nested) ONEPOOL_RETURN_IF_ERROR(branch.nested->bind(workspace, workspace_bytes));
    }
    return Status::ok();
  }

  Status run(const RunContext& context) override {
    const bool condition = *context.inputs[0].as<const bool>();
    Branch& branch = branches_[condition ? 0 : 1];
    if (!branch.nested) {
      return make_status(StatusCode::kInvalidArgument, label_, ": the condition chose its ",
                         branch.name,
                         ", which cannot run with the input shapes the model was loaded with: ",
                         branch.unavailable);
    }
    threads_ = context.threads;
    Status status = run_branch(*branch.nested, context);
    threads_ = nullptr;
    if (status.is_ok()) return status;
    return status.with_context(str_cat(label_, " ", branch.name));
  }

 private:
  static Status run_branch(NestedGraph& nested, const RunContext& context) {
    const std::vector<ValueId>& inputs = nested.graph().inputs;
    for (size_t j = 0; j < inputs.size(); ++j) {
      ONEPOOL_RETURN_IF_ERROR(nested.copy_in(inputs[j], context.inputs[j + 1]));
    }
    ONEPOOL_RETURN_IF_ERROR(nested.execute());
    const std::vector<ValueId>& outputs = nested.graph().outputs;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (context.outputs[i].data == nullptr) continue;  // an omitted output
      ONEPOOL_RETURN_IF_ERROR(nested.copy_out(outputs[i], context.outputs[i]));
      // Outputs planned at the larger branch's shape: this branch's, written densely.
      if (context.output_shapes != nullptr)
        context.output_shapes[i] = nested.view(outputs[i]).shape;
    }
    return Status::ok();
  }

  std::string label_;
  Branch branches_[2];
  ThreadPool* threads_ = nullptr;  // the Session's pool while run() runs a branch
};

Expected<PreparedKernel> make_if(const NodeContext& node) {
  if (node.input_count() < 1 || !node.has_input(0) || node.input(0).dtype != DType::kBool ||
      node.input(0).shape.element_count() != 1) {
    return node.error(StatusCode::kInvalidModel, "the condition must be a bool of one element");
  }
  auto kernel = std::make_unique<IfKernel>(describe_node(node.node()));
  ONEPOOL_RETURN_IF_ERROR(kernel->prepare(node));
  PreparedKernel prepared;
  for (size_t i = 0; i < node.output_count(); ++i) {
    prepared.data_dependent_outputs |= node.has_output(i) && !node.output(i).bound.empty();
  }
  prepared.workspace_bytes = kernel->region_bytes();
  prepared.implementation = kernel->describe();
  prepared.nested_plans = kernel->nested_plans(node.node().name);
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

void register_control_flow_kernels(KernelRegistry& registry) { registry.add("If", &make_if); }

}  // namespace onepool::cpu
