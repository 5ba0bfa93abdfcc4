// optimize_graph: runs the passes for a level on a working graph and swaps it in on success.
//
// The working graph copies everything but the weights, which are moved over: passes only append
// new weights, never edit or drop existing ones, so on error the originals are moved back intact
// and the caller's graph is unchanged without doubling the weight memory.
#include "planner/optimize/optimize.h"

#include <utility>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool {

namespace {

Status run_passes(Graph& graph, OptimizeLevel level, OptimizeReport& report) {
  ONEPOOL_RETURN_IF_ERROR(graph_opt::remove_identity_nodes(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fold_batchnorms(graph, report));
  if (level != OptimizeLevel::kAll) return Status::ok();
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_qdq(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_pads(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_conv_bias(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_matmul_add(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_gelus(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_residual_adds(graph, report));
  ONEPOOL_RETURN_IF_ERROR(graph_opt::fuse_activations(graph, report));
  return graph_opt::fuse_pointwise_depthwise(graph, report);
}

}  // namespace

Expected<OptimizeLevel> parse_optimize_level(const std::string& text) {
  if (text == "none") return OptimizeLevel::kNone;
  if (text == "basic") return OptimizeLevel::kBasic;
  if (text == "all") return OptimizeLevel::kAll;
  return make_status(StatusCode::kInvalidArgument, "optimize level: expected one of none, basic, ",
                     "all, got '", text, "'");
}

Expected<OptimizeReport> optimize_graph(Graph& graph, OptimizeLevel level) {
  OptimizeReport report;
  report.nodes_before = static_cast<int>(graph.nodes.size());
  report.nodes_after = report.nodes_before;
  if (level == OptimizeLevel::kNone) return report;
  ONEPOOL_RETURN_IF_ERROR(graph_opt::check_graph_ids(graph));

  // Step 1. A working copy that owns the (moved) weights.
  std::vector<HostTensor> weights = std::move(graph.weights);
  graph.weights.clear();
  Graph work = graph;
  work.weights = std::move(weights);
  const size_t original_weight_count = work.weights.size();
  work.rebuild_edges();

  // Step 2. The passes; on error hand the original weights back.
  Status status = run_passes(work, level, report);
  if (!status.is_ok()) {
    work.weights.resize(original_weight_count);
    graph.weights = std::move(work.weights);
    return status;
  }

  // Step 3. Drop dead values and weights, then swap in.
  compact_graph(work);
  graph = std::move(work);
  report.nodes_after = static_cast<int>(graph.nodes.size());
  return report;
}

}  // namespace onepool
