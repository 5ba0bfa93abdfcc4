// Offsets of the top-of-range plan reused for a smaller shape (static pool mode).
#include "runtime/dynamic_session_plan.h"

#include <chrono>
#include <unordered_map>

#include "planner/alias.h"
#include "planner/liveness.h"

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

// Where every value lives at this shape when sharing is recomputed here (Concat-in-place slice
// offsets scale with the shape); empty when no alias of `top` sits at a non-zero offset.
Expected<std::vector<ValueStorage>> storage_at_this_shape(const Plan& top, const Graph& graph,
                                                          const NodeMemoryNeeds& needs) {
  bool needs_offsets = false;
  for (const PlannedTensor& tensor : top.tensors) {
    needs_offsets = needs_offsets || (tensor.alias_of >= 0 && tensor.alias_offset != 0);
  }
  if (!needs_offsets) return std::vector<ValueStorage>{};
  ONEPOOL_ASSIGN_OR_RETURN(Liveness plain, compute_liveness(graph, needs, top.alignment));
  const AliasKinds every_kind{true, true, true};
  ONEPOOL_ASSIGN_OR_RETURN(AliasedLiveness aliased,
                           find_aliases(graph, plain, needs, every_kind, top.alignment));
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
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<ValueStorage> storage,
                           storage_at_this_shape(top, graph, needs));
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
  // Step 5. Verify: slots only shrink, aliases must lie inside their root (verify checks it).
  plan.algorithm = "reused:" + top.algorithm;
  ONEPOOL_RETURN_IF_ERROR(plan.verify().with_context("plan reused from the top of the range"));
  plan.verified = true;
  plan.planning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace onepool
