// `--inputs x:file.npy` binds x's shape from the file's header: no `--shapes` needed for it, and
// a `--shapes` entry that disagrees is an error naming both shapes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tools/cli_run.h"
#include "tools/npy_files.h"

namespace onepool::test {

namespace {

CommandResult cli(const ScratchDir& dir, const std::string& args) {
  const std::string binary = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(binary.empty());
  return run_command(shell_quote(binary) + " " + args, dir.file("out.txt"));
}

// The generated MLP (x: [batch, 784] -> probs: [batch, 10]), quoted for the shell.
std::string mlp_model() {
  const std::string models = env_or_empty("ONEPOOL_MODELS_DIR");
  REQUIRE_FALSE(models.empty());
  return shell_quote(models + "/mlp.onnx");
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

// A [3,784] file binds batch = 3 without --shapes: the run says where the shape came from and
// the output is [3,10]. (Before, the unbound 'batch' was an error asking for --shapes.)
TEST_CASE("npy inputs: the file's header binds the shape") {
  ScratchDir dir("onepool_npy_inputs");
  write_npy_f32(dir.file("x.npy"), {3, 784});
  const CommandResult result =
      cli(dir, "run " + mlp_model() + " --inputs x:" + shell_quote(dir.file("x.npy")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(has(result.output, "note:      shape of 'x' from "));
  CHECK(has(result.output, "shapes:    x:3x784"));
  CHECK(has(result.output, "[3,10]"));
}

// --shapes x:2x784 against a [3,784] file: exit 1 naming the input, both shapes and the file,
// before anything is loaded; an equal --shapes entry is fine.
TEST_CASE("npy inputs: a conflicting --shapes names both shapes") {
  ScratchDir dir("onepool_npy_inputs");
  write_npy_f32(dir.file("x.npy"), {3, 784});
  const std::string inputs = " --inputs x:" + shell_quote(dir.file("x.npy"));
  const CommandResult conflict = cli(dir, "run " + mlp_model() + " --shapes x:2x784" + inputs);
  CHECK(conflict.exit_code == 1);
  CHECK_MESSAGE(has(conflict.output, "input 'x': --shapes gives [2,784] but '"), conflict.output);
  CHECK(has(conflict.output, "x.npy' holds [3,784]"));
  CHECK_FALSE(has(conflict.output, "model:"));
  const CommandResult same = cli(dir, "run " + mlp_model() + " --shapes x:3x784" + inputs);
  CHECK_MESSAGE(same.exit_code == 0, same.output);
}

// bench binds the same way: its report's input_shapes is {"x": [3, 784]}.
TEST_CASE("npy inputs: bench binds the shape too") {
  ScratchDir dir("onepool_npy_inputs");
  write_npy_f32(dir.file("x.npy"), {3, 784});
  const CommandResult result = cli(
      dir, "bench " + mlp_model() + " --iterations 3 --inputs x:" + shell_quote(dir.file("x.npy")) +
               " --report " + shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const auto report = nlohmann::json::parse(read_text(dir.file("r.json")));
  CHECK(report["input_shapes"] == nlohmann::json::parse(R"({"x": [3, 784]})"));
}

}  // namespace onepool::test
