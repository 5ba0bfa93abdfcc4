// plan_speed: placement time of the algorithms alone (no graph, no plan building) on seeded
// synthetic record sets, the minimum of several runs: DNN-like sets of 1k, 10k and 100k records
// and two adversarial 10k sets (plan_bench's instances), and a scattered 100k set. Reports wall
// clock and the thread's CPU time (steadier on a shared machine).
//
//   plan_speed                          # auto and greedy-by-size, 7 runs each
//   plan_speed --algorithm exact --reps 3 --budget 100
//   plan_speed --threads 2              # large instances placed in parts on two threads
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bench/synthetic_records.h"
#include "planner/algo/algorithms.h"

namespace onepool::bench {
namespace {

constexpr size_t kAlignment = 256;

double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

struct Instance {
  std::string name;
  std::vector<UsageRecord> records;
};

std::vector<Instance> instances() {
  return {{"random-dnn-1k", dnn_like(1000, 1)},
          {"random-dnn-10k", dnn_like(10000, 2)},
          {"random-dnn-100k", dnn_like(100000, 3)},
          {"adversarial-all-live-10k", all_live(10000, 4)},
          {"adversarial-uniform-10k", uniform_long(10000, 5)},
          {"scattered-100k", scattered(100000, 6)}};
}

int bench_one(const Instance& instance, const AlgorithmInfo& algorithm,
              const AlgorithmOptions& options, int reps) {
  double best_ms = std::numeric_limits<double>::max();
  double best_cpu_ms = std::numeric_limits<double>::max();
  Placement placement;
  for (int rep = 0; rep < reps; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_ms();
    auto result = algorithm.run(instance.records, options);
    best_cpu_ms = std::min(best_cpu_ms, thread_cpu_ms() - cpu_start);
    const auto stop = std::chrono::steady_clock::now();
    if (!result) {
      std::fprintf(stderr, "%s (%s): %s\n", instance.name.c_str(), algorithm.name,
                   result.status().message().c_str());
      return 1;
    }
    best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(stop - start).count());
    placement = std::move(*result);
  }
  const Status verdict = verify_placement(instance.records, placement, options.alignment);
  const double ratio =
      static_cast<double>(placement.pool_bytes) /
      static_cast<double>(std::max<size_t>(1, lower_bound_bytes(instance.records)));
  std::printf("%-26s %-24s %10.3f ms  cpu %10.3f ms  pool/LB %.4f%s%s\n", instance.name.c_str(),
              algorithm.name, best_ms, best_cpu_ms, ratio,
              placement.proven_optimal ? "  optimal" : "", verdict.is_ok() ? "" : "  INVALID");
  return verdict.is_ok() ? 0 : 1;
}

int run(const std::vector<std::string>& names, const std::string& only, int reps, double budget_ms,
        int threads) {
  AlgorithmOptions options;
  options.alignment = kAlignment;
  options.budget_ms = budget_ms;
  options.threads = threads;
  int failures = 0;
  for (const Instance& instance : instances()) {
    if (!only.empty() && instance.name.find(only) == std::string::npos) continue;
    for (const std::string& name : names) {
      auto algorithm = find_algorithm(name);
      if (!algorithm) {
        std::fprintf(stderr, "%s\n", algorithm.status().message().c_str());
        return 2;
      }
      failures += bench_one(instance, **algorithm, options, reps);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace onepool::bench

int main(int argc, char** argv) {
  CLI::App app{"placement speed on synthetic record sets"};
  std::vector<std::string> names = {"greedy-by-size", "auto"};
  std::string only;
  int reps = 7;
  double budget_ms = 100.0;
  app.add_option("--algorithm", names, "algorithms to time (repeatable)");
  app.add_option("--instance", only, "only instances whose name contains this");
  app.add_option("--reps", reps, "runs per algorithm and instance; the minimum is reported");
  int threads = 1;
  app.add_option("--budget", budget_ms, "AlgorithmOptions::budget_ms");
  app.add_option("--threads", threads,
                 "AlgorithmOptions::threads (0: one per core); the placements do not change")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  return onepool::bench::run(names, only, std::max(1, reps), budget_ms, threads);
}
