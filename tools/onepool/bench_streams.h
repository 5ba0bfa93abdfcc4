// `onepool bench --streams N`: N Sessions of one Model (weights shared, a pool each) on N
// threads at once, each warming up and then timing its own runs; aggregate throughput over the
// wall time of the timed phase and per-stream latencies.
#pragma once

#include <memory>
#include <vector>

#include "planner/core/graph.h"
#include "tools/onepool/bench_timing.h"
#include "tools/onepool/cli_common.h"

namespace onepool::cli {

struct StreamsRun {
  std::vector<TimedRuns> streams;   ///< one per Session, stream 0 is `loaded.session`
  double elapsed_s = 0;             ///< wall time from the common start to the last stream's end
  std::vector<HostTensor> outputs;  ///< stream 0's outputs of its last run
};

/// Runs `loaded.session` plus streams - 1 more Sessions created with `options` and its plan.
/// Every stream warms up, waits for the others, then runs `budget`; stream 0 keeps the node
/// timelines of its first `traced_runs`. The first error of any stream is returned.
Expected<StreamsRun> run_streams(const LoadedSession& loaded, SessionOptions options, int streams,
                                 std::span<const TensorView> inputs, const RunBudget& budget,
                                 size_t traced_runs);

}  // namespace onepool::cli
