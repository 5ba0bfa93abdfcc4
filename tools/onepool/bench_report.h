// What `onepool bench` writes to files: the JSON report (--report) and every timed run's
// latency (--export-times).
#pragma once

#include <string>
#include <vector>

#include "tools/onepool/bench_streams.h"
#include "tools/onepool/cli_common.h"
#include "tools/onepool/latency_stats.h"

namespace onepool::cli {

/// The benchmark as the report describes it.
struct BenchSummary {
  const LoadedSession* loaded = nullptr;
  std::string model_path;
  int threads = 0;  ///< per Session, resolved (never 0)
  RunBudget budget;
  const StreamsRun* runs = nullptr;
  LatencyStats all;  ///< over every stream's samples
  std::vector<LatencyStats> per_stream;
};

/// JSON (schema_version 1): model, device, input shapes, threads, streams, OnePool version,
/// machine (CPU model, logical cores), latency_ms {min, mean, stddev, cv, p50, p90, p95, p99,
/// max}, throughput_per_s, per-stream p50/p99, memory (pool, weights, peak RSS), phases.
Status write_report(const std::string& path, const BenchSummary& summary);

/// Every timed run's latency in milliseconds (%.9g), in run order: a ".json" path gets
/// {"unit": "ms", "streams": [[...], ...]}, any other one line per run (with more than one
/// stream, "STREAM MS" per line).
Status write_times(const std::string& path, const StreamsRun& runs);

}  // namespace onepool::cli
