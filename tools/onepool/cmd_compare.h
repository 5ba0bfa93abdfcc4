// `onepool compare MODEL --ref reference|cpu|cuda:N|DIR`: the model's outputs (and with
// --layerwise every intermediate) checked against a reference run or saved outputs.
#pragma once

#include <CLI/CLI.hpp>

namespace onepool::cli {

/// Exit status of compare when the outputs differ (or hold NaN/Inf with --validate).
constexpr int kExitMismatch = 1;
/// Exit status of compare when a run could not happen (load, session or run error).
constexpr int kExitCouldNotRun = 3;

/// Adds the compare subcommand; its callback stores the exit status in `exit_code`:
/// 0 match, 1 mismatch, 2 usage error, 3 could not run.
void register_compare_command(CLI::App& app, int& exit_code);

}  // namespace onepool::cli
