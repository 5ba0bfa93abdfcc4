#include "bench/model_configs.h"

#include <memory>
#include <utility>

#include "bench/baselines/baselines.h"
#include "onepool/model.h"
#include "onepool/plan.h"
#include "planner/analysis/build_plan.h"
#include "planner/core/graph.h"
#include "runtime/cpu/cpu_backend.h"

namespace onepool::bench {
namespace {

struct LoadedModel {
  std::shared_ptr<const Model> model;
  NodeMemoryNeeds needs;  // workspaces and sharing, as the CPU kernels declare them
};

// Workspaces and storage sharing come from the CPU kernels, the facts a CPU Session plans with.
Expected<LoadedModel> load_model(const BenchModel& bench_model, const std::string& schedule,
                                 std::string& note) {
  LoadOptions options;
  options.input_shapes = bench_model.input_shapes;
  options.bounds = bench_model.bounds;
  options.schedule = schedule;
  LoadedModel loaded;
  ONEPOOL_ASSIGN_OR_RETURN(loaded.model, Model::load(bench_model.path, options));
  int unsupported = 0;
  loaded.needs = cpu::memory_needs(loaded.model->graph(), &unsupported);
  if (unsupported > 0) {
    note += str_cat(unsupported, " node(s) without a CPU kernel (no workspace, no sharing); ");
  }
  return loaded;
}

std::vector<UsageRecord> owned_records(const Plan& plan) {
  std::vector<UsageRecord> records;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.alias_of < 0) records.push_back({tensor.first, tensor.last, tensor.bytes});
  }
  return records;
}

size_t reordered_nodes(const Graph& graph, const Graph& model_order) {
  if (graph.nodes.size() != model_order.nodes.size()) return graph.nodes.size();
  size_t moved = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    moved += graph.nodes[i].name != model_order.nodes[i].name ? 1 : 0;
  }
  return moved;
}

Status add_baselines(const Plan& ours, ConfigResult& result) {
  const std::vector<UsageRecord> records = owned_records(ours);
  result.records = records.size();
  AlgorithmOptions options;
  options.alignment = ours.alignment;
  for (const BaselineInfo& baseline : all_baselines()) {
    ONEPOOL_ASSIGN_OR_RETURN(BaselineRun run, run_baseline(baseline, records, options));
    result.pools.push_back({baseline.name, true, run.placement.pool_bytes, run.placement_ms, true});
  }
  return Status::ok();
}

Expected<ConfigResult> bench_config(const std::string& config, const LoadedModel& loaded,
                                    bool aliasing, const Graph& model_order) {
  ConfigResult result;
  result.config = config;
  result.reordered_nodes = reordered_nodes(loaded.model->graph(), model_order);
  Plan ours;
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    PlanOptions options;
    options.algorithm = algorithm.name;
    options.aliasing = aliasing;
    ONEPOOL_ASSIGN_OR_RETURN(Plan plan, build_plan(loaded.model->graph(), options, loaded.needs));
    result.pools.push_back(
        {algorithm.name, false, plan.pool_bytes, plan.planning_ms, plan.verified});
    if (algorithm.name == ours_method()) ours = std::move(plan);
  }
  result.lower_bound_bytes = ours.lower_bound_bytes;
  ONEPOOL_RETURN_IF_ERROR(add_baselines(ours, result).with_context(config));
  return result;
}

}  // namespace

std::string ours_method() { return PlanOptions{}.algorithm; }

size_t ConfigResult::pool_of(const std::string& method) const {
  for (const PoolResult& pool : pools) {
    if (pool.method == method) return pool.pool_bytes;
  }
  return 0;
}

size_t ModelResult::plain_lower_bound_bytes() const {
  return configs.empty() ? 0 : configs.front().lower_bound_bytes;
}

Expected<ModelResult> bench_model(const BenchModel& model) {
  ModelResult result;
  result.name = model.name;
  // Step 1. The model's own order: plain, then aliased.
  ONEPOOL_ASSIGN_OR_RETURN(LoadedModel in_model_order, load_model(model, "model", result.note));
  const Graph& model_order = in_model_order.model->graph();
  result.nodes = model_order.nodes.size();
  ONEPOOL_ASSIGN_OR_RETURN(ConfigResult plain,
                           bench_config("plain", in_model_order, false, model_order));
  result.configs.push_back(std::move(plain));
  ONEPOOL_ASSIGN_OR_RETURN(ConfigResult aliased,
                           bench_config("aliased", in_model_order, true, model_order));
  result.configs.push_back(std::move(aliased));
  // Step 2. The memory-lowering order, aliased. A loader that rejects it costs only this row.
  Expected<LoadedModel> scheduled = load_model(model, "memory", result.note);
  if (!scheduled) {
    result.note += str_cat("schedule memory: ", scheduled.status().message(), "; ");
    return result;
  }
  ONEPOOL_ASSIGN_OR_RETURN(ConfigResult both,
                           bench_config("aliased+scheduled", *scheduled, true, model_order));
  result.configs.push_back(std::move(both));
  return result;
}

}  // namespace onepool::bench
