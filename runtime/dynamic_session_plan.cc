// Placing a shape with a plan made at another shape: the top plan's offsets reused (static
// pool mode), or a symbolic plan evaluated at this shape's sizes.
#include "runtime/dynamic_session_plan.h"

#include <chrono>
#include <unordered_map>

#include "planner/analysis/alias.h"
#include "planner/analysis/liveness.h"
#include "planner/analysis/symbolic_plan.h"

namespace onepool {

namespace {

Status check_same_order(const Plan& top, const Graph& graph) {
  if (top.steps.size() != graph.nodes.size()) {
    return make_status(StatusCode::kFailedPrecondition, "the graph has ", graph.nodes.size(),
                       " nodes at this shape but ", top.steps.size(), " at the top of the range");
  }
  for (size_t step = 0; step < graph.nodes.size(); ++step) {
    if (top.steps[step].node != graph.nodes[step].name) {
      return make_status(StatusCode::kFailedPrecondition, "execution order differs at step ", step,
                         ": node '", graph.nodes[step].name, "' here, '", top.steps[step].node,
                         "' at the top of the range");
    }
  }
  return Status::ok();
}

// Every value this graph would plan must have a slot in the top plan.
Status check_every_value_has_slot(const Plan& top, const Graph& graph) {
  std::unordered_map<std::string, int> planned;
  for (const PlannedTensor& tensor : top.tensors) {
    if (tensor.workspace_node < 0) planned.emplace(tensor.name, 0);
  }
  for (const Value& value : graph.values) {
    if (value.kind == ValueKind::kWeight) continue;
    if (value.kind != ValueKind::kGraphInput && value.producer == kNoNode) continue;
    if (planned.count(value.name) == 0) {
      return make_status(StatusCode::kFailedPrecondition, "tensor '", value.name,
                         "' has no slot in the plan made at the top of the range");
    }
  }
  return Status::ok();
}

Status reuse_workspace_slot(const Graph& graph, const NodeMemoryNeeds& needs,
                            PlannedTensor& tensor) {
  const size_t step = static_cast<size_t>(tensor.workspace_node);
  const size_t need = step < needs.workspace_bytes.size() ? needs.workspace_bytes[step] : 0;
  if (need > tensor.bytes) {
    return make_status(StatusCode::kFailedPrecondition, describe_node(graph.nodes[step]),
                       ": needs a workspace of ", need, " bytes at this shape, more than the ",
                       tensor.bytes, " bytes it had at the top of the range");
  }
  return Status::ok();  // the slot keeps its top size: the kernel may use all of it
}

Status reuse_value_slot(const Graph& graph, const std::unordered_map<int32_t, int32_t>& id_map,
                        size_t alignment, PlannedTensor& tensor) {
  const auto mapped = id_map.find(tensor.id);
  if (mapped == id_map.end() || mapped->second == kNoValue) {
    return make_status(StatusCode::kFailedPrecondition, "tensor '", tensor.name,
                       "' of the top plan does not exist at this shape");
  }
  const Value& value = graph.values[static_cast<size_t>(mapped->second)];
  ONEPOOL_ASSIGN_OR_RETURN(size_t bytes, align_up(value.bytes(), alignment));
  if (tensor.alias_of < 0 && bytes > tensor.bytes) {
    return make_status(StatusCode::kFailedPrecondition, "tensor '", tensor.name, "' ",
                       value.shape.to_string(), " needs ", bytes,
                       " bytes here, more than its slot of ", tensor.bytes,
                       " bytes at the top of the range: its size is not monotone in the dims");
  }
  tensor.id = mapped->second;
  tensor.shape = value.shape;
  tensor.dtype = value.dtype;
  if (tensor.alias_of < 0) tensor.bytes = bytes;
  return Status::ok();
}

// Where every value lives at this shape, sharing recomputed here with this shape's kernels:
// Concat-in-place slice offsets scale with the shape, and a kernel may allow an output to take
// over an input's bytes at one shape and not at another (a Conv's path, chosen by shape, decides
// whether it may overwrite its residual). Empty when `top` has no alias.
Expected<std::vector<ValueStorage>> storage_at_this_shape(const Plan& top, const Graph& graph,
                                                          const NodeMemoryNeeds& needs,
                                                          const Liveness* liveness) {
  bool any_alias = false;
  for (const PlannedTensor& tensor : top.tensors) any_alias = any_alias || tensor.alias_of >= 0;
  if (!any_alias) return std::vector<ValueStorage>{};
  Liveness computed;
  if (liveness == nullptr) {
    ONEPOOL_ASSIGN_OR_RETURN(computed, compute_liveness(graph, needs, top.alignment));
    liveness = &computed;
  }
  const AliasKinds every_kind{true, true, true, true};
  ONEPOOL_ASSIGN_OR_RETURN(AliasedLiveness aliased,
                           find_aliases(graph, *liveness, needs, every_kind, top.alignment));
  return std::move(aliased.storage);
}

// The alias's offset inside its root at this shape (the same root as at the top, or an error).
Status reuse_alias(const Graph& graph, const std::vector<ValueStorage>& storage,
                   const std::string& root_name, PlannedTensor& tensor) {
  if (storage.empty()) {
    if (tensor.alias_offset == 0) return Status::ok();
    return make_status(StatusCode::kInternal, "alias offsets were not recomputed");
  }
  const ValueStorage& here = storage[static_cast<size_t>(tensor.id)];
  if (here.root == kNoValue || graph.values[static_cast<size_t>(here.root)].name != root_name) {
    return make_status(StatusCode::kFailedPrecondition, "tensor '", tensor.name,
                       "' shares the storage of '", root_name,
                       "' at the top of the range but not at this shape");
  }
  tensor.alias_offset = here.offset;
  return Status::ok();
}

// Aliases keep their root (mapped through `id_map`, top ids → this graph's); offsets inside it
// are those of this shape. Owners of `plan` already carry this graph's ids and their offsets.
// `liveness`: this graph's, when already computed (else nullptr).
Status place_aliases(const Plan& top, const Graph& graph, const NodeMemoryNeeds& needs,
                     const std::unordered_map<int32_t, int32_t>& id_map, const Liveness* liveness,
                     Plan& plan) {
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<ValueStorage> storage,
                           storage_at_this_shape(top, graph, needs, liveness));
  std::unordered_map<int32_t, size_t> owner_offset;  // this graph's ids
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.alias_of < 0 && tensor.workspace_node < 0) owner_offset[tensor.id] = tensor.offset;
  }
  for (PlannedTensor& tensor : plan.tensors) {
    if (tensor.alias_of < 0) continue;
    const auto mapped = id_map.find(tensor.alias_of);
    if (mapped == id_map.end() || mapped->second == kNoValue) {
      return make_status(StatusCode::kFailedPrecondition, "tensor '", tensor.name,
                         "' aliases a tensor that does not exist at this shape");
    }
    tensor.alias_of = mapped->second;
    const std::string& root_name = graph.values[static_cast<size_t>(mapped->second)].name;
    ONEPOOL_RETURN_IF_ERROR(reuse_alias(graph, storage, root_name, tensor));
    tensor.offset = owner_offset[tensor.alias_of] + tensor.alias_offset;
  }
  return Status::ok();
}

}  // namespace

