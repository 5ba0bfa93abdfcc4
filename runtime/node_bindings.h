// Node bindings shared by every backend: each node's input and output views laid out once,
// contiguously, and its workspace pointed into the pool, so execute() only indexes arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "onepool/plan.h"
#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/core/graph.h"

namespace onepool {

/// One node's slice of NodeBindings::views and its scratch memory.
struct BoundNode {
  size_t first_input = 0;  // index into NodeBindings::views
  size_t input_count = 0;
  size_t first_output = 0;
  size_t output_count = 0;
  std::byte* workspace = nullptr;
  size_t workspace_bytes = 0;

  /// The node's input views inside `views` (NodeBindings::views).
  std::span<const TensorView> inputs(std::span<const TensorView> views) const {
    return views.subspan(first_input, input_count);
  }
  /// The node's output views inside `views`.
  std::span<const TensorView> outputs(std::span<const TensorView> views) const {
    return views.subspan(first_output, output_count);
  }
};

struct NodeBindings {
  std::vector<TensorView> views;  // every node's inputs then outputs, contiguous
  std::vector<BoundNode> nodes;   // one per graph node
  /// Per value id: the entries of `views` that show it, for the plan's external values (caller
  /// buffers, PlannedTensor::external) only; empty for every other value.
  std::vector<std::vector<size_t>> external_uses;
};

/// Points external value `id` at the caller's `data`: `value_views[id]` and every entry of
/// `views` listed in `external_uses[id]`. No allocation.
void point_external_value(int32_t id, void* data,
                          std::span<const std::vector<size_t>> external_uses,
                          std::span<TensorView> value_views, std::span<TensorView> views);

/// Binds every node of `graph` to `value_views` (one per value; omitted inputs and outputs get
/// an empty view) and to the plan's workspace records inside `pool`, and indexes where each
/// external value appears. Errors: a workspace naming
/// a step beyond the graph, one not a multiple of `workspace_alignment`, or one smaller than
/// `needed_workspace_bytes[n]` (what node n's kernel declared).
Expected<NodeBindings> bind_nodes(const Graph& graph, std::span<const TensorView> value_views,
                                  const Plan& plan, std::byte* pool,
                                  std::span<const size_t> needed_workspace_bytes,
                                  size_t workspace_alignment);

}  // namespace onepool
