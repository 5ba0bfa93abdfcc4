// Memory-aware scheduling on every generated and fetched model: a valid order that never raises
// the peak (each model's peak before and after is printed), and a Session with schedule "memory"
// gives the outputs of the model order.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/model_manifest.h"
#include "onepool/onepool.h"
#include "planner/algo/algorithms.h"
#include "planner/analysis/liveness.h"
#include "planner/analysis/schedule.h"
#include "planner/core/graph.h"
#include "planner/import/onnx_import.h"
#include "planner/optimize/optimize.h"

namespace onepool {
namespace {

constexpr size_t kAlignment = 256;

size_t liveness_lower_bound(const Graph& graph) {
  auto liveness = compute_liveness(graph, NodeMemoryNeeds{}, kAlignment);
  REQUIRE_MESSAGE(liveness.has_value(), liveness.status().to_string());
  return lower_bound_bytes(liveness->records);
}

// Every input's producer runs earlier.
void check_topological(const Graph& graph) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      if (in != kNoValue) REQUIRE(graph.values[size_t(in)].producer < NodeId(n));
    }
  }
}

using onepool_test::ManifestModel;

TEST_CASE("every generated and fetched model: a valid order, never a higher peak") {
  const std::vector<ManifestModel> models = onepool_test::all_manifest_models();
  REQUIRE_MESSAGE(!models.empty(), "no manifest under ONEPOOL_MODELS_DIR");
  for (const ManifestModel& entry : models) {
    CAPTURE(entry.name);
    ImportOptions import;
    import.input_shapes = entry.load.input_shapes;
    import.bounds = entry.load.bounds;
    auto graph = import_onnx_file(entry.path, import);
    if (!graph) {  // a fetched model may be missing: the model suite reports it
      MESSAGE(entry.name, ": not imported: ", graph.status().to_string());
      continue;
    }
    REQUIRE(optimize_graph(*graph, OptimizeLevel::kAll).has_value());
    const size_t before = liveness_lower_bound(*graph);
    auto report = schedule_for_memory(*graph, kAlignment);
    REQUIRE_MESSAGE(report.has_value(), report.status().to_string());
    check_topological(*graph);
    CHECK(report->peak_before == before);
    CHECK(report->peak_after <= before);
    CHECK(report->peak_after == liveness_lower_bound(*graph));
    MESSAGE(entry.name, " (", graph->nodes.size(), " nodes): ", describe_schedule(*report));
  }
}

std::vector<float> run_with_schedule(const ManifestModel& entry, const std::string& schedule,
                                     std::string& summary, const PlanOptions& plan = {}) {
  LoadOptions load = entry.load;
  load.schedule = schedule;
  auto model = Model::load(entry.path, load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  summary = (*model)->optimization_summary();
  SessionOptions options;
  options.plan = plan;
  auto session = Session::create(*model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<std::vector<float>> inputs, outputs;
  std::vector<TensorView> input_views, output_views;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const TensorInfo& info : (*model)->inputs()) {
    inputs.emplace_back(size_t(info.shape.element_count()));
    for (float& x : inputs.back()) x = dist(rng);
    input_views.push_back({inputs.back().data(), info.dtype, info.shape, {}});
  }
  for (const TensorInfo& info : (*model)->outputs()) {
    outputs.emplace_back(size_t(info.shape.element_count()));
    output_views.push_back({outputs.back().data(), info.dtype, info.shape, {}});
  }
  const Status status = (*session)->run(input_views, output_views);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  std::vector<float> all;
  for (const auto& output : outputs) all.insert(all.end(), output.begin(), output.end());
  return all;
}

// Reordering nodes changes no arithmetic: the outputs are bit for bit those of the model order.
TEST_CASE("a Session with schedule 'memory' gives the outputs of the model order") {
  for (const ManifestModel& entry : onepool_test::all_manifest_models()) {
    if (entry.name != "inception" && entry.name != "unet") continue;
    CAPTURE(entry.name);
    std::string model_summary, memory_summary;
    const std::vector<float> expected = run_with_schedule(entry, "model", model_summary);
    const std::vector<float> actual = run_with_schedule(entry, "memory", memory_summary);
    CHECK(actual == expected);
    CHECK(memory_summary.find("schedule memory: peak") != std::string::npos);
    MESSAGE(memory_summary);
  }
  const std::vector<ManifestModel> models = onepool_test::all_manifest_models();
  REQUIRE(!models.empty());
  LoadOptions load = models[0].load;
  load.schedule = "smallest";
  auto model = Model::load(models[0].path, load);
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().message().find("'smallest' is not one of") != std::string::npos);
}

// Numerics never depend on the plan: other placements, and every kernel granted the workspace it
// prefers instead of what fits, give the same bits (U-Net's ConvTranspose once tiled its GEMM by
// the granted workspace; MobileNetV2's fused blocks cut their bands from it).
TEST_CASE("outputs do not depend on the placement algorithm or the workspaces granted") {
  int checked = 0;
  for (const ManifestModel& entry : onepool_test::all_manifest_models()) {
    if (entry.name != "unet" && entry.name != "mobilenetv2" && entry.name != "inception") continue;
    CAPTURE(entry.name);
    std::string summary;
    const std::vector<float> expected = run_with_schedule(entry, "model", summary);
    PlanOptions by_size;
    by_size.algorithm = "greedy-by-size";
    PlanOptions fast;
    fast.fast_workspaces = true;
    for (const PlanOptions& plan : {by_size, fast}) {
      CAPTURE(plan.algorithm);
      CAPTURE(plan.fast_workspaces);
      CHECK(run_with_schedule(entry, "model", summary, plan) == expected);
    }
    ++checked;
  }
  CHECK(checked == 3);
}

}  // namespace
}  // namespace onepool