Expected<Plan> reuse_top_plan(const Plan& top, const Graph& graph, const NodeMemoryNeeds& needs) {
  const auto start = std::chrono::steady_clock::now();
  // Step 1. Same nodes in the same order, and every tensor has a slot.
  ONEPOOL_RETURN_IF_ERROR(check_same_order(top, graph));
  ONEPOOL_RETURN_IF_ERROR(check_every_value_has_slot(top, graph));
  // Step 2. Top ids → this graph's ids, by name.
  std::unordered_map<int32_t, int32_t> id_map;
  for (const PlannedTensor& tensor : top.tensors) {
    if (tensor.workspace_node < 0) id_map.emplace(tensor.id, graph.find_value(tensor.name));
  }
  // Step 3. Same offsets; sizes of this shape, each within its slot.
  Plan plan = top;
  for (PlannedTensor& tensor : plan.tensors) {
    if (tensor.workspace_node >= 0) {
      ONEPOOL_RETURN_IF_ERROR(reuse_workspace_slot(graph, needs, tensor));
      continue;
    }
    ONEPOOL_RETURN_IF_ERROR(reuse_value_slot(graph, id_map, plan.alignment, tensor));
  }
  // Step 4. Aliases keep their root; offsets inside it are those of this shape.
  ONEPOOL_RETURN_IF_ERROR(place_aliases(top, graph, needs, id_map, nullptr, plan));
  // Step 5. Verify: slots only shrink, aliases must lie inside their root (verify checks it).
  plan.algorithm = "reused:" + top.algorithm;
  ONEPOOL_RETURN_IF_ERROR(plan.verify().with_context("plan reused from the top of the range"));
  plan.verified = true;
  plan.planning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

namespace {

std::string lifetime_text(int64_t first, int64_t last) {
  return str_cat("[", first, "..", last, "]");
}

// The index in the source plan of the tensor behind liveness record `source_of_record`.
Expected<int32_t> source_tensor_of(const SymbolicSource& source, const Graph& graph,
                                   const RecordSource& record) {
  if (record.value == kNoValue) {
    const size_t step = static_cast<size_t>(record.workspace_node);
    const int32_t index =
        step < source.workspace_tensor.size() ? source.workspace_tensor[step] : -1;
    if (index >= 0) return index;
    return make_status(StatusCode::kFailedPrecondition, describe_node(graph.nodes[step]),
                       ": needs a workspace at this shape but had none in the source plan");
  }
  const std::string& name = graph.values[static_cast<size_t>(record.value)].name;
  const auto found = source.value_tensor.find(name);
  if (found != source.value_tensor.end()) return found->second;
  return make_status(StatusCode::kFailedPrecondition, "tensor '", name,
                     "' has no slot in the source plan");
}

// Per source tensor: its size at this shape (0 for aliases) and its value id in this graph.
struct TensorsAtThisShape {
  std::vector<size_t> bytes;
  std::vector<ValueId> value;  // kNoValue for workspaces
};

// This shape's size of every source tensor, each checked to live within the source tensor's
// steps; every source tensor must exist here.
Expected<TensorsAtThisShape> tensors_at_this_shape(const SymbolicSource& source, const Graph& graph,
                                                   const Liveness& liveness) {
  TensorsAtThisShape here;
  here.bytes.assign(source.plan.tensors.size(), 0);
  here.value.assign(source.plan.tensors.size(), kNoValue);
  std::vector<bool> seen(source.plan.tensors.size(), false);
  for (size_t r = 0; r < liveness.records.size(); ++r) {
    ONEPOOL_ASSIGN_OR_RETURN(int32_t index, source_tensor_of(source, graph, liveness.sources[r]));
    const PlannedTensor& tensor = source.plan.tensors[static_cast<size_t>(index)];
    const UsageRecord& record = liveness.records[r];
    if (record.first < tensor.first || record.last > tensor.last) {
      return make_status(StatusCode::kFailedPrecondition, "tensor '", tensor.name, "' lives steps ",
                         lifetime_text(record.first, record.last), " here but ",
                         lifetime_text(tensor.first, tensor.last), " in the source plan");
    }
    seen[static_cast<size_t>(index)] = true;
    here.value[static_cast<size_t>(index)] = liveness.sources[r].value;
    if (tensor.alias_of < 0) here.bytes[static_cast<size_t>(index)] = record.bytes;
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] || source.plan.tensors[i].workspace_node >= 0) continue;
    return make_status(StatusCode::kFailedPrecondition, "tensor '", source.plan.tensors[i].name,
                       "' of the source plan does not exist at this shape");
  }
  return here;
}

