// If with a runtime condition: each branch is a nested plan inside the node's workspace.
//
// Import gave the node its two branches as Graphs (planner/import_runtime_if.h), whose graph
// inputs are the outer values they read: the node's inputs after the condition, in order.
// Prepare: each branch becomes a Model of its own (optimized like any model, weights packed),
//   prepared on a nested CPU backend and planned with the default planner. The node's workspace
//   is the larger of the two branch pools: one region of the parent pool, live only at the If's
//   step, that whichever branch runs uses as its own pool.
// Bind: both branches are bound into that region (they never run at once).
// A branch import found invalid for the loaded input shapes (planner/import_runtime_if.h) has no
// Graph: a run that takes it fails with import's reason.
// Run: the condition picks a branch; the outer values it reads are copied into its inputs, its
//   nodes run on the Session's threads, and its outputs are copied to the node's outputs. No
//   allocation.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "onepool/model.h"
#include "planner/build_plan.h"
#include "runtime/backend.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu {

namespace {

constexpr size_t kRegionAlignment = 256;  // what a CPU pool's base must be aligned to

// One branch: its Model, its backend and its plan, and where its inputs come from.
struct Branch {
  const char* name = "";
  std::string unavailable;  // why this branch cannot run with the loaded shapes (empty: it can)
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
  Plan plan;
  std::vector<int32_t> input_ids;     // the branch graph's inputs...
  std::vector<size_t> source_inputs;  // ...and the If input each one is copied from
};

// Branch input j is the node's input j + 1 (import gives both branches every captured value).
Status map_branch_inputs(const NodeContext& node, Branch& branch) {
  const Graph& graph = branch.model->graph();
  if (graph.inputs.size() + 1 != node.input_count()) {
    return node.error(StatusCode::kInvalidModel, branch.name, " has ", graph.inputs.size(),
                      " input(s), the node ", node.input_count(), " (the condition and one per "
                      "value the branches read)");
  }
  for (size_t j = 0; j < graph.inputs.size(); ++j) {
    const Value& inner = graph.values[static_cast<size_t>(graph.inputs[j])];
    if (!node.has_input(j + 1) || node.input(j + 1).dtype != inner.dtype ||
        node.input(j + 1).shape != inner.shape) {
      return node.error(StatusCode::kInvalidModel, branch.name, " input '", inner.name, "' is ",
                        dtype_name(inner.dtype), " ", inner.shape.to_string(),
                        ", the node's input ", j + 1, " differs");
    }
    branch.input_ids.push_back(graph.inputs[j]);
    branch.source_inputs.push_back(j + 1);
  }
  return Status::ok();
}

Status check_branch_outputs(const NodeContext& node, const Branch& branch) {
  const Graph& graph = branch.model->graph();
  if (graph.outputs.size() != node.output_count()) {
    return node.error(StatusCode::kInvalidModel, branch.name, " has ", graph.outputs.size(),
                      " output(s), the node ", node.output_count());
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    if (!node.has_output(i)) continue;
    const Value& inner = graph.values[static_cast<size_t>(graph.outputs[i])];
    const Value& outer = node.output(i);
    if (inner.dtype != outer.dtype || inner.shape != outer.shape) {
      return node.error(StatusCode::kInvalidModel, branch.name, " output ", i, " is ",
                        dtype_name(inner.dtype), " ", inner.shape.to_string(), ", the node's '",
                        outer.name, "' ", dtype_name(outer.dtype), " ", outer.shape.to_string());
    }
  }
  return Status::ok();
}

Expected<Branch> prepare_branch(const NodeContext& node, const char* name,
                                const std::shared_ptr<const Graph>& graph,
                                ThreadPool* const* threads) {
  Branch branch;
  branch.name = name;
  if (graph == nullptr) {
    branch.unavailable = node.node().attributes.get_string(str_cat(name, "_error"), "");
    if (branch.unavailable.empty()) return node.error(StatusCode::kInvalidModel, "has no ", name);
    return branch;
  }
  Expected<std::shared_ptr<const Model>> model = Model::from_graph(*graph, LoadOptions{});
  if (!model) return model.status().with_context(str_cat(describe_node(node.node()), " ", name));
  branch.model = std::move(model).value();
  ONEPOOL_RETURN_IF_ERROR(map_branch_inputs(node, branch));
  ONEPOOL_RETURN_IF_ERROR(check_branch_outputs(node, branch));
  branch.backend = create_nested_cpu_backend(node.threads(), threads);
  NodeMemoryNeeds needs;
  const std::string where = str_cat(describe_node(node.node()), " ", name);
  Status prepared = branch.backend->prepare(*branch.model, needs);
  if (!prepared.is_ok()) return prepared.with_context(where);
  Expected<Plan> plan = build_plan(branch.model->graph(), PlanOptions{}, needs);
  if (!plan) return plan.status().with_context(where);
  branch.plan = std::move(plan).value();
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
    const char* names[2] = {"then_branch", "else_branch"};
    for (size_t b = 0; b < 2; ++b) {
      ONEPOOL_ASSIGN_OR_RETURN(branches_[b], prepare_branch(node, names[b], graphs[b], &threads_));
    }
    return Status::ok();
  }

