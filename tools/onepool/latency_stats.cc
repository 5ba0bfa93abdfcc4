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

double sample_stddev(const std::vector<double>& samples, double mean) {
  if (samples.size() < 2) return 0;
  double squares = 0;
  for (double sample : samples) squares += (sample - mean) * (sample - mean);
  return std::sqrt(squares / static_cast<double>(samples.size() - 1));
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

// Enough significant digits for any rate: 5.937, 37.25, 40619.
std::string rate_text(double per_s) {
  return fixed(per_s, per_s >= 1000 ? 0 : (per_s >= 100 ? 1 : (per_s >= 10 ? 2 : 3)));
}

}  // namespace

LatencyStats compute_latency_stats(std::vector<double> samples_ms, double elapsed_s) {
  LatencyStats stats;
  if (samples_ms.empty()) return stats;
  std::sort(samples_ms.begin(), samples_ms.end());
  stats.iterations = samples_ms.size();
  stats.min = samples_ms.front();
  stats.max = samples_ms.back();
  const double total_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0);
  stats.mean = total_ms / static_cast<double>(samples_ms.size());
  stats.stddev = sample_stddev(samples_ms, stats.mean);
  stats.cv = stats.mean > 0 ? stats.stddev / stats.mean : 0;
  stats.p50 = percentile(samples_ms, 50);
  stats.p90 = percentile(samples_ms, 90);
  stats.p95 = percentile(samples_ms, 95);
  stats.p99 = percentile(samples_ms, 99);
  stats.elapsed_s = elapsed_s > 0 ? elapsed_s : total_ms / 1000.0;
  stats.throughput_per_s =
      stats.elapsed_s > 0 ? static_cast<double>(samples_ms.size()) / stats.elapsed_s : 0;
  return stats;
}

TimeUnit time_unit_for(double ms) {
  if (ms < 1e-3) return TimeUnit{"ns", 1e6, 1};
  if (ms < 1.0) return TimeUnit{"µs", 1e3, 3};
  if (ms < 10000.0) return TimeUnit{"ms", 1.0, 3};
  return TimeUnit{"s", 1e-3, 3};
}

std::string format_duration(double ms) {
  const TimeUnit unit = time_unit_for(ms);
  return fixed(ms * unit.per_ms, unit.decimals) + " " + unit.name;
}

std::string format_latency(const LatencyStats& s) {
  const TimeUnit unit = time_unit_for(s.min);
  const auto in_unit = [&](double ms) { return fixed(ms * unit.per_ms, unit.decimals); };
  return "latency " + std::string(unit.name) + ": min " + in_unit(s.min) + " | mean " +
         in_unit(s.mean) + " | p50 " + in_unit(s.p50) + " | p90 " + in_unit(s.p90) + " | p95 " +
         in_unit(s.p95) + " | p99 " + in_unit(s.p99) + " | max " + in_unit(s.max) +
         "\nspread:    stddev " + format_duration(s.stddev) + " | CV " + fixed(100 * s.cv, 1) +
         "%\nthroughput: " + rate_text(s.throughput_per_s) + " inferences/s (" +
         std::to_string(s.iterations) + " runs in " + format_duration(1000 * s.elapsed_s) + ")";
}

std::string stability_warning(const LatencyStats& s) {
  if (s.iterations < 2 || s.cv <= kUnstableCv) return "";
  return "unstable: CV " + fixed(100 * s.cv, 1) + "% > " + fixed(100 * kUnstableCv, 0) +
         "% (stddev " + format_duration(s.stddev) + " over mean " + format_duration(s.mean) +
         "): other load on the machine, frequency scaling or too few runs; compare p50s, close "
         "other programs, set --threads, or raise --warmup-ms / --duration";
}

}  // namespace onepool::cli
