// The scheduling problem as dense arrays, shared by the greedy passes and the exact search
// (internal to planner/schedule*.cc).
//
// Nodes keep their model-order ids; "values" here are only the planned (non-weight) values, with
// dense ids of their own. A ScheduleState is what a set of already scheduled nodes leaves live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool::schedule_detail {

struct ScheduleProblem {
  int32_t node_count = 0;
  std::vector<size_t> value_bytes;                    // aligned bytes per planned value
  std::vector<uint8_t> value_pinned;                  // graph outputs: live to the last step
  std::vector<int32_t> value_consumer_count;          // distinct consumer nodes
  std::vector<std::vector<int32_t>> value_consumers;  // distinct consumer nodes, model order
  std::vector<int32_t> value_producer;                // producer node, or kNoNode
  std::vector<std::vector<int32_t>> node_inputs;      // distinct planned values read
  std::vector<std::vector<int32_t>> node_preds;       // distinct producer nodes of the inputs
  std::vector<std::vector<int32_t>> node_succs;       // distinct consumer nodes of the outputs
  std::vector<size_t> node_output_bytes;              // outputs and workspace: live at the step
  std::vector<size_t> node_kept_bytes;                // outputs that outlive the step
  size_t initial_resident = 0;  // graph inputs someone reads, or that are graph outputs
  size_t first_step_extra = 0;  // graph inputs nobody reads: live at step 0 only
};

/// Builds the problem; errors as schedule_for_memory() documents. The sum of all value and
/// workspace bytes is checked to fit in int64_t, so sums of any subset neither overflow nor lose
/// the sign. `workspace_bytes`: empty, or one per node (unaligned).
Expected<ScheduleProblem> build_problem(const Graph& graph, size_t alignment,
                                        std::span<const size_t> workspace_bytes);

/// Live bytes and unscheduled consumers after some set of nodes ran.
struct ScheduleState {
  size_t resident = 0;             // bytes live between steps
  std::vector<int32_t> remaining;  // per value: consumers not yet scheduled
  bool started = false;            // some node ran (step 0 also holds first_step_extra)
};

ScheduleState initial_state(const ScheduleProblem& problem);
/// Bytes live during the step that runs `node` next.
size_t step_bytes(const ScheduleProblem& problem, const ScheduleState& state, int32_t node);
/// Bytes of `node`'s inputs that die after its step, were it run next.
size_t freed_bytes(const ScheduleProblem& problem, const ScheduleState& state, int32_t node);
/// Runs `node` next: returns the bytes live at its step and updates `state`.
size_t apply_step(const ScheduleProblem& problem, ScheduleState& state, int32_t node);
/// Peak over the steps of `order` run from `state`; `state` is left as it was.
size_t order_peak(const ScheduleProblem& problem, ScheduleState& state,
                  std::span<const int32_t> order);

/// Model-order positions [begin, end): one segment between two cut nodes.
struct Segment {
  int32_t begin = 0;
  int32_t end = 0;
  int32_t size() const { return end - begin; }
};

/// Splits the model order before every cut node (a node that every other node precedes or
/// follows in every topological order). Every valid order keeps the segments in sequence.
std::vector<Segment> split_at_cuts(const ScheduleProblem& problem);

/// Per segment, a lower bound on the peak of any order of it: the largest step's inputs and
/// outputs plus the values live across the whole segment.
std::vector<size_t> segment_lower_bounds(const ScheduleProblem& problem,
                                         std::span<const Segment> segments);

/// Greedy list scheduling of one segment from `state` (left as it was). Deterministic.
enum class GreedyRule {
  kNetBytes,    // least (kept outputs - freed inputs); ties: depth first, then model order
  kStepBytes,   // least bytes allocated at the step; ties: net bytes, then model order
  kDepthFirst,  // continue the branch scheduled last; ties: net bytes, then model order
};
std::vector<int32_t> greedy_order(const ScheduleProblem& problem, ScheduleState& state,
                                  Segment segment, GreedyRule rule);

/// Exact search of one segment (Serenity-style dynamic programming over scheduled sets).
struct ExactSearch {
  std::vector<int32_t> order;  // empty when nothing beats `incumbent_peak` (or over budget)
  size_t peak = 0;
  int64_t states = 0;
  bool complete = false;  // the search finished: `order` is optimal, or none beats the incumbent
};
ExactSearch search_segment(const ScheduleProblem& problem, const ScheduleState& state,
                           Segment segment, size_t incumbent_peak, int64_t max_states);

}  // namespace onepool::schedule_detail
