// Memory as the CLI shows it: one unit system (exact bytes plus a binary unit, never "MB"), and
// the process's peak resident set beside the pool and the weights, with the difference named.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

CommandResult cli(const ScratchDir& dir, const std::string& args) {
  const std::string binary = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(binary.empty());
  return run_command(shell_quote(binary) + " " + args, dir.file("out.txt"));
}

// Relu over x:[1,32]: x and y of 128 bytes, 256-aligned: a 512-byte pool and no weights.
std::string relu32(const ScratchDir& dir) {
  write_relu_model(dir.file("relu32.onnx"), {"1", "32"});
  return shell_quote(dir.file("relu32.onnx"));
}

// "peak RSS:  N B (X MiB), the most this process held (VmHWM): pool P + weights W + R of code
// and libraries, ...": N, parsed without its separators.
long long peak_rss_in(const std::string& output) {
  std::smatch match;
  const std::regex line(
      "peak RSS:  ([0-9,]+) B \\([0-9.]+ MiB\\), the most this process held "
      "\\(VmHWM\\): pool [^+]+ \\+ weights [^+]+ \\+ [0-9.]+ [KMG]iB of code");
  if (!std::regex_search(output, match, line)) return -1;
  std::string digits = match[1];
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  return std::stoll(digits);
}

}  // namespace

// run on a 512-byte pool: "pool 512 B" in the load and summary lines, no "MB" anywhere, and a
// peak RSS of more than 1 MiB explained as pool + weights + the rest.
TEST_CASE("memory: run shows bytes and the peak RSS") {
  ScratchDir dir("onepool_memory_run");
  const CommandResult result = cli(dir, "run " + relu32(dir));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  INFO(result.output);
  CHECK(
      result.output.find("memory:    pool 512 B | lower bound 512 B | naive 512 B | weights 0 B") !=
      std::string::npos);
  CHECK(result.output.find("summary:   pool 512 B | weights 0 B |") != std::string::npos);
  CHECK(result.output.find(" MB") == std::string::npos);
  CHECK(peak_rss_in(result.output) > (1 << 20));
}

// bench --streams 2: the summary counts both pools ("2 x 512 B"), and the report's
// peak_rss_bytes is the number the peak RSS line printed... within what the process grew in
// between (both read VmHWM, the report last): at least it, and more than pool + weights.
TEST_CASE("memory: bench reports the peak RSS") {
  ScratchDir dir("onepool_memory_bench");
  const CommandResult result = cli(dir, "bench " + relu32(dir) + " --iterations 20 --streams 2 " +
                                            "--report " + shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  INFO(result.output);
  CHECK(result.output.find("summary:   pool 2 x 512 B | weights 0 B") != std::string::npos);
  const long long printed = peak_rss_in(result.output);
  CHECK(printed > (1 << 20));
  const auto report = nlohmann::json::parse(read_text(dir.file("r.json")));
  CHECK(report["peak_rss_bytes"].get<long long>() >= printed);
  CHECK(report["pool_bytes"] == 512);
}

// plan and inspect speak the same units: the plan summary's pool line is "512 B" (no "0.00 MB"),
// and the MLP's initializers read "2,143,272 B (2.04 MiB)".
TEST_CASE("memory: plan and inspect use the same units") {
  ScratchDir dir("onepool_memory_plan");
  const CommandResult plan = cli(dir, "plan " + relu32(dir));
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.output);
  CHECK(std::regex_search(plan.output, std::regex("\npool: +512 B\n")));
  CHECK(plan.output.find("MB") == std::string::npos);
  const std::string models = env_or_empty("ONEPOOL_MODELS_DIR");
  REQUIRE_FALSE(models.empty());
  const CommandResult inspect = cli(dir, "inspect " + shell_quote(models + "/mlp.onnx"));
  REQUIRE_MESSAGE(inspect.exit_code == 0, inspect.output);
  CHECK(inspect.output.find("initializers: 6, 2,143,272 B (2.04 MiB)") != std::string::npos);
}

}  // namespace onepool::test
