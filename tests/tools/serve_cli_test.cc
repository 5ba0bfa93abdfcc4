// What `onepool serve` says at start-up about the CPU threads its Sessions run on: a pool each
// (and how many threads that makes busy at once) or one pool shared by all (--shared-threads).
// An unbindable host makes serve stop after loading, so the test needs no port.
#include <doctest/doctest.h>

#include <string>

#include "tools/cli_run.h"

namespace onepool::test {

namespace {

// `onepool serve mlp.onnx --sessions 3 --host 256.0.0.1 --port 0 FLAGS`
CommandResult serve(const ScratchDir& dir, const std::string& flags) {
  const std::string binary = env_or_empty("ONEPOOL_CLI");
  REQUIRE_MESSAGE(!binary.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
  const std::string mlp = env_or_empty("ONEPOOL_MODELS_DIR") + "/mlp.onnx";
  return run_command(shell_quote(binary) + " serve " + shell_quote(mlp) +
                         " --sessions 3 --host 256.0.0.1 --port 0 " + flags,
                     dir.file("out.txt"));
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("serve: start-up names the threads each Session runs on, shared or not") {
  const ScratchDir dir{"onepool_serve_cli"};
  const CommandResult own = serve(dir, "--dim batch=1 --threads 2");
  INFO(own.output);
  CHECK(own.exit_code != 0);  // 256.0.0.1 cannot be bound
  CHECK(has(own.output, "cannot bind 256.0.0.1"));
  CHECK(has(own.output, "threads:   2 per Session, up to 6 busy at once on "));

  const CommandResult shared = serve(dir, "--dim batch=1 --threads 2 --shared-threads");
  INFO(shared.output);
  CHECK(shared.exit_code != 0);
  CHECK(has(shared.output, "threads:   one shared pool of 2 threads for the 3 Sessions\n"));
}

// Ranges in --shapes: one DynamicSession per slot (the server test runs requests through them).
TEST_CASE("serve: --shapes with ranges starts DynamicSessions; plans files need fixed shapes") {
  const ScratchDir dir{"onepool_serve_cli"};
  const CommandResult ranged = serve(dir, "--shapes 'x:[1..8]x784' --threads 1 --mode dynamic");
  INFO(ranged.output);
  CHECK(ranged.exit_code != 0);  // 256.0.0.1 cannot be bound
  CHECK(has(ranged.output, "cannot bind 256.0.0.1"));
  CHECK(has(ranged.output, "profile:   x:[1..8]x784 (dynamic mode, 8 shapes cached per Session)"));
  CHECK(has(ranged.output, "3 DynamicSessions"));

  const CommandResult with_plan = serve(dir, "--shapes 'x:[1..8]x784' --load-plan plan.json");
  INFO(with_plan.output);
  CHECK(with_plan.exit_code != 0);
  CHECK(has(with_plan.output, "--load-plan / --save-plan need fixed --shapes"));

  const CommandResult bad_mode = serve(dir, "--shapes 'x:[1..8]x784' --mode elastic");
  CHECK(bad_mode.exit_code != 0);
  CHECK(has(bad_mode.output, "--mode"));
}

}  // namespace onepool::test
