// Memory-aware scheduling: reorder a graph's nodes into another valid topological order whose
// peak of live bytes is lower (Serenity, MLSys 2020, is the anchor).
//
// The peak is the planner's lower bound for an order: the maximum over steps of the aligned bytes
// of every non-weight value live at that step (graph inputs from step 0, graph outputs to the
// last step, other values from their producer to their last consumer), plus the workspace of
// the node at that step when the caller gives workspace sizes (they depend on the backend).
//
// Algorithm:
//   1. Split the model order at cut nodes (a node every other node precedes or follows in every
//      valid order). Segments between cuts are independent: the peak is the max of their peaks.
//   2. Per segment, evaluate the model order and greedy list schedules (net bytes allocated,
//      bytes live at the step, depth first) and keep the lowest.
//   3. When that is above the segment's lower bound and the segment is small, search exactly:
//      dynamic programming over the set of scheduled nodes (the live bytes are a function of the
//      set), one level per step, keeping the lowest peak per set and dropping sets whose peak
//      already reaches the best known order. A state budget bounds the work; over budget, the
//      best greedy order stays.
// The result never has a higher peak than the model order (ties keep the model order), and it is
// deterministic. Cost: O(N log N + E) per greedy pass, O(states·k) for the search (k = segment
// nodes), bounded by a state budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

struct ScheduleOptions {
  /// "auto" (exact where small enough, greedy elsewhere), "exact" (search every segment within
  /// the budget) or "greedy" (no search).
  std::string method = "auto";
  /// Segments of more nodes are never searched exactly (at most kMaxExactSegmentNodes).
  int max_exact_nodes = 64;
  /// Search states (sets of scheduled nodes) over the whole graph before giving up the search.
  int64_t max_states = 200000;
  /// Scratch bytes of each node (in the graph's current order), live at its step only; empty
  /// when unknown (the peak then counts values only).
  std::vector<size_t> workspace_bytes;
};

/// The most nodes one exact search can handle.
constexpr int kMaxExactSegmentNodes = 256;

struct ScheduleReport {
  size_t peak_before = 0;  ///< peak live bytes of the model order
  size_t peak_after = 0;   ///< peak live bytes of the chosen order (never above peak_before)
  std::string method;      ///< "exact" when every segment is provably optimal, else "greedy"
  int segments = 0;        ///< independent segments between cut nodes
  int exact_segments = 0;  ///< segments proven optimal (searched, or at their lower bound)
  int64_t states = 0;      ///< search states visited
  double ms = 0.0;         ///< wall-clock time
  bool reordered = false;  ///< graph.nodes changed order (some segment's peak went down)
  /// For each new position, the node's id before the reorder: permute per-node data with it.
  std::vector<NodeId> order;
};

/// Reorders `graph.nodes` (and rebuilds producers and consumers) into a valid topological order
/// with the lowest peak found. Errors: alignment not a power of two, an unknown method, a size
/// that overflows, a value read but produced by no node, or nodes not in a topological order;
/// on error the graph is unchanged.
Expected<ScheduleReport> schedule_for_memory(Graph& graph, size_t alignment,
                                             const ScheduleOptions& options = {});

/// The peak live bytes of `graph` executed in `order` (a permutation of the node ids that is a
/// valid topological order), with optional per-node workspaces (in node-id order). Errors as
/// above, plus an order that is not a valid permutation.
Expected<size_t> schedule_peak_bytes(const Graph& graph, std::span<const NodeId> order,
                                     size_t alignment,
                                     std::span<const size_t> workspace_bytes = {});

/// "peak 39.3 MB -> 31.0 MB (greedy, 40/42 segments exact, 0.4 ms)".
std::string describe_schedule(const ScheduleReport& report);

}  // namespace onepool
