// The `onepool` subcommands. Each register_* adds one subcommand to the app; when it runs, its
// callback stores the process exit status in `exit_code` (0 ok, 1 failure, 2 usage error).
#pragma once

#include <CLI/CLI.hpp>

namespace onepool::cli {

void register_inspect_command(CLI::App& app, int& exit_code);
void register_plan_command(CLI::App& app, int& exit_code);
void register_run_commands(CLI::App& app, int& exit_code);  // run, bench, compare
void register_conformance_command(CLI::App& app, int& exit_code);
void register_serve_command(CLI::App& app, int& exit_code);

}  // namespace onepool::cli
