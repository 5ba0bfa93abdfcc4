// Graph (or bare records) → Plan: liveness, placement by the chosen algorithm, verification.
#include "planner/analysis/build_plan.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "planner/analysis/alias.h"
#include "planner/analysis/external_io.h"
#include "planner/analysis/liveness.h"
#include "planner/analysis/workspace_growth.h"

namespace onepool {
namespace {

// One selection of sharing, its records and where the algorithm put them.
struct Candidate {
  AliasedLiveness aliased;
  Placement placement;
  size_t lower_bound = 0;
};

// Runs the algorithm; adds its time to `plan.planning_ms` and names it in the plan.
Expected<Placement> run_algorithm(std::span<const UsageRecord> records, const PlanOptions& options,
                                  Plan& plan) {
  ONEPOOL_ASSIGN_OR_RETURN(const AlgorithmInfo* algorithm, find_algorithm(options.algorithm));
  AlgorithmOptions algorithm_options;
  algorithm_options.alignment = options.alignment;
  algorithm_options.budget_ms = options.budget_ms;
  algorithm_options.threads = options.threads;
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(Placement placement, algorithm->run(records, algorithm_options));
  const auto stop = std::chrono::steady_clock::now();
  plan.planning_ms += std::chrono::duration<double, std::milli>(stop - start).count();
  plan.algorithm = algorithm->name;
  plan.alignment = options.alignment;
  return placement;
}

// Fills the pool and bound fields of `plan` from the chosen records and placement.
void fill_bounds(std::span<const UsageRecord> records, const Placement& placement, Plan& plan) {
  plan.pool_bytes = placement.pool_bytes;
  plan.lower_bound_bytes = lower_bound_bytes(records);
  plan.naive_bytes = naive_bytes(records);
  plan.optimal = plan.pool_bytes == plan.lower_bound_bytes;
}

// The records of one selection of sharing and their lower bound (not yet placed).
Expected<Candidate> alias_candidate(const Graph& graph, const Liveness& plain,
                                    const NodeMemoryNeeds& needs, const AliasKinds& kinds,
                                    size_t alignment, const SharingExclusions& excluded = {}) {
  Candidate candidate;
  ONEPOOL_ASSIGN_OR_RETURN(candidate.aliased,
                           find_aliases(graph, plain, needs, kinds, alignment, excluded));
  candidate.lower_bound = lower_bound_bytes(candidate.aliased.liveness.records);
  return candidate;
}

// Places `candidate` and keeps it as `best` when its pool is no larger. A candidate that cannot
// win is not placed: the same sharing as the best, or a bound above the best pool.
Status consider(Candidate candidate, const PlanOptions& options, Plan& plan, Candidate& best) {
  if (candidate.lower_bound > best.placement.pool_bytes) return Status::ok();
  if (candidate.aliased.storage == best.aliased.storage) return Status::ok();
  ONEPOOL_ASSIGN_OR_RETURN(candidate.placement,
                           run_algorithm(candidate.aliased.liveness.records, options, plan));
  if (candidate.placement.pool_bytes <= best.placement.pool_bytes) best = std::move(candidate);
  return Status::ok();
}

// Step 2 of build_plan: the plain records first, then each selection of sharing from the least
// to the most, last the Concat inputs that do not raise the bound; a later one wins when its pool
// is no larger (more sharing: fewer buffers). Selections are placed, not judged by their bound,
// because a lower bound can still fragment worse: long-lived merged buffers leave gaps that best
// fit cannot fill.
Expected<Candidate> choose_candidate(const Graph& graph, const Liveness& plain,
                                     const NodeMemoryNeeds& needs, const PlanOptions& options,
                                     Plan& plan) {
  ONEPOOL_ASSIGN_OR_RETURN(Candidate best,
                           alias_candidate(graph, plain, needs, AliasKinds{}, options.alignment));
  ONEPOOL_ASSIGN_OR_RETURN(best.placement,
                           run_algorithm(best.aliased.liveness.records, options, plan));
  plan.plain_pool_bytes = best.placement.pool_bytes;
  plan.plain_lower_bound_bytes = best.lower_bound;
  if (!options.aliasing || needs.aliasing.empty()) return best;
  constexpr AliasKinds kSelections[] = {
      {.views = true},
      {.views = true, .in_place = true},
      {.views = true, .in_place = true, .growing = true},
      {.views = true, .concat = true},
      {.views = true, .in_place = true, .concat = true},
      {.views = true, .in_place = true, .concat = true, .growing = true},
  };
  for (const AliasKinds& kinds : kSelections) {
    ONEPOOL_ASSIGN_OR_RETURN(Candidate candidate,
                             alias_candidate(graph, plain, needs, kinds, options.alignment));
    ONEPOOL_RETURN_IF_ERROR(consider(std::move(candidate), options, plan, best));
  }
  const AliasKinds all{.views = true, .in_place = true, .concat = true, .growing = true};
  ONEPOOL_ASSIGN_OR_RETURN(
      const SharingExclusions excluded,
      exclude_costly_concat_inputs(graph, plain, needs, all, options.alignment));
  ONEPOOL_ASSIGN_OR_RETURN(Candidate candidate,
                           alias_candidate(graph, plain, needs, all, options.alignment, excluded));
  ONEPOOL_RETURN_IF_ERROR(consider(std::move(candidate), options, plan, best));
  return best;
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
  tensor.bound = value.bound;
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

// The needs with every workspace at the size its kernel prefers (PlanOptions::fast_workspaces).
NodeMemoryNeeds with_preferred_workspaces(const NodeMemoryNeeds& declared) {
  NodeMemoryNeeds needs = declared;
  for (size_t n = 0; n < needs.workspace_bytes.size() && n < needs.workspace_preferred_bytes.size();
       ++n) {
    needs.workspace_bytes[n] =
        std::max(needs.workspace_bytes[n], needs.workspace_preferred_bytes[n]);
  }
  return needs;
}

// The external values (caller buffers) as plan tensors: their steps, no pool bytes.
Status add_external_tensors(const Graph& graph, const std::vector<uint8_t>& external, Plan& plan) {
  for (size_t id = 0; id < external.size(); ++id) {
    if (external[id] == 0) continue;
    UsageRecord lifetime;
    ONEPOOL_ASSIGN_OR_RETURN(const bool live, value_lifetime(graph, graph.values[id], lifetime));
    PlannedTensor tensor = planned_value(graph, static_cast<ValueId>(id));
    tensor.external = true;
    tensor.first = live ? lifetime.first : 0;
    tensor.last = live ? lifetime.last : 0;
    plan.tensors.push_back(std::move(tensor));
  }
  return Status::ok();
}

void place_tensor(const UsageRecord& record, size_t offset, PlannedTensor& tensor) {
  tensor.bytes = record.bytes;
  tensor.offset = offset;
  tensor.first = record.first;
  tensor.last = record.last;
}

}  // namespace

Expected<Plan> build_plan(const Graph& graph, const PlanOptions& options,
                          const NodeMemoryNeeds& declared) {
  // Step 1. Liveness: one record per planned value and workspace.
  const NodeMemoryNeeds needs =
      options.fast_workspaces ? with_preferred_workspaces(declared) : declared;
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<uint8_t> external,
                           find_external_values(graph, options));
  ONEPOOL_ASSIGN_OR_RETURN(Liveness plain,
                           compute_liveness(graph, needs, options.alignment, external));
  // Step 2. Sharing and placement: the smallest pool among the selections.
  Plan plan;
  ONEPOOL_ASSIGN_OR_RETURN(Candidate chosen, choose_candidate(graph, plain, needs, options, plan));
  const Liveness& placed = chosen.aliased.liveness;
  fill_bounds(placed.records, chosen.placement, plan);
  // Step 3. Name everything for the plan's readers: owners in record order, then aliases.
  for (const Node& node : graph.nodes) plan.steps.push_back({node.name, node.op_type});
  plan.tensors.reserve(plain.records.size());
  std::vector<size_t> owner_offset(graph.values.size(), 0);
  for (size_t i = 0; i < placed.records.size(); ++i) {
    const RecordSource& source = placed.sources[i];
    PlannedTensor tensor = source.value != kNoValue
                               ? planned_value(graph, source.value)
                               : planned_workspace(graph, source.workspace_node);
    place_tensor(placed.records[i], chosen.placement.offsets[i], tensor);
    if (source.value != kNoValue) {
      owner_offset[static_cast<size_t>(source.value)] = chosen.placement.offsets[i];
    }
    plan.tensors.push_back(std::move(tensor));
  }
  for (size_t i = 0; i < plain.records.size(); ++i) {
    const ValueId id = plain.sources[i].value;
    if (id == kNoValue) continue;
    const ValueStorage& storage = chosen.aliased.storage[static_cast<size_t>(id)];
    if (storage.root == id) continue;
    PlannedTensor tensor = planned_value(graph, id);
    tensor.alias_of = storage.root;
    tensor.alias_offset = storage.offset;
    tensor.offset = owner_offset[static_cast<size_t>(storage.root)] + storage.offset;
    tensor.first = plain.records[i].first;
    tensor.last = plain.records[i].last;
    plan.tensors.push_back(std::move(tensor));
  }
  ONEPOOL_RETURN_IF_ERROR(add_external_tensors(graph, external, plan));
  // Step 4. Workspaces take the free bytes of their steps, up to what their kernels prefer.
  grow_workspaces(plan, needs.workspace_preferred_bytes);
  // Step 5. Check the result independently of the algorithm (nested plans included).
  plan.nested = needs.nested;
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
  ONEPOOL_ASSIGN_OR_RETURN(Placement placement, run_algorithm(aligned, options, plan));
  fill_bounds(aligned, placement, plan);
  plan.plain_pool_bytes = plan.pool_bytes;
  plan.plain_lower_bound_bytes = plan.lower_bound_bytes;
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
