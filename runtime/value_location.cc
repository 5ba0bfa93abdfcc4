// Resolving plan offsets (and aliases) to per-value locations.
#include "planner/core/graph.h"
#include "runtime/backend.h"

namespace onepool {

namespace {
// Follows alias_of links to the owning tensor, adding alias offsets; fails on cycles.
Expected<size_t> resolve_pool_offset(const Plan& plan, size_t index) {
  size_t offset = 0;
  for (size_t hops = 0; hops <= plan.tensors.size(); ++hops) {
    const PlannedTensor& tensor = plan.tensors[index];
    if (tensor.alias_of < 0) return offset + tensor.offset;
    offset += tensor.alias_offset;
    const int32_t target = plan.find_tensor(tensor.alias_of);
    if (target < 0) {
      return make_status(StatusCode::kInvalidArgument, "plan tensor '", tensor.name,
                         "' aliases unknown tensor id ", tensor.alias_of);
    }
    index = static_cast<size_t>(target);
  }
  return make_status(StatusCode::kInvalidArgument, "plan has an alias cycle");
}
}  // namespace

Expected<std::vector<ValueLocation>> locate_values(const Model& model, const Plan& plan) {
  const Graph& graph = model.graph();
  std::vector<ValueLocation> locations(graph.values.size());
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& value = graph.values[id];
    if (value.kind == ValueKind::kWeight) {
      locations[id] = {ValueLocation::Region::kWeights, model.weight_offset(value.weight_index)};
      continue;
    }
    const int32_t index = plan.find_tensor(static_cast<int32_t>(id));
    if (index < 0) continue;  // unused value: no storage
    const PlannedTensor& tensor = plan.tensors[static_cast<size_t>(index)];
    if (tensor.name != value.name) {
      return make_status(StatusCode::kInvalidArgument, "plan tensor ", id, " is named '",
                         tensor.name, "' but the model's value ", id, " is '", value.name,
                         "': the plan was made for another model");
    }
    if (tensor.external) {
      if (value.kind != ValueKind::kGraphInput && !value.is_graph_output) {
        return make_status(StatusCode::kInvalidArgument, "plan tensor '", tensor.name,
                           "' is external but is not a graph input or output of the model");
      }
      locations[id] = {ValueLocation::Region::kExternal, 0};
      continue;
    }
    ONEPOOL_ASSIGN_OR_RETURN(size_t offset, resolve_pool_offset(plan, static_cast<size_t>(index)));
    if (offset + value.bytes() > plan.pool_bytes) {
      return make_status(StatusCode::kInvalidArgument, "tensor '", value.name, "' at offset ",
                         offset, " (", value.bytes(), " bytes) exceeds the pool of ",
                         plan.pool_bytes, " bytes");
    }
    locations[id] = {ValueLocation::Region::kPool, offset};
  }
  return locations;
}

}  // namespace onepool