// Owners' sizes and offsets from the evaluation; every value tensor takes this graph's id,
// shape and dtype. Fills `id_map` (source ids → this graph's) for the aliases.
void apply_placement(const SymbolicSource& source, const Graph& graph,
                     const TensorsAtThisShape& here, const Placement& placement, Plan& plan,
                     std::unordered_map<int32_t, int32_t>& id_map) {
  for (size_t k = 0; k < placement.offsets.size(); ++k) {
    const size_t index = static_cast<size_t>(source.symbolic.plan_tensor(k));
    plan.tensors[index].offset = placement.offsets[k];
    plan.tensors[index].bytes = here.bytes[index];  // liveness sizes are already aligned
  }
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    PlannedTensor& tensor = plan.tensors[i];
    if (tensor.workspace_node >= 0) continue;
    const ValueId id = here.value[i];  // exists: tensors_at_this_shape checked
    id_map.emplace(tensor.id, id);
    const Value& value = graph.values[static_cast<size_t>(id)];
    tensor.id = id;
    tensor.shape = value.shape;
    tensor.dtype = value.dtype;
  }
}

std::vector<UsageRecord> owner_records(const Plan& plan) {
  std::vector<UsageRecord> records;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.alias_of < 0)
      records.push_back(UsageRecord{tensor.first, tensor.last, tensor.bytes});
  }
  return records;
}

}  // namespace

