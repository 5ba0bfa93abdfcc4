// Latency statistics for run and bench, printed in a unit that keeps their digits.
#pragma once

#include <string>
#include <vector>

namespace onepool::cli {

/// Per-run latencies in milliseconds (unrounded doubles throughout).
struct LatencyStats {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  double stddev = 0;            // sample standard deviation (n - 1); 0 for one run
  double cv = 0;                // coefficient of variation: stddev / mean
  double elapsed_s = 0;         // wall time of the timed runs, loop included
  double throughput_per_s = 0;  // iterations / elapsed_s
  size_t iterations = 0;
};

/// CV above which bench warns that the runs are unstable (10%).
constexpr double kUnstableCv = 0.10;

/// Stats over `samples_ms` (nearest-rank percentiles). `elapsed_s` is the wall time of all the
/// runs; throughput divides the run count by it (0: by the samples' sum instead).
LatencyStats compute_latency_stats(std::vector<double> samples_ms, double elapsed_s = 0);

/// A unit for durations: ns below 1 µs, µs below 1 ms, ms below 10 s, s above.
struct TimeUnit {
  const char* name;  // "ns", "µs", "ms", "s"
  double per_ms;     // units in one millisecond
  int decimals;      // digits after the point worth printing (the clock ticks in ns)
};
TimeUnit time_unit_for(double ms);

/// "412.0 ns", "24.131 µs", "168.933 ms".
std::string format_duration(double ms);

/// Three lines: "latency µs: min .. | mean .. | p50 .. | p90 .. | p95 .. | p99 .. | max ..",
/// "spread:    stddev .. | CV 2.1%", "throughput: N inferences/s (R runs in T)". One unit for
/// the whole latency line, chosen by the minimum, so a sub-microsecond run never reads 0.000.
std::string format_latency(const LatencyStats& stats);

/// "unstable: CV 12.8% > 10% (stddev .. over mean ..): ..." when the CV is above kUnstableCv
/// over at least 2 runs; otherwise empty.
std::string stability_warning(const LatencyStats& stats);

}  // namespace onepool::cli
