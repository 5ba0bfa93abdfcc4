// Liveness analysis: first and last step of every planned buffer.
#include "planner/analysis/liveness.h"

#include <algorithm>
#include <limits>

namespace onepool {
namespace {

Status check_alignment(size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return make_status(StatusCode::kInvalidArgument, "alignment must be a power of two, got ",
                       alignment);
  }
  return Status::ok();
}

int64_t last_step_of(const Graph& graph) {
  return graph.nodes.empty() ? 0 : static_cast<int64_t>(graph.nodes.size()) - 1;
}

}  // namespace

Expected<bool> value_lifetime(const Graph& graph, const Value& value, UsageRecord& record) {
  if (value.kind == ValueKind::kWeight) return false;
  const bool is_input = value.kind == ValueKind::kGraphInput;
  if (!is_input && value.producer == kNoNode) {
    if (value.consumers.empty() && !value.is_graph_output) return false;
    return make_status(StatusCode::kInvalidModel, "tensor '", value.name,
                       "' is read by a node or is a graph output but no node produces it");
  }
  record.first = is_input ? 0 : value.producer;
  record.last = record.first;
  for (NodeId consumer : value.consumers) record.last = std::max<int64_t>(record.last, consumer);
  if (value.is_graph_output) record.last = last_step_of(graph);
  return true;
}

namespace {

Status add_values(const Graph& graph, size_t alignment, std::span<const uint8_t> external,
                  Liveness& liveness) {
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& value = graph.values[id];
    if (id < external.size() && external[id] != 0) continue;  // in a caller buffer
    UsageRecord record;
    ONEPOOL_ASSIGN_OR_RETURN(const bool planned, value_lifetime(graph, value, record));
    if (!planned) continue;
    auto bytes = tensor_bytes(value.shape, value.dtype);
    if (!bytes) return bytes.status().with_context(str_cat("tensor '", value.name, "'"));
    auto aligned = align_up(*bytes, alignment);
    if (!aligned) return aligned.status().with_context(str_cat("tensor '", value.name, "'"));
    record.bytes = *aligned;
    liveness.records.push_back(record);
    liveness.sources.push_back({static_cast<ValueId>(id), kNoNode});
  }
  return Status::ok();
}

Status add_workspaces(const Graph& graph, const NodeMemoryNeeds& needs, size_t alignment,
                      Liveness& liveness) {
  if (needs.workspace_bytes.empty()) return Status::ok();
  if (needs.workspace_bytes.size() != graph.nodes.size()) {
    return make_status(StatusCode::kInvalidArgument, "workspace sizes: expected one per node (",
                       graph.nodes.size(), "), got ", needs.workspace_bytes.size());
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (needs.workspace_bytes[n] == 0) continue;
    auto aligned = align_up(needs.workspace_bytes[n], alignment);
    if (!aligned) return aligned.status().with_context(describe_node(graph.nodes[n]));
    const auto step = static_cast<int64_t>(n);
    liveness.records.push_back({step, step, *aligned});
    liveness.sources.push_back({kNoValue, static_cast<NodeId>(n)});
  }
  return Status::ok();
}

}  // namespace

Expected<size_t> align_up(size_t bytes, size_t alignment) {
  ONEPOOL_RETURN_IF_ERROR(check_alignment(alignment));
  if (bytes > std::numeric_limits<size_t>::max() - (alignment - 1)) {
    return make_status(StatusCode::kOutOfRange, "size ", bytes,
                       " bytes overflows when rounded up to the alignment ", alignment);
  }
  return (bytes + alignment - 1) & ~(alignment - 1);
}

Expected<Liveness> compute_liveness(const Graph& graph, const NodeMemoryNeeds& needs,
                                    size_t alignment, std::span<const uint8_t> external) {
  ONEPOOL_RETURN_IF_ERROR(check_alignment(alignment));
  Liveness liveness;
  ONEPOOL_RETURN_IF_ERROR(add_values(graph, alignment, external, liveness));
  ONEPOOL_RETURN_IF_ERROR(add_workspaces(graph, needs, alignment, liveness));
  return liveness;
}

}  // namespace onepool
