// onepool: the command line. One binary, one subcommand per task (see --help).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "tools/onepool/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"onepool: ONNX inference with one static memory pool"};
  app.require_subcommand(1);
  int exit_code = 0;
  onepool::cli::register_inspect_command(app, exit_code);
  onepool::cli::register_plan_command(app, exit_code);
  onepool::cli::register_run_commands(app, exit_code);
  onepool::cli::register_conformance_command(app, exit_code);
  onepool::cli::register_serve_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return exit_code;
}
