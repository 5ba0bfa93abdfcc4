// `onepool bench MODEL --shapes RANGE --shapes-sweep FILE`: many shapes on one DynamicSession.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/dynamic_session.h"
#include "tools/onepool/cli_common.h"

namespace onepool::cli {

struct SweepFlags {
  std::string shapes_file;      ///< one concrete `--shapes` set per line ('#' comments)
  std::string mode = "static";  ///< static | dynamic
  size_t cache = 8;             ///< specializations kept
  int runs_per_shape = 1;       ///< timed runs of each line
  std::string report;           ///< optional JSON report
  /// Optional: line i (1-based) reads DIR/<i>/inputs/<input>.bin (raw, when present) and
  /// saves its outputs to DIR/<i>/onepool/ (--save-outputs layout), to compare with a peer.
  std::string io_dir;
};

/// Runs every line of the sweep file on one DynamicSession and prints per-shape and summary
/// lines (plan time, cache hits, pool bytes, growth events).
Status run_shape_sweep(const ModelFlags& model, const SweepFlags& sweep, uint64_t seed);

}  // namespace onepool::cli
