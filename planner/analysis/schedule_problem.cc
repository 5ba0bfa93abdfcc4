// The scheduling problem: dense arrays from a Graph, the live-bytes simulation, and the split at
// cut nodes.
#include "planner/analysis/schedule_problem.h"

#include <algorithm>
#include <limits>

#include "planner/analysis/liveness.h"

namespace onepool::schedule_detail {
namespace {

constexpr int32_t kNotPlanned = -1;

void push_unique(std::vector<int32_t>& list, int32_t item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Dense ids for the planned values (non-weight), with their aligned sizes.
Status add_values(const Graph& graph, size_t alignment, ScheduleProblem& problem,
                  std::vector<int32_t>& dense_of, size_t& total) {
  dense_of.assign(graph.values.size(), kNotPlanned);
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& value = graph.values[id];
    if (value.kind == ValueKind::kWeight) continue;
    auto bytes = tensor_bytes(value.shape, value.dtype);
    if (!bytes) return bytes.status().with_context(str_cat("tensor '", value.name, "'"));
    ONEPOOL_ASSIGN_OR_RETURN(const size_t aligned, align_up(*bytes, alignment));
    if (aligned > static_cast<size_t>(std::numeric_limits<int64_t>::max()) - total) {
      return make_status(StatusCode::kOutOfRange, "total bytes of the tensors overflow at '",
                         value.name, "'");
    }
    total += aligned;
    dense_of[id] = static_cast<int32_t>(problem.value_bytes.size());
    problem.value_bytes.push_back(aligned);
    problem.value_pinned.push_back(value.is_graph_output ? 1 : 0);
  }
  const size_t count = problem.value_bytes.size();
  problem.value_consumer_count.assign(count, 0);
  problem.value_consumers.assign(count, {});
  problem.value_producer.assign(count, kNoNode);
  return Status::ok();
}

Status add_node_edges(const Graph& graph, const std::vector<int32_t>& dense_of,
                      ScheduleProblem& problem) {
  const auto count = static_cast<size_t>(problem.node_count);
  problem.node_inputs.assign(count, {});
  problem.node_preds.assign(count, {});
  problem.node_succs.assign(count, {});
  problem.node_output_bytes.assign(count, 0);
  problem.node_kept_bytes.assign(count, 0);
  for (size_t n = 0; n < count; ++n) {
    for (ValueId out : graph.nodes[n].outputs) {
      if (out == kNoValue || dense_of[static_cast<size_t>(out)] == kNotPlanned) continue;
      problem.value_producer[static_cast<size_t>(dense_of[static_cast<size_t>(out)])] =
          static_cast<int32_t>(n);
    }
  }
  for (size_t n = 0; n < count; ++n) {
    const auto node = static_cast<int32_t>(n);
    for (ValueId in : graph.nodes[n].inputs) {
      if (in == kNoValue || dense_of[static_cast<size_t>(in)] == kNotPlanned) continue;
      const int32_t v = dense_of[static_cast<size_t>(in)];
      const Value& value = graph.values[static_cast<size_t>(in)];
      const int32_t producer = problem.value_producer[static_cast<size_t>(v)];
      if (producer == kNoNode && value.kind != ValueKind::kGraphInput) {
        return make_status(StatusCode::kInvalidModel, describe_node(graph.nodes[n]),
                           ": reads tensor '", value.name, "' that no node produces");
      }
      if (producer >= node) {
        return make_status(StatusCode::kInvalidModel,
                           "nodes are not in a topological order: ", describe_node(graph.nodes[n]),
                           " reads tensor '", value.name, "' produced by a later node");
      }
      push_unique(problem.node_inputs[n], v);
      if (producer != kNoNode) {
        push_unique(problem.node_preds[n], producer);
        push_unique(problem.node_succs[static_cast<size_t>(producer)], node);
      }
    }
    for (int32_t v : problem.node_inputs[n]) {
      problem.value_consumers[static_cast<size_t>(v)].push_back(node);
      ++problem.value_consumer_count[static_cast<size_t>(v)];
    }
  }
  return Status::ok();
}

void add_sizes(const Graph& graph, const std::vector<int32_t>& dense_of, ScheduleProblem& problem) {
  for (size_t n = 0; n < static_cast<size_t>(problem.node_count); ++n) {
    std::vector<int32_t> outputs;
    for (ValueId out : graph.nodes[n].outputs) {
      if (out != kNoValue && dense_of[static_cast<size_t>(out)] != kNotPlanned) {
        push_unique(outputs, dense_of[static_cast<size_t>(out)]);
      }
    }
    for (int32_t v : outputs) {
      const auto index = static_cast<size_t>(v);
      problem.node_output_bytes[n] += problem.value_bytes[index];
      if (problem.value_pinned[index] != 0 || problem.value_consumer_count[index] > 0) {
        problem.node_kept_bytes[n] += problem.value_bytes[index];
      }
    }
  }
  for (ValueId id : graph.inputs) {
    const int32_t v = dense_of[static_cast<size_t>(id)];
    if (v == kNotPlanned) continue;
    const auto index = static_cast<size_t>(v);
    const bool stays = problem.value_pinned[index] != 0 || problem.value_consumer_count[index] > 0;
    (stays ? problem.initial_resident : problem.first_step_extra) += problem.value_bytes[index];
  }
}

// Per node, how many other nodes are its ancestors (or descendants). Reachability from 64
// source nodes at a time travels as one bit mask per node through the model order:
// O(N/64 · E) time, O(N) memory.
std::vector<int32_t> count_related(const ScheduleProblem& problem, bool ancestors) {
  const int32_t count = problem.node_count;
  std::vector<int32_t> related(static_cast<size_t>(count), 0);
  std::vector<uint64_t> reached(static_cast<size_t>(count));
  const auto& edges_in = ancestors ? problem.node_preds : problem.node_succs;
  for (int32_t block = 0; block < count; block += 64) {
    std::fill(reached.begin(), reached.end(), 0);
    // Only nodes after the block (for ancestors; before it for descendants) can be reached.
    const int32_t first = ancestors ? block : std::min(count, block + 64) - 1;
    const int32_t steps = ancestors ? count - block : first + 1;
    for (int32_t step = 0; step < steps; ++step) {
      const int32_t n = ancestors ? first + step : first - step;
      uint64_t mask = 0;
      for (int32_t other : edges_in[static_cast<size_t>(n)]) {
        mask |= reached[static_cast<size_t>(other)];
      }
      related[static_cast<size_t>(n)] += __builtin_popcountll(mask);
      if (n >= block && n < block + 64) mask |= uint64_t{1} << (n - block);
      reached[static_cast<size_t>(n)] = mask;
    }
  }
  return related;
}

// A workspace is live at its node's step only: it adds to the bytes of that step.
Status add_workspaces(const Graph& graph, std::span<const size_t> workspace_bytes, size_t alignment,
                      size_t total, ScheduleProblem& problem) {
  if (workspace_bytes.empty()) return Status::ok();
  if (workspace_bytes.size() != graph.nodes.size()) {
    return make_status(StatusCode::kInvalidArgument, "workspace sizes: expected one per node (",
                       graph.nodes.size(), "), got ", workspace_bytes.size());
  }
  for (size_t n = 0; n < workspace_bytes.size(); ++n) {
    auto aligned = align_up(workspace_bytes[n], alignment);
    if (!aligned) return aligned.status().with_context(describe_node(graph.nodes[n]));
    if (*aligned > static_cast<size_t>(std::numeric_limits<int64_t>::max()) - total) {
      return make_status(StatusCode::kOutOfRange, describe_node(graph.nodes[n]),
                         ": total bytes of the tensors and workspaces overflow");
    }
    total += *aligned;
    problem.node_output_bytes[n] += *aligned;
  }
  return Status::ok();
}

}  // namespace

Expected<ScheduleProblem> build_problem(const Graph& graph, size_t alignment,
                                        std::span<const size_t> workspace_bytes) {
  ScheduleProblem problem;
  if (graph.nodes.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return make_status(StatusCode::kOutOfRange, "too many nodes to schedule: ", graph.nodes.size());
  }
  problem.node_count = static_cast<int32_t>(graph.nodes.size());
  std::vector<int32_t> dense_of;
  size_t total = 0;
  ONEPOOL_RETURN_IF_ERROR(add_values(graph, alignment, problem, dense_of, total));
  ONEPOOL_RETURN_IF_ERROR(add_node_edges(graph, dense_of, problem));
  add_sizes(graph, dense_of, problem);
  ONEPOOL_RETURN_IF_ERROR(add_workspaces(graph, workspace_bytes, alignment, total, problem));
  return problem;
}

ScheduleState initial_state(const ScheduleProblem& problem) {
  ScheduleState state;
  state.resident = problem.initial_resident;
  state.remaining = problem.value_consumer_count;
  return state;
}

size_t step_bytes(const ScheduleProblem& problem, const ScheduleState& state, int32_t node) {
  const size_t extra = state.started ? 0 : problem.first_step_extra;
  return state.resident + problem.node_output_bytes[static_cast<size_t>(node)] + extra;
}

size_t freed_bytes(const ScheduleProblem& problem, const ScheduleState& state, int32_t node) {
  size_t freed = 0;
  for (int32_t v : problem.node_inputs[static_cast<size_t>(node)]) {
    const auto index = static_cast<size_t>(v);
    if (problem.value_pinned[index] == 0 && state.remaining[index] == 1) {
      freed += problem.value_bytes[index];
    }
  }
  return freed;
}

size_t apply_step(const ScheduleProblem& problem, ScheduleState& state, int32_t node) {
  const size_t live = step_bytes(problem, state, node);
  state.resident += problem.node_kept_bytes[static_cast<size_t>(node)];
  state.resident -= freed_bytes(problem, state, node);
  for (int32_t v : problem.node_inputs[static_cast<size_t>(node)]) {
    --state.remaining[static_cast<size_t>(v)];
  }
  state.started = true;
  return live;
}

size_t order_peak(const ScheduleProblem& problem, ScheduleState& state,
                  std::span<const int32_t> order) {
  const ScheduleState saved_scalars{state.resident, {}, state.started};
  size_t peak = 0;
  for (int32_t node : order) peak = std::max(peak, apply_step(problem, state, node));
  for (int32_t node : order) {
    for (int32_t v : problem.node_inputs[static_cast<size_t>(node)]) {
      ++state.remaining[static_cast<size_t>(v)];
    }
  }
  state.resident = saved_scalars.resident;
  state.started = saved_scalars.started;
  return peak;
}

std::vector<Segment> split_at_cuts(const ScheduleProblem& problem) {
  const int32_t count = problem.node_count;
  const std::vector<int32_t> ancestors = count_related(problem, /*ancestors=*/true);
  const std::vector<int32_t> descendants = count_related(problem, /*ancestors=*/false);
  std::vector<Segment> segments;
  int32_t begin = 0;
  for (int32_t n = 0; n < count; ++n) {
    // A cut: every earlier node is an ancestor and every later node a descendant.
    const bool cut = ancestors[static_cast<size_t>(n)] == n &&
                     descendants[static_cast<size_t>(n)] == count - 1 - n;
    if (cut && n > begin) {
      segments.push_back({begin, n});
      begin = n;
    }
  }
  if (count > begin) segments.push_back({begin, count});
  return segments;
}

std::vector<size_t> segment_lower_bounds(const ScheduleProblem& problem,
                                         std::span<const Segment> segments) {
  const auto segment_count = static_cast<int32_t>(segments.size());
  std::vector<int32_t> segment_of(static_cast<size_t>(problem.node_count), 0);
  for (int32_t s = 0; s < segment_count; ++s) {
    for (int32_t n = segments[static_cast<size_t>(s)].begin;
         n < segments[static_cast<size_t>(s)].end; ++n) {
      segment_of[static_cast<size_t>(n)] = s;
    }
  }
  // Step 1. Values live across whole segments (no consumer there), by a difference array.
  std::vector<int64_t> across(static_cast<size_t>(segment_count) + 1, 0);
  for (size_t v = 0; v < problem.value_bytes.size(); ++v) {
    const auto bytes = static_cast<int64_t>(problem.value_bytes[v]);
    const int32_t producer = problem.value_producer[v];
    int32_t from = producer == kNoNode ? -1 : segment_of[static_cast<size_t>(producer)];
    std::vector<int32_t> points;
    for (int32_t consumer : problem.value_consumers[v]) {
      points.push_back(segment_of[static_cast<size_t>(consumer)]);
    }
    if (problem.value_pinned[v] != 0) points.push_back(segment_count);
    for (int32_t to : points) {
      if (to > from + 1) {
        across[static_cast<size_t>(from + 1)] += bytes;
        across[static_cast<size_t>(to)] -= bytes;
      }
      from = std::max(from, to);
    }
  }
  // Step 2. Plus the largest single step (its inputs and outputs are all live at once).
  std::vector<size_t> bounds(segments.size(), 0);
  int64_t running = 0;
  for (int32_t s = 0; s < segment_count; ++s) {
    running += across[static_cast<size_t>(s)];
    size_t largest_step = 0;
    for (int32_t n = segments[static_cast<size_t>(s)].begin;
         n < segments[static_cast<size_t>(s)].end; ++n) {
      size_t step = problem.node_output_bytes[static_cast<size_t>(n)];
      for (int32_t v : problem.node_inputs[static_cast<size_t>(n)]) {
        step += problem.value_bytes[static_cast<size_t>(v)];
      }
      largest_step = std::max(largest_step, step);
    }
    bounds[static_cast<size_t>(s)] = static_cast<size_t>(running) + largest_step;
  }
  return bounds;
}

}  // namespace onepool::schedule_detail
