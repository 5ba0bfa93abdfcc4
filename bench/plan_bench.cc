// plan_bench: every placement algorithm on real models and on synthetic record sets.
//
//   plan_bench [MODEL.onnx ...] [--models-dir DIR] [--shapes x:1x3x224x224] [--json FILE]
//
// One row per (instance, algorithm): nodes, tensors, naive / lower-bound / pool MB, pool/LB and
// the placement time. Synthetic instances are seeded: DNN-like sets of 1k, 10k and 100k records
// (lifetimes mostly a few steps, sizes log-uniform 256 B .. 16 MB) plus two adversarial 10k sets
// (every record live at once; uniformly random long lifetimes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "planner/algo/algorithms.h"
#include "planner/build_plan.h"
#include "planner/onnx_import.h"
#include "planner/shape_binding.h"

namespace onepool::bench {
namespace {

constexpr double kBytesPerMB = 1e6;
constexpr size_t kAlignment = 256;

struct Row {
  std::string instance;
  std::string algorithm;
  size_t nodes = 0;
  size_t tensors = 0;
  size_t naive_bytes = 0;
  size_t lower_bound_bytes = 0;
  size_t pool_bytes = 0;
  double planning_ms = 0.0;
  bool verified = false;
};

Row row_of(const std::string& instance, size_t nodes, const Plan& plan) {
  return {instance,         plan.algorithm,         nodes,
          plan.tensors.size(), plan.naive_bytes,  plan.lower_bound_bytes,
          plan.pool_bytes,  plan.planning_ms,       plan.verified};
}

size_t log_uniform_bytes(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> exponent(std::log(256.0), std::log(16.0 * 1024 * 1024));
  const auto bytes = static_cast<size_t>(std::exp(exponent(rng)));
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// One record per step; 85% die within 3 steps, 13% within 30, 2% are skip connections.
std::vector<UsageRecord> dnn_like(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t roll = rng() % 100;
    const uint64_t length = roll < 85 ? 1 + rng() % 3 : roll < 98 ? rng() % 30 : rng() % (count / 10 + 1);
    records[i] = {static_cast<int64_t>(i), static_cast<int64_t>(i + length), log_uniform_bytes(rng)};
  }
  return records;
}

std::vector<UsageRecord> all_live(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (auto& record : records) record = {0, static_cast<int64_t>(count), log_uniform_bytes(rng)};
  return records;
}

std::vector<UsageRecord> uniform_long(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (auto& record : records) {
    const auto a = static_cast<int64_t>(rng() % count);
    const auto b = static_cast<int64_t>(rng() % count);
    record = {std::min(a, b), std::max(a, b), log_uniform_bytes(rng)};
  }
  return records;
}

void bench_records(const std::string& name, const std::vector<UsageRecord>& records,
                   std::vector<Row>& rows) {
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    PlanOptions options;
    options.algorithm = algorithm.name;
    auto plan = build_plan_from_records(records, {}, options);
    if (!plan) {
      std::cerr << name << " (" << algorithm.name << "): " << plan.status().message() << "\n";
      continue;
    }
    rows.push_back(row_of(name, records.size(), *plan));
  }
}

Expected<ImportOptions> import_options(const std::vector<std::string>& shapes) {
  ImportOptions options;
  for (const std::string& text : shapes) {
    ONEPOOL_ASSIGN_OR_RETURN(auto parsed, parse_shapes_flag(text));
    options.input_shapes.insert(options.input_shapes.end(), parsed.begin(), parsed.end());
  }
  return options;
}

Status bench_model(const std::string& path, const ImportOptions& import, std::vector<Row>& rows) {
  ONEPOOL_ASSIGN_OR_RETURN(Graph graph, import_onnx_file(path, import));
  const std::string name = std::filesystem::path(path).filename().string();
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    PlanOptions options;
    options.algorithm = algorithm.name;
    ONEPOOL_ASSIGN_OR_RETURN(Plan plan, build_plan(graph, options));
    rows.push_back(row_of(name, graph.nodes.size(), plan));
  }
  return Status::ok();
}

