// Graph (or bare records) → Plan: liveness, placement by the chosen algorithm, verification.
#include "planner/build_plan.h"

#include <chrono>
#include <string>
#include <utility>

#include "planner/liveness.h"

namespace onepool {
namespace {

// Runs the algorithm and fills every Plan field except steps and tensors.
Expected<Placement> place(std::span<const UsageRecord> records, const PlanOptions& options,
                          Plan& plan) {
  ONEPOOL_ASSIGN_OR_RETURN(const AlgorithmInfo* algorithm, find_algorithm(options.algorithm));
  AlgorithmOptions algorithm_options;
  algorithm_options.alignment = options.alignment;
  algorithm_options.budget_ms = options.budget_ms;
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(Placement placement, algorithm->run(records, algorithm_options));
  const auto stop = std::chrono::steady_clock::now();
  plan.planning_ms = std::chrono::duration<double, std::milli>(stop - start).count();
  plan.algorithm = algorithm->name;
  plan.alignment = options.alignment;
  plan.pool_bytes = placement.pool_bytes;
  plan.lower_bound_bytes = lower_bound_bytes(records);
  plan.naive_bytes = naive_bytes(records);
  plan.optimal = plan.pool_bytes == plan.lower_bound_bytes;
  return placement;
}

PlannedTensor planned_value(const Graph& graph, ValueId id) {
  const Value& value = graph.values[static_cast<size_t>(id)];
  PlannedTensor tensor;
  tensor.id = id;
  tensor.name = value.name;
  tensor.producer_op = value.kind == ValueKind::kGraphInput
                           ? "input"
                           : graph.nodes[static_cast<size_t>(value.producer)].op_type;
  tensor.dtype = value.dtype;
  tensor.shape = value.shape;
  return tensor;
}

PlannedTensor planned_workspace(const Graph& graph, NodeId node) {
  PlannedTensor tensor;
  tensor.name = str_cat(graph.nodes[static_cast<size_t>(node)].name, ":workspace");
  tensor.producer_op = graph.nodes[static_cast<size_t>(node)].op_type;
  tensor.dtype = DType::kUInt8;
  tensor.workspace_node = node;
  return tensor;
}

void place_tensor(const UsageRecord& record, size_t offset, PlannedTensor& tensor) {
  tensor.bytes = record.bytes;
  tensor.offset = offset;
  tensor.first = record.first;
  tensor.last = record.last;
}

}  // namespace

Expected<Plan> build_plan(const Graph& graph, const PlanOptions& options,
                          const NodeMemoryNeeds& needs) {
  // Step 1. Liveness: one record per planned value and workspace.
  ONEPOOL_ASSIGN_OR_RETURN(Liveness liveness, compute_liveness(graph, needs, options.alignment));
  // Step 2. Placement.
  Plan plan;
  ONEPOOL_ASSIGN_OR_RETURN(Placement placement, place(liveness.records, options, plan));
  // Step 3. Name everything for the plan's readers.
  for (const Node& node : graph.nodes) plan.steps.push_back({node.name, node.op_type});
  plan.tensors.reserve(liveness.records.size());
  for (size_t i = 0; i < liveness.records.size(); ++i) {
    const RecordSource& source = liveness.sources[i];
    PlannedTensor tensor = source.value != kNoValue
                               ? planned_value(graph, source.value)
                               : planned_workspace(graph, source.workspace_node);
    place_tensor(liveness.records[i], placement.offsets[i], tensor);
    plan.tensors.push_back(std::move(tensor));
  }
  // Step 4. Check the result independently of the algorithm.
  plan.verified = plan.verify().is_ok();
  return plan;
}

Expected<Plan> build_plan_from_records(std::span<const UsageRecord> records,
                                       std::span<const std::string> names,
                                       const PlanOptions& options) {
  if (!names.empty() && names.size() != records.size()) {
    return make_status(StatusCode::kInvalidArgument, "expected one name per record (",
                       records.size(), "), got ", names.size());
  }
  std::vector<UsageRecord> aligned(records.begin(), records.end());
  for (size_t i = 0; i < aligned.size(); ++i) {
    auto bytes = align_up(aligned[i].bytes, options.alignment);
    if (!bytes) return bytes.status().with_context(str_cat("record ", i));
    aligned[i].bytes = *bytes;
  }
  Plan plan;
  ONEPOOL_ASSIGN_OR_RETURN(Placement placement, place(aligned, options, plan));
  plan.tensors.resize(aligned.size());
  for (size_t i = 0; i < aligned.size(); ++i) {
    PlannedTensor& tensor = plan.tensors[i];
    tensor.id = static_cast<int32_t>(i);
    tensor.name = names.empty() ? std::to_string(i) : names[i];
    tensor.producer_op = "record";
    place_tensor(aligned[i], placement.offsets[i], tensor);
  }
  plan.verified = plan.verify().is_ok();
  return plan;
}

}  // namespace onepool