  size_t region_bytes() const {
    return std::max(branches_[0].plan.pool_bytes, branches_[1].plan.pool_bytes);  // 0 if absent
  }

  Status bind(std::byte* workspace, size_t workspace_bytes) override {
    const size_t skip = (kRegionAlignment - reinterpret_cast<uintptr_t>(workspace) %
                                                kRegionAlignment) % kRegionAlignment;
    if (workspace == nullptr || workspace_bytes < skip + region_bytes()) {
      return make_status(StatusCode::kInternal, "the branch region needs ", region_bytes(),
                         " bytes, the workspace holds ", workspace_bytes);
    }
    for (Branch& branch : branches_) {
      if (!branch.unavailable.empty()) continue;
      const Status bound = branch.backend->bind(*branch.model, branch.plan, workspace + skip,
                                                workspace_bytes - skip);
      if (!bound.is_ok()) return bound.with_context(branch.name);
    }
    return Status::ok();
  }

  Status run(const RunContext& context) override {
    const bool condition = *context.inputs[0].as<const bool>();
    Branch& branch = branches_[condition ? 0 : 1];
    if (!branch.unavailable.empty()) {
      return make_status(StatusCode::kInvalidArgument, label_, ": the condition chose its ",
                         branch.name, ", which cannot run with the input shapes the model was "
                         "loaded with: ", branch.unavailable);
    }
    threads_ = context.threads;
    Status status = run_branch(branch, context);
    threads_ = nullptr;
    if (status.is_ok()) return status;
    return status.with_context(str_cat(label_, " ", branch.name));
  }

 private:
  static Status run_branch(Branch& branch, const RunContext& context) {
    for (size_t i = 0; i < branch.input_ids.size(); ++i) {
      ONEPOOL_RETURN_IF_ERROR(
          branch.backend->copy_in(branch.input_ids[i], context.inputs[branch.source_inputs[i]]));
    }
    ONEPOOL_RETURN_IF_ERROR(branch.backend->execute());
    const std::vector<ValueId>& outputs = branch.model->graph().outputs;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (context.outputs[i].data == nullptr) continue;  // an omitted output
      ONEPOOL_RETURN_IF_ERROR(branch.backend->copy_out(outputs[i], context.outputs[i]));
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
  prepared.workspace_bytes = kernel->region_bytes() + kRegionAlignment;
  prepared.implementation = "If (nested plans)";
  prepared.kernel = std::move(kernel);
  return prepared;
}

}  // namespace

void register_control_flow_kernels(KernelRegistry& registry) { registry.add("If", &make_if); }

}  // namespace onepool::cpu
