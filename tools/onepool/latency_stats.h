// Latency percentiles for run and bench.
#pragma once

#include <string>
#include <vector>

namespace onepool::cli {

struct LatencyStats {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  double throughput_per_s = 0;
  size_t iterations = 0;
};

/// Stats over per-iteration milliseconds (sorted copy; nearest-rank percentiles).
LatencyStats compute_latency_stats(std::vector<double> samples_ms);
/// "latency ms: min 1.2 | mean 1.3 | p50 ... | throughput 800.1 /s (N iterations)"
std::string format_latency(const LatencyStats& stats);

}  // namespace onepool::cli
