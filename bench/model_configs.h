// One model under the three planning configurations plan_bench compares:
//   plain              aliasing off, the model's own execution order
//   aliased            views, in-place kernels and Concat in place (PlanOptions::aliasing)
//   aliased+scheduled  the same, after the memory-lowering order (LoadOptions::schedule)
// In each: our default algorithm, every registered algorithm, and every peer baseline (run on
// the records the default plan owns: tensors that are not aliases, and workspaces).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/model_suite.h"
#include "onepool/status.h"

namespace onepool::bench {

struct PoolResult {
  std::string method;  // the default algorithm (ours), another algorithm, or a baseline
  bool is_baseline = false;
  size_t pool_bytes = 0;
  double placement_ms = 0.0;
  bool verified = false;
};

struct ConfigResult {
  std::string config;             // "plain", "aliased", "aliased+scheduled"
  size_t records = 0;             // records the default plan owns
  size_t lower_bound_bytes = 0;   // of this configuration's records
  size_t reordered_nodes = 0;     // nodes whose step differs from the model's order
  std::vector<PoolResult> pools;  // ours first, then the algorithms, then the baselines

  /// The pool of `method`, or 0 when it is absent.
  size_t pool_of(const std::string& method) const;
};

struct ModelResult {
  std::string name;
  size_t nodes = 0;
  std::string note;  // what was missing (a config that failed, workspaces not found)
  std::vector<ConfigResult> configs;

  size_t plain_lower_bound_bytes() const;
};

/// The method plan_bench calls ours: the default algorithm (PlanOptions::algorithm).
std::string ours_method();

/// Loads `model` (once per execution order) and plans it under every configuration. A config
/// that cannot be built is left out with the reason in `note`; a baseline whose placement does
/// not verify is an error.
Expected<ModelResult> bench_model(const BenchModel& model);

}  // namespace onepool::bench
