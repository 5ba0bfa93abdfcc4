// Plans that know what they belong to: `plan --format json` and `run --save-plan` record the
// model file's hash, the bound input shapes, the device and the planner options; `--load-plan`
// compares them with the current ones and names every field that differs before any offset is
// checked; a schema_version 1 file (no provenance) still loads, with a warning.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "planner/render/plan_provenance.h"
#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {
namespace {

struct ProvenanceCli {
  std::string binary = env_or_empty("ONEPOOL_CLI");
  std::string mlp = env_or_empty("ONEPOOL_MODELS_DIR") + "/mlp.onnx";
  ScratchDir dir{"onepool_plan_provenance"};

  CommandResult onepool(const std::string& arguments) const {
    REQUIRE_MESSAGE(!binary.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
    REQUIRE_MESSAGE(std::filesystem::exists(mlp), "generated model missing: ", mlp);
    return run_command(shell_quote(binary) + " " + arguments, dir.file("out.txt"));
  }
  // The mlp's plan at batch 1 with the default options, saved as JSON.
  std::string saved_plan() const {
    const std::string path = dir.file("mlp.json");
    const CommandResult result = onepool("plan " + shell_quote(mlp) +
                                         " --dim batch=1 --format json -o " + shell_quote(path));
    REQUIRE_MESSAGE(result.exit_code == 0, result.output);
    return path;
  }
};

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

// FNV-1a 64 reference values: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c.
TEST_CASE("hash_model_file is 64-bit FNV-1a of the bytes") {
  ScratchDir dir("onepool_fnv");
  write_text(dir.file("empty"), "");
  write_text(dir.file("a"), "a");
  CHECK(hash_model_file(dir.file("empty")).value() == "fnv1a64:cbf29ce484222325");
  CHECK(hash_model_file(dir.file("a")).value() == "fnv1a64:af63dc4c8601ec8c");
  CHECK(hash_model_file(dir.file("missing")).status().code() == StatusCode::kNotFound);
}

// The JSON of the mlp at batch 1: schema_version 2 and every provenance field.
TEST_CASE("plan --format json records the model, shapes, device and options") {
  const ProvenanceCli cli;
  const auto plan = nlohmann::json::parse(read_text(cli.saved_plan()));
  CHECK(plan["schema_version"] == 2);
  const auto& provenance = plan["provenance"];
  CHECK(provenance["model_path"] == cli.mlp);
  CHECK(provenance["model_hash"] == hash_model_file(cli.mlp).value());
  CHECK(std::regex_match(provenance["model_hash"].get<std::string>(),
                         std::regex("fnv1a64:[0-9a-f]{16}")));
  CHECK(provenance["input_shapes"] == "x:1x784");
  CHECK(provenance["device"] == "cpu");
  CHECK(provenance["algorithm"] == "auto");
  CHECK(provenance["alignment"] == 256);
  CHECK(provenance["aliasing"] == "on");
  CHECK(provenance["schedule"] == "model");
  CHECK(provenance["optimize"] == "all");
  CHECK(provenance["workspaces"] == "fit");
  CHECK_FALSE(provenance["onepool_version"].get<std::string>().empty());
}

// Batch 2 without aliasing against the batch-1 plan: exit 1, both fields named with the plan's
// and the current value, and no offset error (the check comes first). The same plan loads for a
// byte-identical copy of the model elsewhere (the path is not compared).
TEST_CASE("--load-plan names every field that differs") {
  const ProvenanceCli cli;
  const std::string plan = shell_quote(cli.saved_plan());
  const CommandResult wrong = cli.onepool("run " + shell_quote(cli.mlp) +
                                          " --dim batch=2 --aliasing off --load-plan " + plan);
  INFO(wrong.output);
  CHECK(wrong.exit_code == 1);
  CHECK(has(wrong.output, "was made for another model or other options (2 fields differ):"));
  CHECK(has(wrong.output, "\n  input_shapes: plan x:1x784, now x:2x784\n"));
  CHECK(has(wrong.output, "\n  aliasing: plan on, now off\n"));
  CHECK_FALSE(has(wrong.output, "exceeds the pool"));

  std::filesystem::copy_file(cli.mlp, cli.dir.file("copy.onnx"));
  const CommandResult copy = cli.onepool("run " + shell_quote(cli.dir.file("copy.onnx")) +
                                         " --dim batch=1 --load-plan " + plan);
  CHECK_MESSAGE(copy.exit_code == 0, copy.output);
}

// Another model (Relu over x:[1,784]: the same input shape) with the mlp's plan: only the
// model hash differs, and the message says which files the two hashes came from.
TEST_CASE("--load-plan refuses a plan made for another model") {
  const ProvenanceCli cli;
  const std::string plan = shell_quote(cli.saved_plan());
  write_relu_model(cli.dir.file("relu.onnx"), {"1", "784"});
  const CommandResult result =
      cli.onepool("run " + shell_quote(cli.dir.file("relu.onnx")) + " --load-plan " + plan);
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(has(result.output, "(1 field differs):\n  model_hash: plan fnv1a64:"));
  CHECK(has(result.output,
            "(plan made from '" + cli.mlp + "', now '" + cli.dir.file("relu.onnx") + "')"));
}

// serve checks a loaded plan the same way, before it binds a port: exit 1 with the field named.
TEST_CASE("serve --load-plan names every field that differs") {
  const ProvenanceCli cli;
  const std::string plan = shell_quote(cli.saved_plan());
  const CommandResult result =
      cli.onepool("serve " + shell_quote(cli.mlp) + " --dim batch=3 --port 0 --load-plan " + plan);
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(has(result.output, "(1 field differs):\n  input_shapes: plan x:1x784, now x:3x784\n"));
  CHECK_FALSE(has(result.output, "serving:"));
}

// run --save-plan records provenance too and loads back; a schema_version 1 file without
// provenance still loads, with a warning that it was not checked.
TEST_CASE("--save-plan round trip and schema_version 1 files") {
  const ProvenanceCli cli;
  const std::string saved = cli.dir.file("saved.json");
  const std::string model = shell_quote(cli.mlp) + " --dim batch=1";
  const CommandResult save = cli.onepool("run " + model + " --save-plan " + shell_quote(saved));
  REQUIRE_MESSAGE(save.exit_code == 0, save.output);
  auto document = nlohmann::json::parse(read_text(saved));
  CHECK(document["provenance"]["input_shapes"] == "x:1x784");
  const CommandResult load = cli.onepool("run " + model + " --load-plan " + shell_quote(saved));
  CHECK_MESSAGE(load.exit_code == 0, load.output);
  CHECK_FALSE(has(load.output, "warning"));

  document["schema_version"] = 1;
  document.erase("provenance");
  const std::string old_file = cli.dir.file("old.json");
  write_text(old_file, document.dump());
  const CommandResult old = cli.onepool("run " + model + " --load-plan " + shell_quote(old_file));
  CHECK_MESSAGE(old.exit_code == 0, old.output);
  CHECK(has(old.output, "warning: plan file '" + old_file +
                            "' records no model, shapes or options (an older plan file)"));
}

}  // namespace onepool::test
