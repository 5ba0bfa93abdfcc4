#include "tools/onepool/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace onepool::cli {

namespace {
double percentile(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}
}  // namespace

LatencyStats compute_latency_stats(std::vector<double> samples_ms) {
  LatencyStats stats;
  if (samples_ms.empty()) return stats;
  std::sort(samples_ms.begin(), samples_ms.end());
  stats.iterations = samples_ms.size();
  stats.min = samples_ms.front();
  stats.max = samples_ms.back();
  const double total = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0);
  stats.mean = total / static_cast<double>(samples_ms.size());
  stats.p50 = percentile(samples_ms, 50);
  stats.p90 = percentile(samples_ms, 90);
  stats.p95 = percentile(samples_ms, 95);
  stats.p99 = percentile(samples_ms, 99);
  stats.throughput_per_s = total > 0 ? 1000.0 * static_cast<double>(samples_ms.size()) / total : 0;
  return stats;
}

std::string format_latency(const LatencyStats& s) {
  char text[320];
  std::snprintf(text, sizeof(text),
                "latency ms: min %.3f | mean %.3f | p50 %.3f | p90 %.3f | p95 %.3f | p99 %.3f | "
                "max %.3f\nthroughput: %.2f inferences/s (%zu iterations)",
                s.min, s.mean, s.p50, s.p90, s.p95, s.p99, s.max, s.throughput_per_s,
                s.iterations);
  return text;
}

}  // namespace onepool::cli
