// The CLI's front door: --version, and a mistyped subcommand answered with the closest one.
#include <doctest/doctest.h>

#include "tools/cli_run.h"

namespace onepool::test {

TEST_CASE("cli: --version prints the version and exits 0") {
  const std::string cli = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(cli.empty());
  ScratchDir dir("onepool_cli_basics");
  const CommandResult result = run_command(shell_quote(cli) + " --version", dir.file("out.txt"));
  CHECK(result.exit_code == 0);
  CHECK(result.output.rfind("onepool ", 0) == 0);
  CHECK(result.output.find_first_of("0123456789") != std::string::npos);
}

// "insepct" is two edits from "inspect": exit 2 with the suggestion and the list of commands.
TEST_CASE("cli: a mistyped subcommand gets a suggestion") {
  const std::string cli = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(cli.empty());
  ScratchDir dir("onepool_cli_basics");
  const CommandResult typo = run_command(shell_quote(cli) + " insepct m.onnx", dir.file("a.txt"));
  CHECK(typo.exit_code == 2);
  CHECK(typo.output.find("unknown subcommand 'insepct'; did you mean 'inspect'?") !=
        std::string::npos);
  const CommandResult far = run_command(shell_quote(cli) + " launch m.onnx", dir.file("b.txt"));
  CHECK(far.exit_code == 2);
  CHECK(far.output.find("unknown subcommand 'launch'") != std::string::npos);
  CHECK(far.output.find("did you mean") == std::string::npos);
  CHECK(far.output.find("subcommands: inspect, plan, run") != std::string::npos);
}

}  // namespace onepool::test
