// plan_bench: our placement against the peers' on real models and synthetic record sets.
//
//   plan_bench [MODEL.onnx ...] [--models-dir DIR ...] [--shapes x:1x3x224x224] [--json FILE]
//              [--no-synthetic] [--no-models] [--self-check]
//
// Per model, three tables (plain; aliased; aliased+scheduled), each row: the plain lower bound
// and, as pool / plain LB, our default algorithm, every registered algorithm and every peer
// baseline (bench/baselines/: TFLite Micro, TVM USMP, ONNX Runtime's memory pattern and arena).
// Then the summary lines and the synthetic record sets (placement time per algorithm for 1k,
// 10k and 100k records). A folder with a manifest.json (the generated suite, the fetched real
// models) binds each model's input shapes from it.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/baseline_check.h"
#include "bench/model_configs.h"
#include "bench/model_report.h"
#include "bench/model_suite.h"
#include "bench/synthetic.h"
#include "planner/core/shape_binding.h"

namespace onepool::bench {
namespace {

constexpr size_t kBaselineMaxSyntheticRecords = 10000;

struct Flags {
  std::vector<std::string> model_paths;
  std::vector<std::string> model_dirs;
  std::vector<std::string> shapes;
  std::string json_path;
  bool no_synthetic = false;
  bool no_models = false;
  bool self_check = false;
};

Expected<std::vector<BenchModel>> models_of(const Flags& flags) {
  std::vector<BenchModel> models;
  for (const std::string& dir : flags.model_dirs) {
    ONEPOOL_ASSIGN_OR_RETURN(std::vector<BenchModel> found, models_in_folder(dir));
    models.insert(models.end(), found.begin(), found.end());
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const std::string& text : flags.shapes) {
    ONEPOOL_ASSIGN_OR_RETURN(auto parsed, parse_shapes_flag(text));
    shapes.insert(shapes.end(), parsed.begin(), parsed.end());
  }
  for (const std::string& path : flags.model_paths) models.push_back(model_file(path, shapes));
  return models;
}

Status write_json(const std::string& path, const nlohmann::json& out) {
  std::ofstream file(path);
  file << out.dump(1) << "\n";
  file.close();
  if (!file) return make_status(StatusCode::kNotFound, "cannot write '", path, "'");
  return Status::ok();
}

int run(const Flags& flags) {
  if (flags.self_check) return run_baseline_self_check();
  auto models = models_of(flags);
  if (!models) {
    std::cerr << "error: " << models.status().message() << "\n";
    return 2;
  }
  std::vector<ModelResult> results;
  int exit_code = 0;
  for (const BenchModel& model : flags.no_models ? std::vector<BenchModel>{} : *models) {
    std::cerr << "planning " << model.name << "\n";
    auto result = bench_model(model);
    if (!result) {
      // A baseline that placed badly, or a model that does not load: say so, fail the run.
      std::cerr << "error: " << model.name << ": " << result.status().message() << "\n";
      exit_code = 1;
      continue;
    }
    results.push_back(std::move(result).value());
  }
  print_model_tables(results);
  if (!print_summary(results)) exit_code = 1;
  std::vector<SyntheticRow> synthetic;
  if (!flags.no_synthetic) synthetic = bench_synthetic(kBaselineMaxSyntheticRecords);
  print_synthetic(synthetic);
  for (const SyntheticRow& row : synthetic) exit_code = row.verified ? exit_code : 1;
  if (flags.json_path.empty()) return exit_code;
  const Status written = write_json(flags.json_path, {{"summary", summary_json(results)},
                                                      {"models", models_json(results)},
                                                      {"synthetic", synthetic_json(synthetic)}});
  if (written.is_ok()) return exit_code;
  std::cerr << "error: " << written.message() << "\n";
  return 1;
}

}  // namespace
}  // namespace onepool::bench

int main(int argc, char** argv) {
  CLI::App app{"plan_bench: our placement against peer baselines on models and record sets"};
  onepool::bench::Flags flags;
  app.add_option("models", flags.model_paths, "MODEL.onnx files (shapes from --shapes)");
  app.add_option("--models-dir", flags.model_dirs,
                 "every model in DIR/manifest.json, or every *.onnx under DIR (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--shapes", flags.shapes, "input shapes of the MODEL.onnx files (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--json", flags.json_path, "also write every number as JSON to FILE");
  app.add_flag("--no-synthetic", flags.no_synthetic, "skip the synthetic record sets");
  app.add_flag("--no-models", flags.no_models, "skip the models");
  app.add_flag("--self-check", flags.self_check,
               "only check the peer baselines on small known instances (seconds)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return onepool::bench::run(flags);
}
