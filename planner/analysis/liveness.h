// Liveness: a Graph in execution order → one usage record per planned buffer.
//
// One record per non-weight value (graph inputs from step 0, activations from their producer's
// step, each to its last consumer's step; graph outputs to the last step; a value nobody reads
// lives only at its producer's step) plus one single-step record per node workspace. Sizes are
// rounded up to the alignment. Pure function of its arguments; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "onepool/status.h"
#include "planner/algo/algorithms.h"
#include "planner/analysis/node_memory_needs.h"
#include "planner/core/graph.h"

namespace onepool {

/// Where a usage record comes from: a graph value, or the workspace of a node.
struct RecordSource {
  ValueId value = kNoValue;         ///< the value, or kNoValue for a workspace
  NodeId workspace_node = kNoNode;  ///< the node whose scratch this is, or kNoNode
};

/// Records and, index for index, their sources.
struct Liveness {
  std::vector<UsageRecord> records;
  std::vector<RecordSource> sources;
};

/// Errors: alignment not a power of two, a workspace list whose length differs from the node
/// count, a value read by a node but produced by none, or a size that overflows. Values flagged
/// in `external` (one flag per value, or empty) live in caller buffers and get no record.
Expected<Liveness> compute_liveness(const Graph& graph, const NodeMemoryNeeds& needs,
                                    size_t alignment, std::span<const uint8_t> external = {});

/// The steps `value` is live (its record's first and last; bytes untouched), or false when the
/// value is not planned (a weight, a name nothing reads or produces).
Expected<bool> value_lifetime(const Graph& graph, const Value& value, UsageRecord& record);

/// `bytes` rounded up to `alignment` (a power of two); kOutOfRange when that overflows.
Expected<size_t> align_up(size_t bytes, size_t alignment);

}  // namespace onepool
