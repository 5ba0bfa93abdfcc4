// `onepool bench MODEL`: latency percentiles and throughput of repeated runs.
#pragma once

#include <CLI/CLI.hpp>

namespace onepool::cli {

/// Adds the bench subcommand; its callback stores the exit status in `exit_code`.
void register_bench_command(CLI::App& app, int& exit_code);

}  // namespace onepool::cli
