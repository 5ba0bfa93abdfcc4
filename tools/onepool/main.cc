// onepool: the command line. One binary, one subcommand per task (see --help).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "onepool/version.h"
#include "runtime/cpu/blas_threads.h"
#include "tools/onepool/commands.h"

namespace {

// Levenshtein distance, for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// An unknown subcommand gets the closest known one (within 2 edits) and exit status 2.
bool report_unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::string given = argv[1];
  std::string best;
  size_t best_distance = 3;
  std::string known;
  for (const CLI::App* command : app.get_subcommands({})) {
    const std::string& name = command->get_name();
    if (name == given) return false;
    known += (known.empty() ? "" : ", ") + name;
    const size_t distance = edit_distance(given, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  std::fprintf(stderr, "onepool: unknown subcommand '%s'", given.c_str());
  if (!best.empty()) std::fprintf(stderr, "; did you mean '%s'?", best.c_str());
  std::fprintf(stderr, "\nsubcommands: %s (onepool --help)\n", known.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else runs: OpenBLAS's idle workers would spin on one of the cores for the
  // first tenth of a second (see blas_threads.h).
  onepool::cpu::use_single_threaded_blas();
  CLI::App app{"onepool: ONNX inference with one static memory pool"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("onepool ") + ONEPOOL_VERSION_STRING);
  int exit_code = 0;
  onepool::cli::register_inspect_command(app, exit_code);
  onepool::cli::register_plan_command(app, exit_code);
  onepool::cli::register_run_commands(app, exit_code);
  onepool::cli::register_conformance_command(app, exit_code);
  onepool::cli::register_serve_command(app, exit_code);
  if (report_unknown_subcommand(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return exit_code;
}
