// `onepool run` through the binary: one latency for one run (no percentiles of one sample),
// min / mean / max for several, and bad numbers rejected before loading.
#include <doctest/doctest.h>

#include <regex>

#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

CommandResult run_cli(const ScratchDir& dir, const std::string& args) {
  const std::string cli = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(cli.empty());
  return run_command(shell_quote(cli) + " run " + args, dir.file("out.txt"));
}

std::string relu_model(const ScratchDir& dir) {
  write_relu_model(dir.file("relu.onnx"), {"1", "4"});
  return shell_quote(dir.file("relu.onnx"));
}

}  // namespace

// The default single run prints one latency, "latency:   <number> <unit> (1 run, the first
// after loading; ...)", and none of p50, p99, throughput, or a min on the latency line.
TEST_CASE("run: one run, one latency") {
  ScratchDir dir("onepool_run_latency");
  const CommandResult result = run_cli(dir, relu_model(dir));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  INFO(result.output);
  CHECK(std::regex_search(result.output,
                          std::regex("\nlatency:   [0-9.]+ (ns|µs|ms|s) \\(1 run, the first")));
  CHECK(result.output.find("p50") == std::string::npos);
  CHECK(result.output.find("p99") == std::string::npos);
  CHECK(result.output.find("throughput") == std::string::npos);
  CHECK_FALSE(std::regex_search(result.output, std::regex("\nlatency[^\n]*min ")));
}

// --iterations 5 --warmup 2: min, mean and max over the 5 timed runs, still no percentiles.
TEST_CASE("run: several runs give min, mean and max") {
  ScratchDir dir("onepool_run_latency");
  const CommandResult result = run_cli(dir, relu_model(dir) + " --iterations 5 --warmup 2");
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  INFO(result.output);
  CHECK(std::regex_search(result.output,
                          std::regex("\nlatency:   min [0-9.]+ \\S+ \\| mean [0-9.]+ \\S+ \\| max "
                                     "[0-9.]+ \\S+ \\(5 runs after 2 warm-up runs")));
  CHECK(result.output.find("p50") == std::string::npos);
}

// --iterations 0, --warmup -1 and --threads -1 are usage errors (exit 2) before the model is
// opened (the path does not exist).
TEST_CASE("run: bad numbers are usage errors before loading") {
  ScratchDir dir("onepool_run_flags");
  const std::pair<const char*, const char*> cases[] = {
      {"--iterations 0", "--iterations must be at least 1, got 0"},
      {"--warmup -1", "--warmup must be at least 0, got -1"},
      {"--threads -1", "--threads must be at least 0, got -1"},
  };
  for (const auto& [flags, expected] : cases) {
    const std::string flag_text = flags;
    CAPTURE(flag_text);
    const CommandResult result = run_cli(dir, "/no/such/model.onnx " + std::string(flags));
    CHECK(result.exit_code == 2);
    CHECK_MESSAGE(result.output.find(expected) != std::string::npos, result.output);
    CHECK(result.output.find("model:") == std::string::npos);
  }
}

// --cpu-isa portable runs the model on the portable micro-kernels; a name outside the choices is
// a usage error naming them.
TEST_CASE("run: --cpu-isa chooses the kernels' instruction set") {
  ScratchDir dir("onepool_run_cpu_isa");
  const CommandResult portable = run_cli(dir, relu_model(dir) + " --cpu-isa portable");
  CHECK_MESSAGE(portable.exit_code == 0, portable.output);
  const CommandResult bad = run_cli(dir, relu_model(dir) + " --cpu-isa sse9");
  CHECK(bad.exit_code == 2);
  CHECK_MESSAGE(bad.output.find("--cpu-isa") != std::string::npos, bad.output);
  CHECK_MESSAGE(bad.output.find("avx2") != std::string::npos, bad.output);
}

}  // namespace onepool::test
