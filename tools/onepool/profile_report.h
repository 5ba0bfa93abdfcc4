// `onepool bench --profile`: the per-node table, the op-type summary and a Chrome trace.
#pragma once

#include <string>
#include <vector>

#include "onepool/session.h"

namespace onepool::cli {

/// Prints every node sorted by time (node, op, implementation, input shapes, ms per run, % of
/// the measured run, GFLOP/s where FLOPs are defined), then one line per op type.
/// `mean_run_ms`: the mean Session::run time the caller measured over the same runs.
void print_profile(const SessionProfile& profile, double mean_run_ms);

/// One profiled run's timeline: where each node started and how long it took.
struct ProfiledRun {
  double start_us = 0;  // from the first traced run's start
  std::vector<double> node_start_ms;
  std::vector<double> node_ms;
};

/// Writes Chrome trace events (chrome://tracing, Perfetto): one "X" event per node per run,
/// with the op, implementation, shapes and GFLOP/s as args. `profile` names the nodes.
Status write_chrome_trace(const std::string& path, const SessionProfile& profile,
                          const std::vector<ProfiledRun>& runs);

}  // namespace onepool::cli
