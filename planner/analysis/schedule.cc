// Memory-aware scheduling: per segment, the best of the model order, the greedy passes and (when
// small enough) the exact search; then the graph's nodes are permuted into that order.
#include "planner/analysis/schedule.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "planner/analysis/schedule_problem.h"

namespace onepool {
namespace {

using schedule_detail::GreedyRule;
using schedule_detail::ScheduleProblem;
using schedule_detail::ScheduleState;
using schedule_detail::Segment;

constexpr GreedyRule kGreedyRules[] = {GreedyRule::kNetBytes, GreedyRule::kStepBytes,
                                       GreedyRule::kDepthFirst};

Status check_options(const ScheduleOptions& options) {
  if (options.method != "auto" && options.method != "exact" && options.method != "greedy") {
    return make_status(StatusCode::kInvalidArgument, "schedule search method '", options.method,
                       "' is not one of auto, exact, greedy");
  }
  return Status::ok();
}

bool may_search(const ScheduleOptions& options, Segment segment) {
  if (options.method == "greedy") return false;
  const int limit = options.method == "exact"
                        ? kMaxExactSegmentNodes
                        : std::min(options.max_exact_nodes, kMaxExactSegmentNodes);
  return segment.size() <= limit;
}

// The order a segment gets and what is known about it.
struct SegmentChoice {
  std::vector<int32_t> order;
  size_t model_peak = 0;
  size_t peak = 0;
  bool optimal = false;
};

SegmentChoice choose_segment_order(const ScheduleProblem& problem, ScheduleState& state,
                                   Segment segment, size_t lower_bound,
                                   const ScheduleOptions& options, ScheduleReport& report) {
  SegmentChoice choice;
  for (int32_t n = segment.begin; n < segment.end; ++n) choice.order.push_back(n);
  choice.model_peak = schedule_detail::order_peak(problem, state, choice.order);
  choice.peak = choice.model_peak;
  // Step 1. Greedy passes; a strictly lower peak replaces the model order.
  for (GreedyRule rule : kGreedyRules) {
    if (choice.peak <= lower_bound) break;
    std::vector<int32_t> order = schedule_detail::greedy_order(problem, state, segment, rule);
    const size_t peak = schedule_detail::order_peak(problem, state, order);
    if (peak < choice.peak) {
      choice.order = std::move(order);
      choice.peak = peak;
    }
  }
  if (choice.peak <= lower_bound) {
    choice.optimal = true;
    return choice;
  }
  // Step 2. Exact search under what is left of the state budget.
  const int64_t budget = options.max_states - report.states;
  if (!may_search(options, segment) || budget <= 0) return choice;
  schedule_detail::ExactSearch search =
      schedule_detail::search_segment(problem, state, segment, choice.peak, budget);
  report.states += search.states;
  choice.optimal = search.complete;
  if (!search.order.empty() && search.peak < choice.peak) {
    choice.order = std::move(search.order);
    choice.peak = search.peak;
  }
  return choice;
}

void permute_nodes(Graph& graph, const std::vector<int32_t>& order) {
  std::vector<Node> nodes;
  nodes.reserve(graph.nodes.size());
  for (int32_t n : order) nodes.push_back(std::move(graph.nodes[static_cast<size_t>(n)]));
  graph.nodes = std::move(nodes);
  graph.rebuild_edges();
}

std::vector<NodeId> model_order(size_t count) {
  std::vector<NodeId> order(count);
  for (size_t n = 0; n < count; ++n) order[n] = static_cast<NodeId>(n);
  return order;
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string bytes_text(size_t bytes) {
  char text[32];
  const auto value = static_cast<double>(bytes);
  if (bytes >= 1000 * 1000) {
    std::snprintf(text, sizeof(text), "%.1f MB", value / 1e6);
  } else if (bytes >= 1000) {
    std::snprintf(text, sizeof(text), "%.1f KB", value / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%zu B", bytes);
  }
  return text;
}

}  // namespace

Expected<ScheduleReport> schedule_for_memory(Graph& graph, size_t alignment,
                                             const ScheduleOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_RETURN_IF_ERROR(check_options(options));
  ONEPOOL_ASSIGN_OR_RETURN(
      const ScheduleProblem problem,
      schedule_detail::build_problem(graph, alignment, options.workspace_bytes));
  const std::vector<Segment> segments = schedule_detail::split_at_cuts(problem);
  const std::vector<size_t> bounds = schedule_detail::segment_lower_bounds(problem, segments);
  ScheduleReport report;
  report.segments = static_cast<int>(segments.size());
  ScheduleState state = schedule_detail::initial_state(problem);
  // The graph inputs alone (every first step holds at least these): the peak when no node runs.
  report.peak_before = problem.initial_resident + problem.first_step_extra;
  report.peak_after = report.peak_before;
  std::vector<int32_t> order;
  order.reserve(graph.nodes.size());
  bool changed = false;
  for (size_t s = 0; s < segments.size(); ++s) {
    SegmentChoice choice =
        choose_segment_order(problem, state, segments[s], bounds[s], options, report);
    report.peak_before = std::max(report.peak_before, choice.model_peak);
    report.peak_after = std::max(report.peak_after, choice.peak);
    report.exact_segments += choice.optimal ? 1 : 0;
    changed = changed || choice.peak < choice.model_peak;
    for (int32_t node : choice.order) {
      schedule_detail::apply_step(problem, state, node);
      order.push_back(node);
    }
  }
  if (changed) permute_nodes(graph, order);
  report.reordered = changed;
  report.order = changed ? std::move(order) : model_order(graph.nodes.size());
  report.method = report.exact_segments == report.segments ? "exact" : "greedy";
  report.ms = elapsed_ms(start);
  return report;
}

Expected<size_t> schedule_peak_bytes(const Graph& graph, std::span<const NodeId> order,
                                     size_t alignment, std::span<const size_t> workspace_bytes) {
  ONEPOOL_ASSIGN_OR_RETURN(const ScheduleProblem problem,
                           schedule_detail::build_problem(graph, alignment, workspace_bytes));
  if (order.size() != graph.nodes.size()) {
    return make_status(StatusCode::kInvalidArgument, "schedule: expected an order of ",
                       graph.nodes.size(), " nodes, got ", order.size());
  }
  std::vector<uint8_t> done(graph.nodes.size(), 0);
  for (NodeId node : order) {
    if (node < 0 || static_cast<size_t>(node) >= graph.nodes.size() ||
        done[static_cast<size_t>(node)] != 0) {
      return make_status(StatusCode::kInvalidArgument, "schedule: node id ", node,
                         " is out of range or repeated");
    }
    for (int32_t pred : problem.node_preds[static_cast<size_t>(node)]) {
      if (done[static_cast<size_t>(pred)] == 0) {
        return make_status(StatusCode::kInvalidArgument,
                           "schedule: ", describe_node(graph.nodes[static_cast<size_t>(node)]),
                           " runs before its input's producer ",
                           describe_node(graph.nodes[static_cast<size_t>(pred)]));
      }
    }
    done[static_cast<size_t>(node)] = 1;
  }
  if (order.empty()) return problem.initial_resident + problem.first_step_extra;
  ScheduleState state = schedule_detail::initial_state(problem);
  return schedule_detail::order_peak(problem, state, order);
}

std::string describe_schedule(const ScheduleReport& report) {
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.2f ms", report.ms);
  return str_cat("peak ", bytes_text(report.peak_before), " -> ", bytes_text(report.peak_after),
                 " (", report.method, ", ", report.exact_segments, "/", report.segments,
                 " segments exact, ", ms, ")");
}

}  // namespace onepool