Expected<SymbolicSource> SymbolicSource::create(Plan plan) {
  SymbolicSource source;
  ONEPOOL_ASSIGN_OR_RETURN(source.symbolic, SymbolicPlan::from_plan(plan));
  source.workspace_tensor.assign(plan.steps.size(), -1);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& tensor = plan.tensors[i];
    const auto index = static_cast<int32_t>(i);
    if (tensor.workspace_node < 0) {
      source.value_tensor.emplace(tensor.name, index);
    } else if (static_cast<size_t>(tensor.workspace_node) < source.workspace_tensor.size()) {
      source.workspace_tensor[static_cast<size_t>(tensor.workspace_node)] = index;
    }
  }
  source.plan = std::move(plan);
  return source;
}

Expected<Plan> place_symbolically(const SymbolicSource& source, const Graph& graph,
                                  const NodeMemoryNeeds& needs) {
  const auto start = std::chrono::steady_clock::now();
  // Step 1. Same nodes in the same order; this shape's sizes, within the source's lifetimes.
  ONEPOOL_RETURN_IF_ERROR(check_same_order(source.plan, graph));
  ONEPOOL_ASSIGN_OR_RETURN(Liveness liveness,
                           compute_liveness(graph, needs, source.plan.alignment));
  ONEPOOL_ASSIGN_OR_RETURN(TensorsAtThisShape here, tensors_at_this_shape(source, graph, liveness));
  // Step 2. Evaluate the offsets.
  std::vector<size_t> record_bytes(source.symbolic.record_count());
  for (size_t k = 0; k < record_bytes.size(); ++k) {
    record_bytes[k] = here.bytes[static_cast<size_t>(source.symbolic.plan_tensor(k))];
  }
  ONEPOOL_ASSIGN_OR_RETURN(Placement placement, source.symbolic.evaluate(record_bytes));
  // Step 3. Owners placed, aliases re-derived at this shape.
  Plan plan = source.plan;
  std::unordered_map<int32_t, int32_t> id_map;
  apply_placement(source, graph, here, placement, plan, id_map);
  ONEPOOL_RETURN_IF_ERROR(place_aliases(source.plan, graph, needs, id_map, &liveness, plan));
  // Step 4. Verify (the expressions are valid by construction; this is the safety net).
  const std::vector<UsageRecord> records = owner_records(plan);
  plan.pool_bytes = placement.pool_bytes;
  plan.lower_bound_bytes = lower_bound_bytes(records);
  plan.naive_bytes = naive_bytes(records);
  plan.optimal = plan.pool_bytes == plan.lower_bound_bytes;
  plan.algorithm = "symbolic:" + source.plan.algorithm;
  ONEPOOL_RETURN_IF_ERROR(plan.verify().with_context("plan placed by a symbolic plan"));
  plan.verified = true;
  plan.planning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace onepool
