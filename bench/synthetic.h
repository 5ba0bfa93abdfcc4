// Synthetic record sets for placement speed and quality beyond the models: seeded DNN-like
// sets of 1k, 10k and 100k records (one record per step; 85% die within 3 steps, 13% within 30,
// 2% are long skip connections; sizes log-uniform 256 B .. 16 MB) and two adversarial 10k sets
// (every record live at once; uniformly random long lifetimes).
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace onepool::bench {

struct SyntheticRow {
  std::string instance;
  size_t records = 0;
  std::string method;
  bool is_baseline = false;
  size_t lower_bound_bytes = 0;
  size_t pool_bytes = 0;
  double placement_ms = 0.0;  // placement alone (no verification)
  bool verified = false;
};

/// Every algorithm on every instance; the peer baselines too on instances of at most
/// `baseline_max_records` records (they are quadratic).
std::vector<SyntheticRow> bench_synthetic(size_t baseline_max_records);

void print_synthetic(const std::vector<SyntheticRow>& rows);
nlohmann::json synthetic_json(const std::vector<SyntheticRow>& rows);

}  // namespace onepool::bench
