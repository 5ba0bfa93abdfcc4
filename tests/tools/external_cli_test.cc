// `--external` on the CLI: plan shows the caller-buffer inputs and outputs as external (no pool
// bytes), run reports them and prints the same outputs, the plan JSON's provenance records
// them, and --load-plan names the difference when a saved plan was made without them.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/cli_run.h"

namespace onepool::test {
namespace {

struct ExternalCli {
  std::string binary = env_or_empty("ONEPOOL_CLI");
  std::string mlp = env_or_empty("ONEPOOL_MODELS_DIR") + "/mlp.onnx";
  ScratchDir dir{"onepool_external_cli"};

  CommandResult onepool(const std::string& arguments) const {
    REQUIRE_MESSAGE(!binary.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
    REQUIRE_MESSAGE(std::filesystem::exists(mlp), "generated model missing: ", mlp);
    return run_command(shell_quote(binary) + " " + arguments, dir.file("out.txt"));
  }
  std::string model() const { return shell_quote(mlp) + " --dim batch=4"; }
};

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("plan --external all: inputs and outputs outside the pool, in table and summary") {
  const ExternalCli cli;
  const CommandResult pooled = cli.onepool("plan " + cli.model() + " --table");
  const CommandResult external = cli.onepool("plan " + cli.model() + " --external all --table");
  INFO(external.output);
  REQUIRE(pooled.exit_code == 0);
  REQUIRE(external.exit_code == 0);
  CHECK(has(external.output, "x       input    float32  [4,784]      0  external"));
  CHECK(has(external.output, "probs   Softmax  float32  [4,10]       0  external"));
  CHECK(has(external.output,
            "external:    2 tensors in caller buffers, 12,704 B (12.41 KiB) outside the pool: x, "
            "probs"));
  CHECK(has(external.output, "pool:                  12,288 B"));
  CHECK_FALSE(has(pooled.output, "external"));

  const CommandResult json = cli.onepool("plan " + cli.model() + " --external x --format json");
  REQUIRE(json.exit_code == 0);
  const auto plan = nlohmann::json::parse(json.output);
  CHECK(plan["provenance"]["external"] == "x");
  bool x_external = false;
  for (const auto& tensor : plan["tensors"]) {
    if (tensor["name"] == "x") x_external = tensor.value("external", false);
    if (tensor["name"] == "probs") CHECK_FALSE(tensor.contains("external"));
  }
  CHECK(x_external);
}

TEST_CASE("run --external prints the same outputs and names the external tensors") {
  const ExternalCli cli;
  const CommandResult pooled = cli.onepool("run " + cli.model());
  const CommandResult external = cli.onepool("run " + cli.model() + " --external inputs,outputs");
  INFO(external.output);
  REQUIRE(pooled.exit_code == 0);
  REQUIRE(external.exit_code == 0);
  CHECK(has(external.output, "external:  2 tensors in caller buffers"));
  const auto output_line = [](const std::string& text) {
    const size_t start = text.find("output probs");
    return text.substr(start, text.find('\n', start) - start);
  };
  CHECK(output_line(external.output) == output_line(pooled.output));
}

TEST_CASE("--external errors: an intermediate, an empty item, a records file") {
  const ExternalCli cli;
  const CommandResult intermediate = cli.onepool("run " + cli.model() + " --external relu");
  CHECK(intermediate.exit_code == 1);
  CHECK(has(intermediate.output,
            "external tensor 'relu' is not a graph input or output of the model as loaded; "
            "those are: x, probs"));
  const CommandResult empty = cli.onepool("plan " + cli.model() + " --external x,,probs");
  CHECK(empty.exit_code != 0);
  CHECK(has(empty.output, "--external 'x,,probs': empty name"));
  write_text(cli.dir.file("records.csv"), "id,lower,upper,size\n0,0,2,256\n");
  const CommandResult records =
      cli.onepool("plan --records " + shell_quote(cli.dir.file("records.csv")) + " --external x");
  CHECK(records.exit_code != 0);
  CHECK(has(records.output, "--external needs a model"));
}

TEST_CASE("--load-plan names external as a differing field") {
  const ExternalCli cli;
  const std::string saved = cli.dir.file("pooled.json");
  REQUIRE(cli.onepool("run " + cli.model() + " --save-plan " + shell_quote(saved)).exit_code == 0);
  const CommandResult result =
      cli.onepool("run " + cli.model() + " --external all --load-plan " + shell_quote(saved));
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(has(result.output, "(1 field differs):\n  external: plan none, now x,probs"));
  const std::string external_plan = cli.dir.file("external.json");
  REQUIRE(cli.onepool("run " + cli.model() + " --external all --save-plan " +
                      shell_quote(external_plan))
              .exit_code == 0);
  const CommandResult loaded = cli.onepool("run " + cli.model() + " --external all --load-plan " +
                                           shell_quote(external_plan));
  CHECK_MESSAGE(loaded.exit_code == 0, loaded.output);
  CHECK(has(loaded.output, "external:  2 tensors in caller buffers"));
}

}  // namespace onepool::test
