#include "bench/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "bench/baselines/baselines.h"
#include "bench/synthetic_records.h"
#include "planner/algo/algorithms.h"
#include "planner/analysis/build_plan.h"

namespace onepool::bench {
namespace {

constexpr double kBytesPerMB = 1e6;
constexpr size_t kAlignment = 256;

void bench_algorithms(const std::string& name, const std::vector<UsageRecord>& records,
                      std::vector<SyntheticRow>& rows) {
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    PlanOptions options;
    options.algorithm = algorithm.name;
    auto plan = build_plan_from_records(records, {}, options);
    if (!plan) {
      std::cerr << name << " (" << algorithm.name << "): " << plan.status().message() << "\n";
      continue;
    }
    rows.push_back({name, records.size(), algorithm.name, false, plan->lower_bound_bytes,
                    plan->pool_bytes, plan->planning_ms, plan->verified});
  }
}

void bench_baselines(const std::string& name, const std::vector<UsageRecord>& records,
                     std::vector<SyntheticRow>& rows) {
  const size_t lower_bound = lower_bound_bytes(records);
  for (const BaselineInfo& baseline : all_baselines()) {
    AlgorithmOptions options;
    options.alignment = kAlignment;
    auto run = run_baseline(baseline, records, options);
    if (!run) std::cerr << "error: " << name << ": " << run.status().message() << "\n";
    rows.push_back({name, records.size(), baseline.name, true, lower_bound,
                    run ? run->placement.pool_bytes : 0, run ? run->placement_ms : 0.0,
                    run.has_value()});
  }
}

void print_synthetic_versus_peers(const std::vector<SyntheticRow>& rows) {
  for (const SyntheticRow& ours : rows) {
    if (ours.is_baseline || ours.method != PlanOptions{}.algorithm) continue;
    const SyntheticRow* best = nullptr;
    for (const SyntheticRow& row : rows) {
      if (row.is_baseline && row.verified && row.instance == ours.instance &&
          (best == nullptr || row.pool_bytes < best->pool_bytes)) {
        best = &row;
      }
    }
    if (best == nullptr) continue;
    std::printf("%s: ours / best peer (%s) %.4f\n", ours.instance.c_str(), best->method.c_str(),
                static_cast<double>(ours.pool_bytes) / static_cast<double>(best->pool_bytes));
  }
}

}  // namespace

std::vector<SyntheticRow> bench_synthetic(size_t baseline_max_records) {
  const std::vector<std::pair<std::string, std::vector<UsageRecord>>> instances = {
      {"random-dnn-1k", dnn_like(1000, 1)},
      {"random-dnn-10k", dnn_like(10000, 2)},
      {"random-dnn-100k", dnn_like(100000, 3)},
      {"adversarial-all-live-10k", all_live(10000, 4)},
      {"adversarial-uniform-10k", uniform_long(10000, 5)},
  };
  std::vector<SyntheticRow> rows;
  for (const auto& [name, records] : instances) {
    bench_algorithms(name, records, rows);
    if (records.size() <= baseline_max_records) bench_baselines(name, records, rows);
  }
  return rows;
}

void print_synthetic(const std::vector<SyntheticRow>& rows) {
  std::printf("\n== synthetic record sets: placement time (ms, placement alone) and pool/LB\n");
  std::printf("%-26s %8s %-24s %10s %10s %8s %12s %s\n", "instance", "records", "method", "LB MB",
              "pool MB", "pool/LB", "placement ms", "verified");
  for (const SyntheticRow& row : rows) {
    const double ratio = row.lower_bound_bytes == 0
                             ? 1.0
                             : static_cast<double>(row.pool_bytes) / row.lower_bound_bytes;
    const std::string method = row.is_baseline ? "peer:" + row.method : row.method;
    std::printf("%-26s %8zu %-24s %10.3f %10.3f %8.4f %12.3f %s\n", row.instance.c_str(),
                row.records, method.c_str(), row.lower_bound_bytes / kBytesPerMB,
                row.pool_bytes / kBytesPerMB, ratio, row.placement_ms,
                row.verified ? "ok" : "FAILED");
  }
  print_synthetic_versus_peers(rows);
}

nlohmann::json synthetic_json(const std::vector<SyntheticRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const SyntheticRow& row : rows) {
    out.push_back({{"instance", row.instance},
                   {"records", row.records},
                   {"method", row.method},
                   {"baseline", row.is_baseline},
                   {"lower_bound_bytes", row.lower_bound_bytes},
                   {"pool_bytes", row.pool_bytes},
                   {"placement_ms", row.placement_ms},
                   {"verified", row.verified}});
  }
  return out;
}

}  // namespace onepool::bench