std::vector<std::string> models_under(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->path().extension() == ".onnx") paths.push_back(it->path().string());
  }
  if (error) std::cerr << "--models-dir " << dir << ": " << error.message() << "\n";
  std::sort(paths.begin(), paths.end());
  return paths;
}

void print_table(const std::vector<Row>& rows) {
  std::printf("%-32s %-15s %7s %8s %10s %10s %10s %8s %11s %s\n", "instance", "algorithm",
              "nodes", "tensors", "naive MB", "LB MB", "pool MB", "pool/LB", "planning ms",
              "verified");
  for (const Row& row : rows) {
    const double ratio = row.lower_bound_bytes == 0
                             ? 1.0
                             : static_cast<double>(row.pool_bytes) / row.lower_bound_bytes;
    std::printf("%-32s %-15s %7zu %8zu %10.3f %10.3f %10.3f %8.4f %11.3f %s\n",
                row.instance.c_str(), row.algorithm.c_str(), row.nodes, row.tensors,
                row.naive_bytes / kBytesPerMB, row.lower_bound_bytes / kBytesPerMB,
                row.pool_bytes / kBytesPerMB, ratio, row.planning_ms, row.verified ? "ok" : "FAILED");
  }
}

Status write_json(const std::string& path, const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& row : rows) {
    out.push_back({{"instance", row.instance},
                   {"algorithm", row.algorithm},
                   {"nodes", row.nodes},
                   {"tensors", row.tensors},
                   {"naive_bytes", row.naive_bytes},
                   {"lower_bound_bytes", row.lower_bound_bytes},
                   {"pool_bytes", row.pool_bytes},
                   {"planning_ms", row.planning_ms},
                   {"verified", row.verified}});
  }
  std::ofstream file(path);
  file << out.dump(1) << "\n";
  file.close();
  if (!file) return make_status(StatusCode::kNotFound, "cannot write '", path, "'");
  return Status::ok();
}

int run(const std::vector<std::string>& model_paths, const std::string& models_dir,
        const std::vector<std::string>& shapes, const std::string& json_path) {
  auto import = import_options(shapes);
  if (!import) {
    std::cerr << "error: " << import.status().message() << "\n";
    return 2;
  }
  std::vector<std::string> paths = models_dir.empty() ? std::vector<std::string>{}
                                                      : models_under(models_dir);
  paths.insert(paths.end(), model_paths.begin(), model_paths.end());
  std::vector<Row> rows;
  for (const std::string& path : paths) {
    const Status status = bench_model(path, *import, rows);
    if (!status.is_ok()) std::cerr << "skipped " << path << ": " << status.message() << "\n";
  }
  bench_records("random-dnn-1k", dnn_like(1000, 1), rows);
  bench_records("random-dnn-10k", dnn_like(10000, 2), rows);
  bench_records("random-dnn-100k", dnn_like(100000, 3), rows);
  bench_records("adversarial-all-live-10k", all_live(10000, 4), rows);
  bench_records("adversarial-uniform-10k", uniform_long(10000, 5), rows);
  print_table(rows);
  if (json_path.empty()) return 0;
  const Status written = write_json(json_path, rows);
  if (written.is_ok()) return 0;
  std::cerr << "error: " << written.message() << "\n";
  return 1;
}

}  // namespace
}  // namespace onepool::bench

int main(int argc, char** argv) {
  CLI::App app{"plan_bench: placement algorithms on models and synthetic record sets"};
  std::vector<std::string> model_paths;
  std::string models_dir;
  std::vector<std::string> shapes;
  std::string json_path;
  app.add_option("models", model_paths, "MODEL.onnx files");
  app.add_option("--models-dir", models_dir, "bench every *.onnx under DIR");
  app.add_option("--shapes", shapes, "input shapes: name:1x3x224x224 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--json", json_path, "also write the rows as JSON to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return onepool::bench::run(model_paths, models_dir, shapes, json_path);
}
